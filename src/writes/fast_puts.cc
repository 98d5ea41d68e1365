// The fast reader of a batch of puts (writes.h, ParsePutsFast).
//
// A bulk transaction is mostly puts, and a DOM parse of its ops text (every
// value a node, then converted into a Row) was over a third of its commit.
// This reader goes from the text straight into Rows, for the exact shape the
// JS package writes: [{"op":"put","table":t,"row":{...}},...]. It takes a
// batch only when it can give exactly the Values the DOM path would give; on
// anything else (another op, an escape it does not decode, a fraction in an
// int column, an unknown column, bad JSON...) it declines and the caller
// parses the text with the DOM, which also words every error.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "values/vector.h"
#include "writes/writes.h"

namespace onestore {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void Ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool Eat(char c) {
    Ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    Ws();
    return p_ == end_;
  }
  char Peek() {
    Ws();
    return p_ < end_ ? *p_ : '\0';
  }
  const char* pos() const { return p_; }

  // A string without escapes: its bytes (valid UTF-8, no control char).
  bool RawString(std::string_view* out) {
    if (!Eat('"')) return false;
    const char* start = p_;
    while (p_ < end_) {
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        *out = std::string_view(start, p_ - start);
        ++p_;
        return true;
      }
      if (c == '\\' || c < 0x20) return false;
      if (c < 0x80) {
        ++p_;
      } else if (!Utf8()) {
        return false;
      }
    }
    return false;
  }

  // A string, decoding the two-character escapes (\uXXXX: declined).
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    out->clear();
    const char* run = p_;
    while (p_ < end_) {
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out->append(run, p_ - run);
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        out->append(run, p_ - run);
        if (++p_ == end_) return false;
        switch (*p_) {
          case '"': out->push_back('"'); break;
          case '\\': out->push_back('\\'); break;
          case '/': out->push_back('/'); break;
          case 'b': out->push_back('\b'); break;
          case 'f': out->push_back('\f'); break;
          case 'n': out->push_back('\n'); break;
          case 'r': out->push_back('\r'); break;
          case 't': out->push_back('\t'); break;
          default: return false;  // \u: the DOM path decodes it
        }
        run = ++p_;
      } else if (c < 0x80) {
        ++p_;
      } else if (!Utf8()) {
        return false;
      }
    }
    return false;
  }

  // An integer of at most 18 digits (it fits in an int64 whatever its digits),
  // not followed by a fraction or an exponent.
  bool Int(int64_t* out) {
    Ws();
    const char* start = p_;
    bool neg = p_ < end_ && *p_ == '-';
    if (neg) ++p_;
    const char* digits = p_;
    int64_t v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') v = v * 10 + (*p_++ - '0');
    size_t n = p_ - digits;
    if (n == 0 || n > 18 || (n > 1 && *digits == '0')) return false;
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) {
      p_ = start;
      return false;
    }
    *out = neg ? -v : v;
    return true;
  }

  // A number as nlohmann reads it for a num column: an integer (as above)
  // converted to double, or strtod of the token (as its lexer does).
  bool Num(double* out) {
    Ws();
    const char* start = p_;
    int64_t i;
    if (Int(&i)) {
      *out = static_cast<double>(i);
      return true;
    }
    p_ = start;
    if (p_ < end_ && *p_ == '-') ++p_;
    const char* digits = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    if (p_ == digits || (p_ - digits > 1 && *digits == '0')) return false;
    if (p_ < end_ && *p_ == '.') {
      const char* frac = ++p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == frac) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      const char* exp = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == exp) return false;
    }
    char buf[64];
    size_t n = p_ - start;
    if (n >= sizeof(buf)) return false;
    std::memcpy(buf, start, n);
    buf[n] = '\0';
    char* stop = nullptr;
    double d = std::strtod(buf, &stop);
    if (stop != buf + n || !std::isfinite(d)) return false;
    *out = d;
    return true;
  }

  bool Literal(const char* word) {
    Ws();
    size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }

  // A JSON value whose text is exactly what nlohmann's dump() would write
  // back: no whitespace, strings without escapes, integers only, objects
  // without repeated keys. Anything else declines.
  bool CanonicalJson(int depth) {
    if (depth > 64 || p_ == end_) return false;
    char c = *p_;
    if (c == '"') {
      std::string_view s;
      return RawString(&s);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      if (c == '-' && p_ + 1 < end_ && p_[1] == '0') return false;  // -0 dumps as 0
      const char* start = p_;
      int64_t i;
      if (!Int(&i)) return false;
      return p_ > start;
    }
    if (c == 't') return LiteralHere("true");
    if (c == 'f') return LiteralHere("false");
    if (c == 'n') return LiteralHere("null");
    if (c == '[') {
      ++p_;
      if (p_ < end_ && *p_ == ']') {
        ++p_;
        return true;
      }
      for (;;) {
        if (!CanonicalJson(depth + 1) || p_ == end_) return false;
        if (*p_ == ']') {
          ++p_;
          return true;
        }
        if (*p_++ != ',') return false;
      }
    }
    if (c == '{') {
      ++p_;
      if (p_ < end_ && *p_ == '}') {
        ++p_;
        return true;
      }
      std::vector<std::string_view> keys;
      for (;;) {
        std::string_view k;
        if (p_ == end_ || *p_ != '"' || !RawString(&k)) return false;
        keys.push_back(k);
        if (p_ == end_ || *p_++ != ':') return false;
        if (!CanonicalJson(depth + 1) || p_ == end_) return false;
        if (*p_ == '}') {
          ++p_;
          return !HasRepeatedKey(keys);
        }
        if (*p_++ != ',') return false;
      }
    }
    return false;
  }

 private:
  bool LiteralHere(const char* word) {
    size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }

  // One multi-byte UTF-8 sequence at p_ (RFC 3629: no overlong form, no
  // surrogate, at most U+10FFFF), as nlohmann's lexer accepts.
  bool Utf8() {
    const unsigned char* s = reinterpret_cast<const unsigned char*>(p_);
    size_t left = end_ - p_;
    unsigned char c = s[0];
    auto cont = [&](size_t i) { return i < left && (s[i] & 0xC0) == 0x80; };
    if (c >= 0xC2 && c <= 0xDF) {
      if (!cont(1)) return false;
      p_ += 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      if (!cont(1) || !cont(2)) return false;
      if (c == 0xE0 && s[1] < 0xA0) return false;
      if (c == 0xED && s[1] > 0x9F) return false;
      p_ += 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      if (!cont(1) || !cont(2) || !cont(3)) return false;
      if (c == 0xF0 && s[1] < 0x90) return false;
      if (c == 0xF4 && s[1] > 0x8F) return false;
      p_ += 4;
    } else {
      return false;
    }
    return true;
  }

  // Whether two of an object's keys are the same: pairwise for a few keys, a
  // hash set for more (a pairwise check made a put of an object with 100,000
  // keys take half a minute).
  static bool HasRepeatedKey(const std::vector<std::string_view>& keys) {
    const size_t n = keys.size();
    if (n <= 8) {
      for (size_t i = 1; i < n; ++i) {
        for (size_t k = 0; k < i; ++k) {
          if (keys[i] == keys[k]) return true;
        }
      }
      return false;
    }
    std::unordered_set<std::string_view> seen;
    seen.reserve(n);
    for (std::string_view k : keys) {
      if (!seen.insert(k).second) return true;
    }
    return false;
  }

  const char* p_;
  const char* end_;
};

