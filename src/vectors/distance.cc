#include "vectors/distance.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace onestore {

namespace {

inline float Load(const char* p, size_t i) {
  // Little-endian hosts only (x86, ARM, wasm); the bytes are little-endian.
  float f;
  std::memcpy(&f, p + 4 * i, 4);
  return f;
}

// Folds the eight lane sums, then adds the tail: the one order of every build.
inline float Fold(const float s[8]) {
  const float t0 = s[0] + s[4], t1 = s[1] + s[5], t2 = s[2] + s[6], t3 = s[3] + s[7];
  return (t0 + t1) + (t2 + t3);
}

}  // namespace

bool ParseMetric(std::string_view name, Metric* out) {
  if (name == "cosine") {
    *out = Metric::kCosine;
  } else if (name == "l2") {
    *out = Metric::kL2;
  } else if (name == "dot") {
    *out = Metric::kDot;
  } else {
    return false;
  }
  return true;
}

const char* MetricName(Metric m) {
  switch (m) {
    case Metric::kCosine:
      return "cosine";
    case Metric::kL2:
      return "l2";
    case Metric::kDot:
      return "dot";
  }
  return "?";
}

#if defined(__wasm_simd128__)

bool DistanceUsesSimd() { return true; }

float DotSum(const char* a, const char* b, size_t n) {
  const size_t n8 = n - n % 8;
  v128_t lo = wasm_f32x4_splat(0), hi = wasm_f32x4_splat(0);
  for (size_t i = 0; i < n8; i += 8) {
    lo = wasm_f32x4_add(lo, wasm_f32x4_mul(wasm_v128_load(a + 4 * i), wasm_v128_load(b + 4 * i)));
    hi = wasm_f32x4_add(
        hi, wasm_f32x4_mul(wasm_v128_load(a + 4 * i + 16), wasm_v128_load(b + 4 * i + 16)));
  }
  float s[8];
  wasm_v128_store(s, lo);
  wasm_v128_store(s + 4, hi);
  float sum = Fold(s);
  for (size_t i = n8; i < n; ++i) sum += Load(a, i) * Load(b, i);
  return sum;
}

float SquaredDiffSum(const char* a, const char* b, size_t n) {
  const size_t n8 = n - n % 8;
  v128_t lo = wasm_f32x4_splat(0), hi = wasm_f32x4_splat(0);
  for (size_t i = 0; i < n8; i += 8) {
    const v128_t d0 = wasm_f32x4_sub(wasm_v128_load(a + 4 * i), wasm_v128_load(b + 4 * i));
    const v128_t d1 =
        wasm_f32x4_sub(wasm_v128_load(a + 4 * i + 16), wasm_v128_load(b + 4 * i + 16));
    lo = wasm_f32x4_add(lo, wasm_f32x4_mul(d0, d0));
    hi = wasm_f32x4_add(hi, wasm_f32x4_mul(d1, d1));
  }
  float s[8];
  wasm_v128_store(s, lo);
  wasm_v128_store(s + 4, hi);
  float sum = Fold(s);
  for (size_t i = n8; i < n; ++i) {
    const float d = Load(a, i) - Load(b, i);
    sum += d * d;
  }
  return sum;
}

#else

bool DistanceUsesSimd() { return false; }

float DotSum(const char* a, const char* b, size_t n) {
  const size_t n8 = n - n % 8;
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < n8; i += 8) {
    for (size_t j = 0; j < 8; ++j) s[j] += Load(a, i + j) * Load(b, i + j);
  }
  float sum = Fold(s);
  for (size_t i = n8; i < n; ++i) sum += Load(a, i) * Load(b, i);
  return sum;
}

float SquaredDiffSum(const char* a, const char* b, size_t n) {
  const size_t n8 = n - n % 8;
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < n8; i += 8) {
    for (size_t j = 0; j < 8; ++j) {
      const float d = Load(a, i + j) - Load(b, i + j);
      s[j] += d * d;
    }
  }
  float sum = Fold(s);
  for (size_t i = n8; i < n; ++i) {
    const float d = Load(a, i) - Load(b, i);
    sum += d * d;
  }
  return sum;
}

#endif

double Distance(Metric m, const QueryVector& q, const char* v) {
  switch (m) {
    case Metric::kDot:
      return 0.0 - static_cast<double>(DotSum(q.bytes, v, q.n));  // +0, never -0, for a zero dot
    case Metric::kL2:
      return std::sqrt(static_cast<double>(SquaredDiffSum(q.bytes, v, q.n)));
    case Metric::kCosine: {
      const float dot = DotSum(q.bytes, v, q.n);
      const float vv = DotSum(v, v, q.n);
      if (!std::isfinite(dot) || !std::isfinite(vv) || !std::isfinite(q.self_dot)) return NAN;
      if (q.self_dot == 0 || vv == 0) return 1.0;
      const double c = static_cast<double>(dot) /
                       (std::sqrt(static_cast<double>(q.self_dot)) * std::sqrt(static_cast<double>(vv)));
      const double d = 1.0 - c;
      return d < 0 ? 0 : (d > 2 ? 2 : d);
    }
  }
  return NAN;
}

}  // namespace onestore
