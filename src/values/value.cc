#include "values/value.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "onestore/cold.h"
#include "values/vector.h"

namespace onestore {

const char* TypeName(Type t) {
  switch (t) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kNum:
      return "num";
    case Type::kStr:
      return "str";
    case Type::kJson:
      return "json";
    case Type::kVector:
      return "vector";
  }
  return "?";
}

bool ParseTypeName(std::string_view name, Type* out) {
  static const std::pair<const char*, Type> kNames[] = {{"str", Type::kStr},
                                                        {"int", Type::kInt},
                                                        {"bool", Type::kBool},
                                                        {"num", Type::kNum},
                                                        {"json", Type::kJson},
                                                        {"vector", Type::kVector}};
  for (const auto& [n, t] : kNames) {
    if (name == n) {
      *out = t;
      return true;
    }
  }
  return false;
}

bool Value::operator==(const Value& o) const {
  if (type_ != o.type_) return false;
  switch (type_) {
    case Type::kNull:
      return true;
    case Type::kBool:
    case Type::kInt:
      return i_ == o.i_;
    case Type::kNum:
      return num_value() == o.num_value();
    case Type::kStr:
    case Type::kJson:
    case Type::kVector:
      return s_ == o.s_;
  }
  return false;
}

void Value::AppendJson(std::string* out, bool unsafe_int_as_string) const {
  switch (type_) {
    case Type::kNull:
      out->append("null");
      break;
    case Type::kBool:
      out->append(i_ ? "true" : "false");
      break;
    case Type::kInt:
      if (unsafe_int_as_string && (i_ > kMaxSafeInteger || i_ < -kMaxSafeInteger)) {
        out->push_back('"');
        out->append(std::to_string(i_));
        out->push_back('"');
      } else {
        char buf[24];  // no string made per int (the outbox record has many)
        out->append(buf, std::to_chars(buf, buf + sizeof buf, i_).ptr - buf);
      }
      break;
    case Type::kNum: {
      // Shortest text that reads back as the same double.
      Json j = num_value();
      out->append(j.dump());
      break;
    }
    case Type::kStr:
      AppendJsonString(s_, out);
      break;
    case Type::kJson:
      // For JS: a json value that JSON.parse would read wrongly (an integer
      // beyond 2^53, which it rounds) goes as its JSON text in a string, and
      // so does a json string value, so that a string cell of a json column
      // always means "JSON text" (js/encode.js rowDecoder).
      if (unsafe_int_as_string && (s_.empty() || s_[0] == '"' || JsonTextHasUnsafeInt(s_))) {
        AppendJsonString(s_, out);
      } else {
        out->append(s_);
      }
      break;
    case Type::kVector:
      out->push_back('"');
      AppendBase64(s_, out);
      out->push_back('"');
      break;
  }
}

bool JsonTextHasUnsafeInt(std::string_view text) {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    char c = *p;
    if (c == '"') {  // skip a string, escapes included
      for (++p; p < end && *p != '"'; ++p) {
        if (*p == '\\') ++p;
      }
      ++p;
      continue;
    }
    if (c < '0' || c > '9') {
      ++p;
      continue;
    }
    const char* digits = p;
    while (p < end && *p >= '0' && *p <= '9') ++p;
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) {  // a float: skip its rest
      while (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' ||
                         *p == '+' || *p == '-')) {
        ++p;
      }
      continue;
    }
    // 2^53 - 1 = 9007199254740991 has 16 digits.
    const size_t n = static_cast<size_t>(p - digits);
    if (n > 16 || (n == 16 && std::string_view(digits, 16) > "9007199254740991")) return true;
  }
  return false;
}

