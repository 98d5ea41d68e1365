// The distance kernels of nearest: one implementation for every backend.
//
// Sums run over float32 in a fixed order, so a distance is bit for bit the
// same in the native build, in wasm with SIMD and in wasm without: eight
// running sums (lane j takes the elements i with i % 8 == j, up to the last
// multiple of 8), folded as s[j] + s[j + 4] for j < 4, then
// (s0 + s1) + (s2 + s3), then the remaining elements added one by one in
// order. Products and sums are separate IEEE operations (no fused
// multiply-add: distance.cc is built with -ffp-contract=off). The wasm build
// compiles distance.cc with -msimd128 and uses two f32x4 sums, which is the
// same order. The final formula is in double. docs/guide.md, "Search by
// meaning", gives the definitions:
//   cosine  1 - dot(q, v) / (|q| |v|), clamped to [0, 2]; 1 when q or v is all zeros
//   l2      the Euclidean distance sqrt(sum (q_i - v_i)^2)
//   dot     -dot(q, v), so that the nearest has the largest dot product
#ifndef ONESTORE_VECTORS_DISTANCE_H_
#define ONESTORE_VECTORS_DISTANCE_H_

#include <cstddef>
#include <string_view>

namespace onestore {

enum class Metric { kCosine, kL2, kDot };

// Parses "cosine" | "l2" | "dot"; false if unknown.
bool ParseMetric(std::string_view name, Metric* out);
const char* MetricName(Metric m);

// The sums over n float32 at `a` and `b` (4n bytes each, little-endian, any
// alignment), in the order above.
float DotSum(const char* a, const char* b, size_t n);
float SquaredDiffSum(const char* a, const char* b, size_t n);

// A query prepared once: its bytes and its own dot product (for cosine).
struct QueryVector {
  const char* bytes = nullptr;
  size_t n = 0;
  float self_dot = 0;
};

// The distance of `v` (n float32) from the query under `m`. Not finite when
// a float32 sum overflowed (elements beyond about 1e19): nearest leaves such
// a row out.
double Distance(Metric m, const QueryVector& q, const char* v);

// Whether this build scores with wasm SIMD (bench and docs report it).
bool DistanceUsesSimd();

}  // namespace onestore

#endif  // ONESTORE_VECTORS_DISTANCE_H_
