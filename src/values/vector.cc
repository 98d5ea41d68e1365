#include "values/vector.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace onestore {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The value of each base64 character, or -1.
struct Base64Table {
  int8_t v[256];
  Base64Table() {
    for (int i = 0; i < 256; ++i) v[i] = -1;
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
};

const Base64Table& Table() {
  static const Base64Table t;
  return t;
}

void PutFloat(float f, std::string* out) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  out->push_back(static_cast<char>(u & 0xFF));
  out->push_back(static_cast<char>((u >> 8) & 0xFF));
  out->push_back(static_cast<char>((u >> 16) & 0xFF));
  out->push_back(static_cast<char>(u >> 24));
}

std::string Shown(const Json& j) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    return "\"" + s.substr(0, 40) + (s.size() > 40 ? "...\"" : "\"");
  }
  return DescribeJson(j);
}

// The first element that is not finite, or -1.
long FirstNonFinite(const std::string& bytes) {
  const size_t n = bytes.size() / 4;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(VectorElement(bytes, i))) return static_cast<long>(i);
  }
  return -1;
}

std::string FloatText(float f) {
  if (std::isnan(f)) return "NaN";
  return f < 0 ? "-Infinity" : "Infinity";
}

}  // namespace

static uint64_t base64_growth_bytes = 0;

uint64_t Base64GrowthBytes() { return base64_growth_bytes; }

void AppendBase64(std::string_view bytes, std::string* out) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  // Room for the text, grown geometrically: `out` is often a whole outbox
  // record that grows by one vector per put, and an exact reserve here
  // reallocated (copied) the record for each one, so a transaction's commit
  // cost grew with the square of its vector puts (issue 15). The text is
  // then written in place (a push_back per character was a fifth of a
  // vector put's time).
  const size_t start = out->size();
  const size_t need = start + (n + 2) / 3 * 4;
  const size_t had = out->capacity();
  if (need > had) out->reserve(std::max(need, 2 * had));
  out->resize(need);
  if (out->capacity() != had) base64_growth_bytes += start;  // moved to grow
  char* w = &(*out)[start];
  size_t i = 0;
  for (; i + 3 <= n; i += 3, w += 4) {
    const uint32_t x = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    w[0] = kAlphabet[x >> 18];
    w[1] = kAlphabet[(x >> 12) & 63];
    w[2] = kAlphabet[(x >> 6) & 63];
    w[3] = kAlphabet[x & 63];
  }
  if (n - i == 1) {
    const uint32_t x = p[i] << 16;
    w[0] = kAlphabet[x >> 18];
    w[1] = kAlphabet[(x >> 12) & 63];
    w[2] = '=';
    w[3] = '=';
  } else if (n - i == 2) {
    const uint32_t x = (p[i] << 16) | (p[i + 1] << 8);
    w[0] = kAlphabet[x >> 18];
    w[1] = kAlphabet[(x >> 12) & 63];
    w[2] = kAlphabet[(x >> 6) & 63];
    w[3] = '=';
  }
}

bool DecodeBase64(std::string_view text, std::string* out) {
  out->clear();
  if (text.size() % 4 != 0) return false;
  const Base64Table& t = Table();
  out->resize(text.size() / 4 * 3);
  char* w = out->data();
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const unsigned char c = static_cast<unsigned char>(text[i + k]);
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return false;  // a character after "="
      v[k] = t.v[c];
      if (v[k] < 0) return false;
    }
    const uint32_t x = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    *w++ = static_cast<char>(x >> 16);
    if (pad < 2) *w++ = static_cast<char>((x >> 8) & 0xFF);
    if (pad < 1) *w++ = static_cast<char>(x & 0xFF);
    // Canonical form only: the bits a padded group leaves over are zero.
    if ((pad == 1 && (v[2] & 3) != 0) || (pad == 2 && (v[1] & 15) != 0)) return false;
  }
  out->resize(static_cast<size_t>(w - out->data()));
  return true;
}

bool VectorFromBase64(std::string_view text, int dims, Value* out) {
  std::string bytes;
  if (!DecodeBase64(text, &bytes) || bytes.size() != 4 * static_cast<size_t>(dims) ||
      FirstNonFinite(bytes) >= 0) {
    return false;
  }
  *out = Value::Vector(std::move(bytes));
  return true;
}

Status ParseVectorJson(const Json& j, int dims, const std::string& where, Value* out) {
  const std::string want = "a vector of " + std::to_string(dims) + " float32";
  if (j.is_string()) {
    std::string bytes;
    if (!DecodeBase64(j.get_ref<const std::string&>(), &bytes)) {
      return Status::InvalidArgs(where + ": " + Shown(j) + " is not " + want +
                                 " (give a Float32Array, an array of numbers, or the base64 of "
                                 "the little-endian float32 bytes)");
    }
    if (bytes.size() != 4 * static_cast<size_t>(dims)) {
      return Status::InvalidArgs(where + ": " + Shown(j) + " holds " +
                                 (bytes.size() % 4 ? std::to_string(bytes.size()) + " bytes"
                                                   : std::to_string(bytes.size() / 4) + " float32") +
                                 ", the column is " + want);
    }
    const long bad = FirstNonFinite(bytes);
    if (bad >= 0) {
      return Status::InvalidArgs(where + "[" + std::to_string(bad) + "]: " +
                                 FloatText(VectorElement(bytes, bad)) + " is not a finite number (" +
                                 want + ")");
    }
    *out = Value::Vector(std::move(bytes));
    return Status::OK();
  }
  if (!j.is_array()) {
    return Status::InvalidArgs(where + ": " + Shown(j) + " is not " + want +
                               " (give a Float32Array or an array of numbers)");
  }
  if (j.size() != static_cast<size_t>(dims)) {
    return Status::InvalidArgs(where + ": " + Shown(j) + " has " + std::to_string(j.size()) +
                               " elements, the column is " + want);
  }
  std::string bytes;
  bytes.reserve(4 * j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& e = j[i];
    const std::string w = where + "[" + std::to_string(i) + "]";
    if (!e.is_number()) return Status::InvalidArgs(w + ": " + DescribeJson(e) + " is not a number");
    const double d = e.get<double>();
    const float f = static_cast<float>(d);
    if (!std::isfinite(d) || !std::isfinite(f)) {
      return Status::InvalidArgs(w + ": " + DescribeJson(e) + " is not a finite float32");
    }
    PutFloat(f, &bytes);
  }
  *out = Value::Vector(std::move(bytes));
  return Status::OK();
}

}  // namespace onestore
