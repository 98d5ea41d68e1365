// strtod for the wasm core, in place of musl's (issue 13, the download, step
// four).
//
// musl's strtod is exact, and gets there with long double arithmetic, which
// wasm32 has only as 128-bit soft float: with it came compiler-rt's
// __divtf3, __multf3, __addtf3 and their conversions, fmodl and scalbnl,
// about 7.7 KB of code (14.4 KB with strtod itself) for a function the core
// calls only to read a number's text (nlohmann's lexer, the fast put reader,
// a REAL column's text cell). A definition in an object file wins over
// libc's at link time, as with wasm/strftime.cc.
//
// This one is exact too. A decimal with at most 19 significant digits whose
// value is below 2^53 and whose power of ten is at most 22 either way is
// one IEEE multiplication or division of two exact doubles (Clinger's fast
// path): the numbers apps write (0.5, 12.75, 1e-3, 0.8444218515250481) are
// read here. Any other decimal goes to the engine's own Number() (the
// JavaScript grammar's StrDecimalLiteral reads the same digits, point and
// exponent, and rounds to nearest, ties to even, as C requires): one call
// into JS, no slower than musl's soft-float path was. The syntax is C's:
// leading white space, a sign, inf, infinity and nan (with an optional
// "(chars)"), case-insensitively, and hexadecimal floats, rounded here.
#include <emscripten/em_js.h>
#include <emscripten/em_macros.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

// The text's n bytes (ASCII: sign, digits, point, exponent) as JS reads a
// number: Number(text).
EM_JS(double, onestore_js_number, (const char* p, size_t n), {
  var s = "";
  for (var i = p; i < p + n; i++) s += String.fromCharCode(HEAPU8[i]);
  return Number(s);
});

namespace {

bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// True when s starts with `word` (lowercase), ignoring case.
bool StartsWith(const char* s, const char* word) {
  for (; *word != '\0'; ++s, ++word) {
    if (Lower(*s) != *word) return false;
  }
  return true;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = Lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Reads a (signed) decimal exponent's digits at *s, saturating far beyond
// any double's range. False (and *s unmoved) when no digit follows.
bool ReadExponent(const char** s, long* out) {
  const char* p = *s;
  bool negative = false;
  if (*p == '+' || *p == '-') negative = *p++ == '-';
  if (*p < '0' || *p > '9') return false;
  long e = 0;
  for (; *p >= '0' && *p <= '9'; ++p) {
    if (e < 100000000) e = e * 10 + (*p - '0');
  }
  *out = negative ? -e : e;
  *s = p;
  return true;
}

// A hexadecimal float's digits after "0x": the first 64 significant bits,
// the rest as a sticky bit, rounded once to the double's precision (fewer
// bits for a subnormal). Sets *end past what it read (after the "0" of
// "0x" when no hex digit follows).
double ReadHex(const char* s, const char** end) {
  uint64_t m = 0;
  long exp2 = 0;  // value = m * 2^exp2 (before the sticky bit)
  bool sticky = false, any = false, point = false;
  const char* p = s;
  for (;; ++p) {
    if (*p == '.' && !point) {
      point = true;
      continue;
    }
    int d = HexDigit(*p);
    if (d < 0) break;
    any = true;
    if (m >> 60 == 0) {
      m = m << 4 | static_cast<uint64_t>(d);
      if (point) exp2 -= 4;
    } else {
      sticky |= d != 0;
      if (!point) exp2 += 4;
    }
  }
  if (!any) {
    *end = s - 1;  // the "0" before the x
    return 0;
  }
  long e = 0;
  const char* after = p;
  if (Lower(*p) == 'p') {
    const char* q = p + 1;
    if (ReadExponent(&q, &e)) after = q;
  }
  *end = after;
  if (m == 0) return 0;
  e += exp2;
  // Normalize: the top bit of m at bit 63.
  while (m >> 63 == 0) {
    m <<= 1;
    --e;
  }
  const long lead = e + 63;  // the exponent of the leading bit
  if (lead > 1023) {
    errno = ERANGE;
    return HUGE_VAL;
  }
  int bits = 53;  // the precision left at this exponent
  if (lead < -1022) bits -= static_cast<int>(-1022 - lead);
  if (bits <= 0) {
    // Below half the smallest subnormal, or exactly half of it (a tie rounds
    // to the even 0), rounds to 0; above it, to the smallest subnormal.
    errno = ERANGE;
    const bool above_half = bits == 0 && (m << 1 != 0 || sticky);
    return above_half ? ldexp(1.0, -1074) : 0.0;
  }
  const int shift = 64 - bits;
  uint64_t keep = m >> shift;
  const uint64_t rest = m & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (sticky || (keep & 1) != 0))) ++keep;
  const double value = ldexp(static_cast<double>(keep), static_cast<int>(e + shift));
  if (isinf(value) || bits < 53) errno = ERANGE;
  return value;
}