namespace {

// NaN and the infinities as JS prints them; JSON has no spelling for them
// (nlohmann writes null), and a message must not call them null.
bool AppendNonFinite(double d, std::string* out) {
  if (std::isnan(d)) {
    out->append("NaN");
  } else if (std::isinf(d)) {
    out->append(d < 0 ? "-Infinity" : "Infinity");
  } else {
    return false;
  }
  return true;
}

// Appends j in short JSON form until out holds more than `budget` bytes.
// Every level of nesting writes a byte first, so the recursion is at most
// `budget` deep whatever the nesting of j.
ONESTORE_COLD void DescribeInto(const Json& j, size_t budget, std::string* out) {
  if (out->size() > budget) return;
  switch (j.type()) {
    case Json::value_t::number_float:
      if (!AppendNonFinite(j.get<double>(), out)) out->append(j.dump());
      return;
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& e : j) {
        if (out->size() > budget) return;
        if (!first) out->push_back(',');
        first = false;
        DescribeInto(e, budget, out);
      }
      out->push_back(']');
      return;
    }
    case Json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (out->size() > budget) return;
        if (!first) out->push_back(',');
        first = false;
        out->append(Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace));
        out->push_back(':');
        DescribeInto(it.value(), budget, out);
      }
      out->push_back('}');
      return;
    }
    default:
      out->append(j.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
}

}  // namespace

std::string Value::Describe() const {
  std::string out;
  if (type_ != Type::kNum || !AppendNonFinite(num_value(), &out)) AppendJson(&out);
  if (out.size() > 80) out = out.substr(0, 77) + "...";
  return out;
}

int CompareText(std::string_view a, std::string_view b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

int CompareValues(const Value& a, const Value& b) {
  if (a.is_null() || b.is_null()) {
    if (a.is_null() && b.is_null()) return 0;
    return a.is_null() ? -1 : 1;
  }
  auto num = [](const Value& v) {
    return v.type() == Type::kInt ? static_cast<double>(v.int_value()) : v.num_value();
  };
  switch (a.type()) {
    case Type::kBool:
    case Type::kInt:
      if (b.type() == Type::kNum) {
        double x = num(a), y = b.num_value();
        return x < y ? -1 : (x > y ? 1 : 0);
      }
      return a.int_value() < b.int_value() ? -1 : (a.int_value() > b.int_value() ? 1 : 0);
    case Type::kNum: {
      double x = a.num_value(), y = num(b);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case Type::kStr:
    case Type::kJson:
    case Type::kVector:  // never ordered by (query.cc refuses it); bytes keep it total
      return CompareText(a.text(), b.text());
    case Type::kNull:
      break;
  }
  return 0;
}

int CompareValueLists(const std::vector<Value>& a, const std::vector<Value>& b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    int c = CompareValues(a[i], b[i]);
    if (c != 0) return c;
  }
  return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

size_t CodePointLength(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

size_t CodePointOffset(std::string_view s, size_t n) {
  size_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == n) return i;
      ++seen;
    }
  }
  return s.size();
}

std::string PrefixUpperBound(std::string_view p) {
  std::string up(p);
  while (!up.empty()) {
    unsigned char last = static_cast<unsigned char>(up.back());
    if (last < 0xFF) {
      up.back() = static_cast<char>(last + 1);
      return up;
    }
    up.pop_back();
  }
  return up;
}