bool ReadRow(Reader* r, const TableSchema& t, Row* out) {
  const size_t n = t.columns.size();
  if (n > 64 || !r->Eat('{')) return false;
  Row row(n);
  uint64_t seen = 0;
  if (!r->Eat('}')) {
    for (;;) {
      std::string_view name;
      if (!r->RawString(&name) || !r->Eat(':')) return false;
      int i = t.ColumnIndex(name);
      if (i < 0 || (seen >> i) & 1) return false;
      seen |= uint64_t{1} << i;
      const Column& c = t.columns[i];
      if (r->Peek() == 'n') {
        if (!c.optional || !r->Literal("null")) return false;
      } else {
        switch (c.type) {
          case Type::kStr: {
            std::string s;
            if (!r->String(&s) || std::memchr(s.data(), 0, s.size()) != nullptr) return false;
            row[i] = Value::Str(std::move(s));
            break;
          }
          case Type::kInt: {
            int64_t v;
            if (!r->Int(&v)) return false;
            row[i] = Value::Int(v);
            break;
          }
          case Type::kNum: {
            double d;
            if (!r->Num(&d)) return false;
            row[i] = Value::Num(d);
            break;
          }
          case Type::kBool:
            if (r->Literal("true")) {
              row[i] = Value::Bool(true);
            } else if (r->Literal("false")) {
              row[i] = Value::Bool(false);
            } else {
              return false;
            }
            break;
          case Type::kJson: {
            r->Ws();
            const char* start = r->pos();
            if (!r->CanonicalJson(0)) return false;
            row[i] = Value::JsonText(std::string(start, r->pos() - start));
            break;
          }
          case Type::kVector: {
            // The base64 form (js/vectors.js writes it); an array of numbers
            // and every error go the DOM way.
            std::string_view b64;
            if (!r->RawString(&b64) || !VectorFromBase64(b64, c.dims, &row[i])) return false;
            break;
          }
          case Type::kNull:
            return false;
        }
      }
      if (r->Eat(',')) continue;
      if (r->Eat('}')) break;
      return false;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if ((seen >> i) & 1) continue;
    const Column& c = t.columns[i];
    if (c.has_default) {
      row[i] = c.def;
    } else if (!c.optional) {
      return false;  // the DOM path says which column is missing
    }
  }
  *out = std::move(row);
  return true;
}

bool MemberName(Reader* r, const char* want) {
  std::string_view k;
  return r->RawString(&k) && k == want && r->Eat(':');
}

}  // namespace

