// Vector values: float32 x n, kept as their 4n little-endian bytes.
//
// A vector crosses the wire (outbox records, batches, archives, rows for JS)
// as the base64 (RFC 4648, with padding) of those bytes in a JSON string, so
// it round-trips bit for bit; a write may also give it as an array of
// numbers, each rounded to the nearest float32. Every element must be finite
// (no NaN, no +-Infinity, no number beyond float32's range). docs/formats.md,
// "Vectors", says the same; js/vectors.js is the JS twin of the base64 form.
#ifndef ONESTORE_VALUES_VECTOR_H_
#define ONESTORE_VALUES_VECTOR_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "onestore/status.h"
#include "values/value.h"

namespace onestore {

// The most elements a vector column may declare (64 KB of floats a value).
constexpr int kMaxVectorDims = 16384;

// Appends the base64 of `bytes` (standard alphabet, "=" padding).
void AppendBase64(std::string_view bytes, std::string* out);
// The bytes AppendBase64 has moved, since the process started, when `out`
// had no room left (the text already in it, at each growth). With geometric
// growth a commit's record moves about its own size in all; a test
// (tests/js/vector-puts.test.js) checks it per put, in the wasm build, whose
// libc++ reserves exactly what is asked (libstdc++ doubles anyway).
uint64_t Base64GrowthBytes();
// Decodes strict base64 (standard alphabet, padded, no spaces) into *out;
// false on anything else.
bool DecodeBase64(std::string_view text, std::string* out);

// Element i of a vector's bytes (little-endian float32).
inline float VectorElement(const std::string& bytes, size_t i) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes.data()) + 4 * i;
  uint32_t u = static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
               (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A vector Value from wire JSON: a base64 string of exactly 4 * dims bytes,
// or an array of exactly `dims` numbers. Fails with invalid/args naming
// `where` and the value: not a string or array, bad base64, the wrong
// length, an element that is not a number, NaN, +-Infinity or beyond
// float32's range.
Status ParseVectorJson(const Json& j, int dims, const std::string& where, Value* out);

// The same for the base64 text alone (the fast put reader): false where
// ParseVectorJson would fail.
bool VectorFromBase64(std::string_view text, int dims, Value* out);

}  // namespace onestore

#endif  // ONESTORE_VALUES_VECTOR_H_