ONESTORE_COLD std::string DescribeJson(const Json& j) {
  std::string s;
  DescribeInto(j, 80, &s);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

size_t JsonStringSize(std::string_view s) {
  // Eight bytes at a time while none needs an escape (the usual text): a
  // byte below 0x20 sets its high bit in x - 0x20.., a quote or backslash
  // makes a zero byte of x ^ 0x22.. or x ^ 0x5c.. (the first such byte is
  // always seen; a later one may be flagged wrongly, which only hands the
  // rest to the byte loop, which counts exactly).
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  const char* p = s.data();
  const char* end = p + s.size();
  while (end - p >= 8) {
    uint64_t x;
    std::memcpy(&x, p, 8);
    const uint64_t q = x ^ (kOnes * '"');
    const uint64_t b = x ^ (kOnes * '\\');
    if ((((x - kOnes * 0x20) & ~x) | ((q - kOnes) & ~q) | ((b - kOnes) & ~b)) & kHigh) break;
    p += 8;
  }
  size_t extra = 0;
  for (; p < end; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    extra += (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t') ? 1 : 5;
  }
  return s.size() + extra + 2;
}

char* WriteJsonString(std::string_view s, size_t size, char* p) {
  static const char kHex[] = "0123456789abcdef";
  *p++ = '"';
  if (size == s.size() + 2) {  // nothing to escape
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    p += s.size();
  } else {
    for (const char ch : s) {
      const unsigned char c = static_cast<unsigned char>(ch);
      if (c >= 0x20 && c != '"' && c != '\\') {
        *p++ = ch;
        continue;
      }
      *p++ = '\\';
      switch (c) {
        case '"':
          *p++ = '"';
          break;
        case '\\':
          *p++ = '\\';
          break;
        case '\n':
          *p++ = 'n';
          break;
        case '\r':
          *p++ = 'r';
          break;
        case '\t':
          *p++ = 't';
          break;
        default:
          *p++ = 'u';
          *p++ = '0';
          *p++ = '0';
          *p++ = kHex[c >> 4];
          *p++ = kHex[c & 15];
      }
    }
  }
  *p++ = '"';
  return p;
}

void AppendJsonString(std::string_view s, std::string* out) {
  // The escapes' extra bytes first, so that the text is written in place
  // with one resize (a text of JSON, such as an outbox record, has a quote
  // every few bytes: an append per piece grew the string many times).
  const size_t size = JsonStringSize(s);
  const size_t at = out->size();
  out->resize(at + size);
  WriteJsonString(s, size, &(*out)[at]);
}

Status ValueFromJson(const Json& j, Type t, const std::string& where, Value* out, int dims) {
  if (j.is_null()) {
    *out = Value();
    return Status::OK();
  }
  auto wrong = [&](const char* want) {
    return Status::InvalidArgs(where + ": " + DescribeJson(j) + " is not " + want);
  };
  switch (t) {
    case Type::kBool:
      if (!j.is_boolean()) return wrong("a bool");
      *out = Value::Bool(j.get<bool>());
      return Status::OK();
    case Type::kInt:
      if (j.is_number_unsigned()) {
        uint64_t u = j.get<uint64_t>();
        if (u > static_cast<uint64_t>(INT64_MAX)) return wrong("a 64-bit int");
        *out = Value::Int(static_cast<int64_t>(u));
        return Status::OK();
      }
      if (j.is_number_integer()) {
        *out = Value::Int(j.get<int64_t>());
        return Status::OK();
      }
      if (j.is_number_float()) {
        double d = j.get<double>();
        // An integral value this large came from a BigInt (or raw JSON)
        // beyond 64 bits; anything else is a fraction or an unsafe number.
        if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) >= 9.2233720368547758e18) {
          return wrong("a 64-bit int");
        }
        return wrong("a safe integer (use a BigInt beyond 2^53)");
      }
      return wrong("an int");
    case Type::kNum:
      if (!j.is_number()) return wrong("a num");
      if (j.is_number_float()) {
        double d = j.get<double>();
        if (!std::isfinite(d)) return wrong("a finite num");
        *out = Value::Num(d);
      } else if (j.is_number_unsigned()) {
        *out = Value::Num(static_cast<double>(j.get<uint64_t>()));
      } else {
        *out = Value::Num(static_cast<double>(j.get<int64_t>()));
      }
      return Status::OK();
    case Type::kStr: {
      if (!j.is_string()) return wrong("a str");
      const std::string& s = j.get_ref<const std::string&>();
      if (std::memchr(s.data(), 0, s.size()) != nullptr) {
        return Status::InvalidArgs(where + ": " + DescribeJson(j) +
                                   " contains NUL, which a str cannot hold (use a json column)");
      }
      *out = Value::Str(s);
      return Status::OK();
    }
    case Type::kJson:
      *out = Value::JsonText(j.dump());
      return Status::OK();
    case Type::kVector:
      return ParseVectorJson(j, dims, where, out);
    case Type::kNull:
      break;
  }
  return wrong("a value");
}

}  // namespace onestore