bool ParsePutsFast(std::string_view text, TableResolver* tables, std::vector<Op>* out) {
  Reader r(text);
  if (!r.Eat('[')) return false;
  std::vector<Op> ops;
  std::string_view last_name;
  std::shared_ptr<const TableSchema> last;
  if (!r.Eat(']')) {
    for (;;) {
      std::string_view v;
      if (!r.Eat('{') || !MemberName(&r, "op") || !r.RawString(&v) || v != "put" || !r.Eat(',') ||
          !MemberName(&r, "table") || !r.RawString(&v) || !r.Eat(',') || !MemberName(&r, "row")) {
        return false;
      }
      if (!last || v != last_name) {
        std::shared_ptr<const TableSchema> t;
        if (!tables->Lookup(v, std::string(), &t).ok()) return false;
        last = std::move(t);
        last_name = v;
      }
      Op op;
      op.kind = OpKind::kPut;
      op.table = last;
      if (!ReadRow(&r, *last, &op.row) || !r.Eat('}')) return false;
      ops.push_back(std::move(op));
      if (r.Eat(',')) continue;
      if (r.Eat(']')) break;
      return false;
    }
  }
  if (!r.AtEnd()) return false;
  if (out->empty()) {
    *out = std::move(ops);
  } else {
    out->reserve(out->size() + ops.size());
    for (Op& op : ops) out->push_back(std::move(op));
  }
  return true;
}

bool ParseCommitMetaFast(std::string_view text, std::string* owner, int64_t* at) {
  Reader r(text);
  std::string_view o;
  int64_t t;
  if (!r.Eat('{') || !MemberName(&r, "owner") || !r.RawString(&o) || !r.Eat(',') ||
      !MemberName(&r, "at") || !r.Int(&t) || !r.Eat('}') || !r.AtEnd()) {
    return false;
  }
  owner->assign(o.data(), o.size());
  *at = t;
  return true;
}

}  // namespace onestore
