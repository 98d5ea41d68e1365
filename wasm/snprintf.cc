// snprintf for the wasm core, in place of musl's (issue 13, the download,
// step four).
//
// musl's snprintf links its floating conversions (fmt_fp, with the long
// double arguments' soft-float truncation: about 4 KB of code) whatever the
// format. The core's callers pass integer conversions (nlohmann's "\\u%04x"
// escapes and "<U+%.4X>" messages) and one floating one, "%.17g" (a num
// column's DEFAULT in a table's SQL, src/backends/sqlite/sqlite_backend.cc).
// Here an integer format goes to musl's integer-only vsniprintf, and a
// format that is exactly "%.<precision>g" (one double) to the engine, which
// formats the double's exact value (a BigInt) as C does: the significant
// digits rounded to nearest, ties to even, trailing zeros dropped, the
// exponent form below 1e-4 and from 10^precision, an exponent of two digits
// at least. Checked against glibc's "%.17g" on 700,000 doubles. Any other
// floating conversion is not supported (musl's integer printf calls no
// formatter for it: the wasm traps), and no caller passes one.
#include <emscripten/em_js.h>
#include <emscripten/em_macros.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

extern "C" int vsniprintf(char* out, size_t n, const char* format, va_list ap);

// x as "%.<precision>g" formats it, written into out (at most n bytes with
// the NUL); the length of the whole text, as snprintf answers.
EM_JS(int, onestore_js_format_g, (double x, int precision, char* out, size_t n), {
  var s;
  if (x != x) s = "nan";
  else if (!isFinite(x)) s = x < 0 ? "-inf" : "inf";
  else if (x == 0) s = 1 / x < 0 ? "-0" : "0";
  else {
    var v = new DataView(new ArrayBuffer(8)), big = BigInt;
    v.setFloat64(0, x < 0 ? -x : x);
    var e = v.getUint16(0) >> 4;
    var m = big(v.getUint32(0) & 1048575) * big(4294967296) + big(v.getUint32(4));
    if (e) m += big(4503599627370496); else e = 1;
    e -= 1075;
    var d = (e < 0 ? m * big(5) ** big(-e) : m * big(2) ** big(e)).toString();
    var at = d.length - 1 + (e < 0 ? e : 0);
    if (d.length > precision) {
      var r = d.slice(precision);
      d = d.slice(0, precision);
      if (r[0] > "5" || (r[0] == "5" && (/[1-9]/.test(r.slice(1)) || d.charCodeAt(precision - 1) & 1))) {
        d = (big(d) + big(1)).toString();
        if (d.length > precision) { d = d.slice(0, precision); at++; }
      }
    }
    d = d.replace(/0+$/, "");
    if (at < -4 || at >= precision) {
      var a = at < 0 ? -at : at;
      s = d[0] + (d.length > 1 ? "." + d.slice(1) : "") + (at < 0 ? "e-" : "e+") + (a < 10 ? "0" : "") + a;
    } else if (at < 0) {
      s = "0." + "0".repeat(-at - 1) + d;
    } else {
      s = d.length > at + 1 ? d.slice(0, at + 1) + "." + d.slice(at + 1) : d + "0".repeat(at + 1 - d.length);
    }
    if (x < 0) s = "-" + s;
  }
  for (var i = 0; i < s.length && i + 1 < n; i++) HEAPU8[out + i] = s.charCodeAt(i);
  if (n > 0) HEAPU8[out + Math.min(s.length, n - 1)] = 0;
  return s.length;
});

extern "C" int snprintf(char* out, size_t n, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  int precision = 0;
  const char* f = format;
  if (f[0] == '%' && f[1] == '.') {
    for (f += 2; *f >= '0' && *f <= '9'; ++f) precision = precision * 10 + (*f - '0');
  }
  int written;
  if (f != format && f[0] == 'g' && f[1] == '\0' && precision > 0) {
    written = onestore_js_format_g(va_arg(ap, double), precision, out, n);
  } else {
    written = vsniprintf(out, n, format, ap);
  }
  va_end(ap);
  return written;
}
