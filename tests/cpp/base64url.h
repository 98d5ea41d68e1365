// Base64url without padding (RFC 4648, section 5), as the store writes page
// cursors: the tests' own encoder and decoder, written apart from the
// store's (src/query/query.cc) so that a test reads a cursor the way a
// client would. Used by the cursor and store tests and the query fuzzer.
#ifndef ONESTORE_TESTS_CPP_BASE64URL_H_
#define ONESTORE_TESTS_CPP_BASE64URL_H_

#include <cstdint>
#include <string>

namespace onestore {
namespace test {

// `in` as base64url, without padding.
inline std::string ToBase64Url(const std::string& in) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 63]);
  return out;
}

// The bytes of base64url text (without padding) into *out; false when `in`
// holds a character outside the alphabet (*out then holds the bytes before
// it).
inline bool FromBase64Url(const std::string& in, std::string* out) {
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = c >= 'A' && c <= 'Z'   ? c - 'A'
                  : c >= 'a' && c <= 'z' ? c - 'a' + 26
                  : c >= '0' && c <= '9' ? c - '0' + 52
                  : c == '-'             ? 62
                  : c == '_'             ? 63
                                         : -1;
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

}  // namespace test
}  // namespace onestore

#endif  // ONESTORE_TESTS_CPP_BASE64URL_H_