const double kPow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                           1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

}  // namespace

// As the C library's: the double nearest the text at s (ties to even), with
// *end (when given) past what was read, or at s when no number starts there.
// errno is ERANGE when the result overflowed or underflowed.
extern "C" double strtod(const char* s, char** end) {
  const char* p = s;
  while (IsSpace(*p)) ++p;
  const char* start = p;  // the sign, for the JS reader
  bool negative = false;
  if (*p == '+' || *p == '-') negative = *p++ == '-';
  double value;
  const char* stop;
  if (StartsWith(p, "inf")) {
    stop = p + (StartsWith(p, "infinity") ? 8 : 3);
    value = HUGE_VAL;
  } else if (StartsWith(p, "nan")) {
    stop = p + 3;
    if (*stop == '(') {
      const char* q = stop + 1;
      while ((*q >= '0' && *q <= '9') || (Lower(*q) >= 'a' && Lower(*q) <= 'z') || *q == '_') ++q;
      if (*q == ')') stop = q + 1;
    }
    value = NAN;
  } else if (*p == '0' && Lower(p[1]) == 'x') {
    value = ReadHex(p + 2, &stop);
  } else {
    // Decimal: the significant digits (at most 19 kept) and the power of ten.
    uint64_t w = 0;
    int kept = 0;
    bool more = false, any = false, point = false;
    long exp10 = 0;
    for (;; ++p) {
      if (*p == '.' && !point) {
        point = true;
        continue;
      }
      if (*p < '0' || *p > '9') break;
      any = true;
      if (w == 0 && *p == '0') {
        if (point) --exp10;  // a leading zero after the point
        continue;
      }
      if (kept < 19) {
        w = w * 10 + static_cast<uint64_t>(*p - '0');
        ++kept;
        if (point) --exp10;
      } else {
        more = true;
        if (!point) ++exp10;
      }
    }
    if (!any) {
      if (end != nullptr) *end = const_cast<char*>(s);
      return 0;
    }
    if (Lower(*p) == 'e') {
      const char* q = p + 1;
      long e;
      if (ReadExponent(&q, &e)) {
        p = q;
        exp10 += e;
      }
    }
    stop = p;
    if (w == 0) {
      value = 0;
    } else if (!more && w <= (uint64_t{1} << 53) && exp10 >= -22 && exp10 <= 22) {
      const double d = static_cast<double>(w);  // exact
      value = exp10 < 0 ? d / kPow10[-exp10] : d * kPow10[exp10];
    } else {
      // Number() reads the sign too: -0 and the halfway cases stay its own.
      value = onestore_js_number(start, static_cast<size_t>(stop - start));
      if (isinf(value) || value == 0) errno = ERANGE;
      if (end != nullptr) *end = const_cast<char*>(stop);
      return value;
    }
  }
  if (end != nullptr) *end = const_cast<char*>(stop);
  return negative ? -value : value;
}

// The rest of musl's strtod.o, so that the linker never loads it beside the
// definition above (libc++'s string.o, linked for std::to_string, names them
// for std::stof and std::stold, which nothing calls: the linker drops them
// again). Read through strtod: exact for a double, not for a float or the
// 128-bit long double's extra digits.
extern "C" float strtof(const char* s, char** end) { return static_cast<float>(strtod(s, end)); }
extern "C" long double strtold(const char* s, char** end) { return strtod(s, end); }
extern "C" double strtod_l(const char* s, char** end, locale_t) { return strtod(s, end); }
extern "C" float strtof_l(const char* s, char** end, locale_t) { return strtof(s, end); }
extern "C" long double strtold_l(const char* s, char** end, locale_t) { return strtold(s, end); }
