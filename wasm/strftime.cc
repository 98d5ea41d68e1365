// strftime for the wasm core, in place of Emscripten's.
//
// Its only caller is SQLite's CURRENT_TIMESTAMP, CURRENT_DATE and
// CURRENT_TIME (the date and time functions are compiled out,
// cmake/sqlite_options.cmake; no store SQL uses these three either), with
// the formats "%Y-%m-%d %H:%M:%S", "%Y-%m-%d" and "%H:%M:%S". Emscripten
// 3.1.6 implements strftime in the JS glue, with every conversion and
// locale name: about 8 KB of minified JS that every app downloads (issue
// 13, docs/performance.md). A definition in an object file wins over the
// JS library's at link time, so this one is linked instead: %Y %m %d %H %M
// %S and %%, any other conversion copied as it is.
#include <time.h>

#include <cstddef>

namespace {

// Appends `value` in decimal, zero-padded to `width` digits, to out[*n...].
// False when it does not fit before out[max - 1] (room for the NUL).
bool AppendNumber(long value, int width, char* out, size_t max, size_t* n) {
  char digits[24];
  int count = 0;
  bool negative = value < 0;
  unsigned long rest = negative ? 0UL - static_cast<unsigned long>(value)
                                : static_cast<unsigned long>(value);
  do {
    digits[count++] = static_cast<char>('0' + rest % 10);
    rest /= 10;
  } while (rest != 0);
  while (count < width) digits[count++] = '0';
  if (negative) digits[count++] = '-';
  if (*n + count >= max) return false;
  while (count > 0) out[(*n)++] = digits[--count];
  return true;
}

bool AppendChar(char c, char* out, size_t max, size_t* n) {
  if (*n + 1 >= max) return false;
  out[(*n)++] = c;
  return true;
}

}  // namespace

// As the C library's: the length written without the NUL, or 0 (and the
// contents unspecified) when it does not fit in `max` bytes.
extern "C" size_t strftime(char* out, size_t max, const char* format, const struct tm* tm) {
  size_t n = 0;
  for (const char* f = format; *f != '\0'; ++f) {
    bool ok;
    if (*f != '%' || f[1] == '\0') {
      ok = AppendChar(*f, out, max, &n);
    } else {
      ++f;
      switch (*f) {
        case 'Y': ok = AppendNumber(tm->tm_year + 1900L, 4, out, max, &n); break;
        case 'm': ok = AppendNumber(tm->tm_mon + 1L, 2, out, max, &n); break;
        case 'd': ok = AppendNumber(tm->tm_mday, 2, out, max, &n); break;
        case 'H': ok = AppendNumber(tm->tm_hour, 2, out, max, &n); break;
        case 'M': ok = AppendNumber(tm->tm_min, 2, out, max, &n); break;
        case 'S': ok = AppendNumber(tm->tm_sec, 2, out, max, &n); break;
        case '%': ok = AppendChar('%', out, max, &n); break;
        default: ok = AppendChar('%', out, max, &n) && AppendChar(*f, out, max, &n); break;
      }
    }
    if (!ok) return 0;
  }
  if (n >= max) return 0;
  out[n] = '\0';
  return n;
}
