// strftime and gmtime for the wasm core, in place of Emscripten's.
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
//
// gmtime likewise (issue 13, the download, step three): SQLite calls it for
// the same three, and Emscripten's runs tzset and a JS gmtime in the glue
// (the time zone's names read from Date, about 1.6 KB of JS). Here it is the
// proleptic Gregorian calendar's arithmetic, in UTC. (Marked ONESTORE_COLD,
// both made the .wasm 632 bytes smaller raw and 66 larger gzipped.)
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

// As the C library's: the broken-down UTC time of *t, in one static struct
// tm (SQLite calls it under its mutex). tm_isdst and the BSD fields are 0.
extern "C" struct tm* gmtime(const time_t* t) {
  static struct tm tm;
  tm = {};
  long long days = *t / 86400;
  long long rest = *t % 86400;
  if (rest < 0) {
    rest += 86400;
    --days;
  }
  tm.tm_hour = static_cast<int>(rest / 3600);
  tm.tm_min = static_cast<int>(rest / 60 % 60);
  tm.tm_sec = static_cast<int>(rest % 60);
  tm.tm_wday = static_cast<int>((days % 7 + 11) % 7);  // 1970-01-01 was a Thursday
  // The date, counting from 0000-03-01 in eras of 400 years (146,097 days),
  // so that a leap day is the last day of its year.
  const long long from_march = days + 719468;
  const long long era = (from_march >= 0 ? from_march : from_march - 146096) / 146097;
  const long long day_of_era = from_march - era * 146097;
  const long long year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const long long day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const long long month_from_march = (5 * day_of_year + 2) / 153;
  const long long month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
  const long long year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  tm.tm_mday = static_cast<int>(day_of_year - (153 * month_from_march + 2) / 5 + 1);
  tm.tm_mon = static_cast<int>(month - 1);
  tm.tm_year = static_cast<int>(year - 1900);
  static const short kDaysBefore[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  tm.tm_yday = kDaysBefore[tm.tm_mon] + tm.tm_mday - 1 + (leap && month > 2 ? 1 : 0);
  return &tm;
}

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
