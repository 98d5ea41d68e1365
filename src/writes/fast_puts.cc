// The fast reader of a batch of puts (writes.h, ParsePutsFast).
//
// A bulk transaction is mostly puts, and a DOM parse of its ops text (every
// value a node, then converted into a Row) was over a third of its commit.
// This reader goes from the text straight into Rows, for the exact shape the
// JS package writes: [{"op":"put","table":t,"row":{...}},...], and updates
// and deletes by key in a record's shape among them (ReadKeyOp). It takes a
// batch only when it can give exactly the Values the DOM path would give; on
// anything else (another op, an escape it does not decode, a fraction in an
// int column, an unknown column, bad JSON...) it declines and the caller
// parses the text with the DOM, which also words every error.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "values/json_text.h"
#include "writes/binary_ops.h"
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
  void Reset(const char* p) { p_ = p; }

  // Whether the rest of the text is valid UTF-8 (as RawString checks it).
  bool Utf8Text() {
    while (p_ < end_) {
      // Eight ASCII bytes at a time (most text), then byte by byte.
      while (end_ - p_ >= 8) {
        uint64_t x;
        std::memcpy(&x, p_, 8);
        if (x & 0x8080808080808080ULL) break;
        p_ += 8;
      }
      if (p_ == end_) break;
      if (static_cast<unsigned char>(*p_) < 0x80) {
        ++p_;
      } else if (!Utf8()) {
        return false;
      }
    }
    return true;
  }

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

  // A string exactly as nlohmann's dump() writes one: RawString's rules,
  // plus the escapes dump writes and no others (\" \\ \b \f \n \r \t,
  // and \u00xx in lowercase hex for the other chars below 0x20). *out: its
  // text between the quotes, escapes as written. A text with these escapes
  // is its own canonical form (JSON.stringify writes the same escapes for a
  // well-formed string), so a json cell of an agent's message, with its
  // quotes and newlines, takes the fast path instead of the DOM's parse and
  // dump (issue 13, json text with escapes).
  bool CanonicalString(std::string_view* out) {
    if (!Eat('"')) return false;
    const char* start = p_;
    while (p_ < end_) {
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        *out = std::string_view(start, p_ - start);
        ++p_;
        return true;
      }
      if (c == '\\') {
        if (end_ - p_ < 2) return false;
        const char e = p_[1];
        if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
          p_ += 2;
          continue;
        }
        if (e != 'u' || !DumpedControlEscape(p_ + 2)) return false;
        p_ += 6;
        continue;
      }
      if (c < 0x20) return false;
      if (c < 0x80) {
        ++p_;
      } else if (!Utf8()) {
        return false;
      }
    }
    return false;
  }

  // Whether the 4 chars at `h` are the hex of a \u escape dump writes: a
  // char below 0x20 without a two-char escape, in lowercase hex.
  bool DumpedControlEscape(const char* h) const {
    if (end_ - h < 4 || h[0] != '0' || h[1] != '0' || (h[2] != '0' && h[2] != '1')) return false;
    const char d = h[3];
    int v;
    if (d >= '0' && d <= '9') {
      v = d - '0';
    } else if (d >= 'a' && d <= 'f') {
      v = d - 'a' + 10;
    } else {
      return false;
    }
    v += h[2] == '1' ? 16 : 0;
    return v != 0x08 && v != 0x09 && v != 0x0a && v != 0x0c && v != 0x0d;
  }

  // A string, decoding the two-character escapes (\uXXXX: declined).
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    out->clear();
    return ReadJsonString(&p_, end_, JsonStringRules{}, out);
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
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      // A 19th digit may not fit: the DOM path reads it. (Accumulating it
      // first overflowed an int64, which UBSan found in the fuzz corpus.)
      if (p_ - digits == 18) return false;
      v = v * 10 + (*p_++ - '0');
    }
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
  // back: no whitespace, strings with dump's escapes only (CanonicalString),
  // numbers as dump writes them, objects without repeated keys. Anything
  // else declines.
  bool CanonicalJson(int depth) {
    if (depth > 64 || p_ == end_) return false;
    char c = *p_;
    if (c == '"') {
      std::string_view s;
      return CanonicalString(&s);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      const char* start = p_;
      int64_t i;
      if (Int(&i)) return c != '-' || i != 0;  // -0 dumps as 0
      p_ = start;
      return CanonicalFraction();
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
      // The keys, for the repeated-key check: the first 8 in place (no
      // allocation for the small objects a bulk put's json cells are).
      std::string_view first[8];
      std::vector<std::string_view> all;  // from the 9th key on: every key
      size_t n = 0;
      for (;;) {
        std::string_view k;
        // A key's escapes are dump's (one spelling a text): keys compare
        // as written.
        if (p_ == end_ || *p_ != '"' || !CanonicalString(&k)) return false;
        if (n < 8) {
          first[n] = k;
        } else {
          if (all.empty()) all.assign(first, first + 8);
          all.push_back(k);
        }
        ++n;
        if (p_ == end_ || *p_++ != ':') return false;
        if (!CanonicalJson(depth + 1) || p_ == end_) return false;
        if (*p_ == '}') {
          ++p_;
          return n <= 8 ? !HasRepeatedKey(first, n) : !HasRepeatedKey(all.data(), n);
        }
        if (*p_++ != ',') return false;
      }
    }
    return false;
  }

  // A number with a fraction or an exponent (0.5, 1e+21): canonical when it
  // is the text dump() writes for its double (each went the DOM way, about
  // seven times a put's cost; JSON.stringify and dump() agree on most
  // numbers apps write, and differ on some, as 1.5e-7 and 1.5e-07).
  bool CanonicalFraction() {
    const char* start = p_;
    double d;
    if (!Num(&d)) return false;
    const std::string text = Json(d).dump();
    return text.size() == static_cast<size_t>(p_ - start) &&
           std::memcmp(text.data(), start, text.size()) == 0;
  }

  // Skips one JSON value (whitespace first) and gives its text: strings
  // with their escapes, nested lists and objects by bracket count (at most
  // `max_depth` open), any other token up to a delimiter. It only finds
  // where a well-formed value ends: the caller parses the span with the DOM,
  // which checks everything else.
  bool SkipValue(int max_depth, std::string_view* out) {
    Ws();
    const char* start = p_;
    int depth = 0;
    while (p_ < end_) {
      const char c = *p_;
      if (c == '"') {
        for (++p_;; ++p_) {
          if (p_ >= end_) return false;
          if (*p_ == '\\') {
            ++p_;
          } else if (*p_ == '"') {
            break;
          }
        }
        ++p_;
      } else if (c == '[' || c == '{') {
        if (++depth > max_depth) return false;
        ++p_;
      } else if (c == ']' || c == '}') {
        if (depth == 0) break;
        --depth;
        ++p_;
      } else if (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ':') {
        if (depth == 0) break;
        ++p_;
      } else {
        ++p_;
      }
      if (depth == 0 && (c == '"' || c == ']' || c == '}')) break;
    }
    if (depth != 0 || p_ == start) return false;
    *out = std::string_view(start, p_ - start);
    return true;
  }

 private:
  bool LiteralHere(const char* word) {
    size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }

  // One multi-byte UTF-8 sequence at p_ (json_text.h, Utf8SequenceLength).
  bool Utf8() {
    const int n = Utf8SequenceLength(p_, end_);
    p_ += n;
    return n != 0;
  }

  // Whether two of an object's keys are the same: pairwise for a few keys, a
  // hash set for more (a pairwise check made a put of an object with 100,000
  // keys take half a minute).
  static bool HasRepeatedKey(const std::string_view* keys, size_t n) {
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
    for (size_t i = 0; i < n; ++i) {
      if (!seen.insert(keys[i]).second) return true;
    }
    return false;
  }

  const char* p_;
  const char* end_;
};

// A non-null cell of column `c`, exactly as the DOM path (ValueFromJson)
// gives it, or false when this reader does not take it.
bool ReadCell(Reader* r, const Column& c, Value* out) {
  switch (c.type) {
    case Type::kStr: {
      std::string s;
      if (!r->String(&s) || std::memchr(s.data(), 0, s.size()) != nullptr) return false;
      *out = Value::Str(std::move(s));
      break;
    }
    case Type::kInt: {
      int64_t v;
      if (!r->Int(&v)) return false;
      *out = Value::Int(v);
      break;
    }
    case Type::kNum: {
      double d;
      if (!r->Num(&d)) return false;
      *out = Value::Num(d);
      break;
    }
    case Type::kBool:
      if (r->Literal("true")) {
        *out = Value::Bool(true);
      } else if (r->Literal("false")) {
        *out = Value::Bool(false);
      } else {
        return false;
      }
      break;
    case Type::kJson: {
      r->Ws();
      const char* start = r->pos();
      if (!r->CanonicalJson(0)) return false;
      *out = Value::JsonText(std::string(start, r->pos() - start));
      break;
    }
    case Type::kVector: {
      // The base64 form (js/vectors.js writes it); an array of numbers
      // and every error go the DOM way.
      std::string_view b64;
      if (!r->RawString(&b64) || !VectorFromBase64(b64, c.dims, &*out)) return false;
      break;
    }
    case Type::kNull:
      return false;
  }
  return true;
}

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
        if (!ReadCell(r, c, &row[i])) return false;
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

// An update or a delete by key as the store writes it in a record
// (Op::AppendJson): {"op":"update"|"delete","table":t,"key":[...]} and, for
// an update, "set":{column:{"value":v},...}; key columns str or int, no
// count. The same op as ParseOp gives, or false (nothing to say: the DOM
// path reads it).
bool ReadKeyOp(Reader* r, TableResolver* tables, Op* op) {
  std::string_view v, name;
  if (!r->Eat('{') || !MemberName(r, "op") || !r->RawString(&v) ||
      (v != "update" && v != "delete") || !r->Eat(',') || !MemberName(r, "table") ||
      !r->RawString(&name) || name.empty() || name[0] == '_' || !r->Eat(',') ||
      !MemberName(r, "key") || !r->Eat('[')) {
    return false;
  }
  const bool update = v == "update";
  std::shared_ptr<const TableSchema> t;
  if (!tables->Lookup(name, std::string(), &t).ok()) return false;
  Key key;
  for (size_t i = 0; i < t->key.size(); ++i) {
    const Column& c = t->columns[t->key[i]];
    if ((i > 0 && !r->Eat(',')) || (c.type != Type::kStr && c.type != Type::kInt)) return false;
    Value k;
    if (r->Peek() == 'n' || !ReadCell(r, c, &k)) return false;
    key.push_back(std::move(k));
  }
  if (!r->Eat(']')) return false;
  std::vector<SetItem> set;
  if (update) {
    if (t->columns.size() > 64 || !r->Eat(',') || !MemberName(r, "set") || !r->Eat('{')) return false;
    uint64_t seen = 0;
    for (;;) {
      std::string_view col;
      if (!r->RawString(&col) || !r->Eat(':')) return false;
      const int i = t->ColumnIndex(col);
      if (i < 0 || (seen >> i) & 1) return false;
      seen |= uint64_t{1} << i;
      for (int k : t->key) {
        if (k == i) return false;
      }
      const Column& c = t->columns[i];
      SetItem item;
      item.column = i;
      item.expr.op = ExprOp::kValue;
      item.expr.type = c.type;
      if (!r->Eat('{') || !MemberName(r, "value")) return false;
      if (r->Peek() == 'n') {
        if (!c.optional || !r->Literal("null")) return false;
      } else if (!ReadCell(r, c, &item.expr.value)) {
        return false;
      }
      if (!r->Eat('}')) return false;
      set.push_back(std::move(item));
      if (r->Eat(',')) continue;
      if (r->Eat('}')) break;
      return false;
    }
  }
  if (!r->Eat('}')) return false;
  op->kind = update ? OpKind::kUpdate : OpKind::kDelete;
  op->table = std::move(t);
  op->key = std::move(key);
  op->set = std::move(set);
  return true;
}

// One op read straight into `op`: a put (its row; `last` and `last_name`
// keep the table of the previous put) or an update or a delete by key
// (ReadKeyOp). False on anything else, the reader then anywhere in the op.
// The store's own tables (_documents, _deltas) are left to the DOM path,
// which refuses them outside document ops (writes.cc).
bool ReadFastOp(Reader* r, TableResolver* tables, std::string_view* last_name,
                std::shared_ptr<const TableSchema>* last, Op* op) {
  r->Ws();
  const char* start = r->pos();
  std::string_view v;
  if (!r->Eat('{') || !MemberName(r, "op") || !r->RawString(&v)) return false;
  if (v != "put") {
    r->Reset(start);
    return ReadKeyOp(r, tables, op);
  }
  if (!r->Eat(',') || !MemberName(r, "table") || !r->RawString(&v) || !r->Eat(',') ||
      !MemberName(r, "row")) {
    return false;
  }
  if (!*last || v != *last_name) {
    if (v.empty() || v[0] == '_') return false;
    std::shared_ptr<const TableSchema> t;
    if (!tables->Lookup(v, std::string(), &t).ok()) return false;
    *last = std::move(t);
    *last_name = v;
  }
  op->kind = OpKind::kPut;
  op->table = *last;
  return ReadRow(r, **last, &op->row) && r->Eat('}');
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
      Op op;
      if (!ReadFastOp(&r, tables, &last_name, &last, &op)) return false;
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
    // No exact reserve: a transaction stages its ops at each tx.get, and
    // growing the list to the exact size each time moved all of it.
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

namespace {

// The binary batch (wasm/ABI.md, "Binary ops"): value tags.
enum BinTag : unsigned char {
  kBinNull = 0,
  kBinFalse = 1,
  kBinTrue = 2,
  kBinUint = 3,      // varint: a non-negative integer
  kBinStr = 4,       // varint length, UTF-8
  kBinNumText = 5,   // varint length, a JSON number as the JS package writes it
  kBinJsonText = 6,  // varint length, JSON text
  kBinNegInt = 7,    // varint: minus the integer
};

// A cursor over a binary batch.
class Bytes {
 public:
  explicit Bytes(std::string_view s)
      : begin_(reinterpret_cast<const unsigned char*>(s.data())),
        p_(begin_),
        end_(begin_ + s.size()) {}
  bool AtEnd() const { return p_ == end_; }
  size_t offset() const { return p_ - begin_; }
  bool Byte(unsigned char* out) {
    if (p_ == end_) return false;
    *out = *p_++;
    return true;
  }
  // LEB128, at most 10 bytes (a padded form, which the JS side writes when
  // it reserves room for a length, reads the same).
  bool Varint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; p_ < end_ && shift < 70; shift += 7) {
      unsigned char b = *p_++;
      if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *out = v;
        return true;
      }
    }
    return false;
  }
  bool Slice(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }

 private:
  const unsigned char* begin_;
  const unsigned char* p_;
  const unsigned char* end_;
};

struct BinValue {
  unsigned char tag = kBinNull;
  uint64_t u = 0;
  std::string_view text;
};

bool ReadBinValue(Bytes* b, BinValue* v) {
  if (!b->Byte(&v->tag)) return false;
  switch (v->tag) {
    case kBinNull:
    case kBinFalse:
    case kBinTrue:
      return true;
    case kBinUint:
    case kBinNegInt:
      return b->Varint(&v->u);
    case kBinStr:
    case kBinNumText:
    case kBinJsonText:
      return b->Slice(&v->text);
    default:
      return false;
  }
}

// The wire JSON of a value, as the JS package would have written it.
void RenderBinValue(const BinValue& v, std::string* out) {
  switch (v.tag) {
    case kBinNull: out->append("null"); break;
    case kBinFalse: out->append("false"); break;
    case kBinTrue: out->append("true"); break;
    case kBinNegInt: out->push_back('-'); [[fallthrough]];
    case kBinUint: out->append(std::to_string(v.u)); break;
    case kBinStr: AppendJsonString(v.text, out); break;
    default: out->append(v.text); break;  // number and JSON text: verbatim
  }
}

// The cell of column `c` for `v` exactly as the DOM path (ValueFromJson on
// the rendered JSON) gives it, or false when this reader does not take it.
bool FastCell(const BinValue& v, const Column& c, Value* out) {
  // A json column takes any value as its text, when that text is what the
  // DOM path's dump() would write (a number, string or bool, not only an
  // object or array: each of those went the DOM way, about ten times the
  // cost of a put).
  if (c.type == Type::kJson && v.tag != kBinNull) {
    // JSON and number text as it came, any other value rendered; the cell
    // a copy of its size (a string appended to holds twice its room).
    std::string rendered;
    std::string_view text = v.text;
    if (v.tag != kBinJsonText && v.tag != kBinNumText) {
      RenderBinValue(v, &rendered);
      text = rendered;
    }
    Reader r(text);
    if (!r.CanonicalJson(0) || r.pos() != text.data() + text.size()) return false;
    *out = Value::JsonText(std::string(text));
    return true;
  }
  switch (v.tag) {
    case kBinNull:
      if (!c.optional) return false;
      *out = Value();
      return true;
    case kBinFalse:
    case kBinTrue:
      if (c.type != Type::kBool) return false;
      *out = Value::Bool(v.tag == kBinTrue);
      return true;
    case kBinUint:
    case kBinNegInt: {
      if (v.u > static_cast<uint64_t>(kMaxSafeInteger)) return false;
      int64_t i = v.tag == kBinUint ? static_cast<int64_t>(v.u) : -static_cast<int64_t>(v.u);
      if (c.type == Type::kInt) {
        *out = Value::Int(i);
      } else if (c.type == Type::kNum) {
        *out = Value::Num(static_cast<double>(i));
      } else {
        return false;
      }
      return true;
    }
    case kBinStr: {
      // A vector column's cell is the base64 of its float32 (js/vectors.js);
      // a bad one is left to the DOM path, which words the error.
      if (c.type == Type::kVector) return VectorFromBase64(v.text, c.dims, out);
      if (c.type != Type::kStr || std::memchr(v.text.data(), 0, v.text.size()) != nullptr)
        return false;
      Reader r(v.text);
      if (!r.Utf8Text()) return false;
      *out = Value::Str(std::string(v.text));
      return true;
    }
    case kBinNumText: {
      Reader r(v.text);
      if (c.type == Type::kNum) {
        double d;
        if (!r.Num(&d) || r.pos() != v.text.data() + v.text.size()) return false;
        *out = Value::Num(d);
        return true;
      }
      if (c.type == Type::kInt) {
        int64_t i;
        if (!r.Int(&i) || r.pos() != v.text.data() + v.text.size()) return false;
        *out = Value::Int(i);
        return true;
      }
      return false;
    }
    default:
      return false;
  }
}

// The table and member names the puts after a shape record use.
struct Shape {
  std::string_view table;
  std::vector<std::string_view> names;
  bool resolved = false;
  std::shared_ptr<const TableSchema> schema;  // null: the fast reader does not take these puts
  std::vector<int> columns;                   // per name: its column, or -1
};

void Resolve(TableResolver* tables, Shape* shape) {
  shape->resolved = true;
  shape->schema.reset();
  shape->columns.clear();
  std::shared_ptr<const TableSchema> t;
  if (shape->table.empty() || shape->table[0] == '_' ||
      !tables->Lookup(shape->table, std::string(), &t).ok() || t->columns.size() > 64) {
    return;
  }
  uint64_t seen = 0;
  shape->columns.reserve(shape->names.size());  // one allocation, not one a doubling
  for (std::string_view name : shape->names) {
    int i = t->ColumnIndex(name);
    if (i < 0 || (seen >> i) & 1) return;
    seen |= uint64_t{1} << i;
    shape->columns.push_back(i);
  }
  shape->schema = std::move(t);
}

// A put of `shape` with `values`, straight into a row; false when the
// reader does not take it.
bool FastPut(const Shape& shape, const std::vector<BinValue>& values, Op* op) {
  if (!shape.schema) return false;
  const TableSchema& t = *shape.schema;
  Row row(t.columns.size());
  uint64_t seen = 0;
  for (size_t k = 0; k < values.size(); ++k) {
    int i = shape.columns[k];
    seen |= uint64_t{1} << i;
    if (!FastCell(values[k], t.columns[i], &row[i])) return false;
  }
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if ((seen >> i) & 1) continue;
    const Column& c = t.columns[i];
    if (c.has_default) {
      row[i] = c.def;
    } else if (!c.optional) {
      return false;  // the DOM path says which column is missing
    }
  }
  op->kind = OpKind::kPut;
  op->table = shape.schema;
  op->row = std::move(row);
  return true;
}

Status Malformed(const Bytes& b) {
  return Status::InvalidArgs("ops: the binary batch is malformed at byte " +
                             std::to_string(b.offset()));
}

// One op in wire JSON through the DOM path.
Status DomOp(std::string_view text, TableResolver* tables, size_t index, Op* op) {
  Json j;
  // On the JSON path this op sits inside the ops array: one level less
  // here, so that a value nested to the limit is refused on both paths (and
  // what is accepted always fits in its outbox record and a batch of it).
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(text, "ops", &j, kMaxJsonDepth - 1));
  return ParseOp(j, tables, "ops[" + std::to_string(index) + "]", op);
}

// The number of ops of a batch read by `b` (just past its magic byte), or 0
// when it is malformed (the parse then says where): a pass that reads no
// value, so that the list of ops is allocated once (an Op is large, and its
// moves as a vector grows cost a bulk as much as its cells' copies).
size_t CountBinaryOps(Bytes b) {
  size_t n = 0;
  uint64_t names = 0;
  unsigned char tag;
  std::string_view text;
  BinValue v;
  while (b.Byte(&tag)) {
    if (tag == 'S') {
      if (!b.Slice(&text) || !b.Varint(&names)) return 0;
      for (uint64_t k = 0; k < names; ++k) {
        if (!b.Slice(&text)) return 0;
      }
      continue;
    }
    if (tag == 'P') {
      for (uint64_t k = 0; k < names; ++k) {
        if (!ReadBinValue(&b, &v)) return 0;
      }
    } else if (tag != 'J' || !b.Slice(&text)) {
      return 0;
    }
    ++n;
  }
  return n;
}

}  // namespace

bool IsBinaryOps(std::string_view bytes) {
  return !bytes.empty() && static_cast<unsigned char>(bytes[0]) == kBinaryOpsMagic;
}

size_t BinaryOpsCount(std::string_view bytes) {
  return IsBinaryOps(bytes) ? CountBinaryOps(Bytes(bytes.substr(1))) : 0;
}

Status ParseBinaryOps(std::string_view bytes, TableResolver* tables, std::vector<Op>* out,
                      size_t* dom_ops) {
  Bytes b(bytes);
  unsigned char tag;
  if (!b.Byte(&tag) || tag != kBinaryOpsMagic) return Malformed(b);
  const size_t first = out->size();
  auto fail = [&](Status st) {
    out->resize(first);
    return st;
  };
  // Growth stays geometric when a transaction stages its ops in many
  // batches (each tx.get stages the ops before it). The reservation is at
  // most an Op per 3 bytes of batch, the size of the shortest put a table
  // takes ('P', a tag, a byte): records of one byte (puts of a shape without
  // names, refused at the first unless every column is optional) reserved
  // an Op of 176 bytes a byte, three times a real batch of the same size
  // (found by the binops fuzz target, docs/reliability.md).
  const size_t need = first + std::min(CountBinaryOps(b), bytes.size() / 3 + 1);
  if (need > out->capacity()) out->reserve(std::max(need, 2 * out->capacity()));
  Shape shape;
  std::vector<BinValue> values;
  std::string rendered;
  size_t index = 0;
  while (!b.AtEnd()) {
    b.Byte(&tag);
    if (tag == 'S') {
      uint64_t n;
      if (!b.Slice(&shape.table) || !b.Varint(&n) || n > bytes.size()) return fail(Malformed(b));
      shape.names.resize(n);
      for (auto& name : shape.names) {
        if (!b.Slice(&name)) return fail(Malformed(b));
      }
      shape.resolved = false;
      continue;
    }
    // Each op is made in its place in `out` (an Op is large: no move).
    Op& op = out->emplace_back();
    std::string_view text;  // the op as wire JSON, when it is not read below
    if (tag == 'J') {
      if (!b.Slice(&text)) return fail(Malformed(b));
      shape.resolved = false;  // a table it declares is what later puts write
    } else if (tag == 'P') {
      if (shape.table.data() == nullptr) return fail(Malformed(b));
      values.resize(shape.names.size());
      for (BinValue& v : values) {
        if (!ReadBinValue(&b, &v)) return fail(Malformed(b));
      }
      if (!shape.resolved) Resolve(tables, &shape);
      if (FastPut(shape, values, &op)) {
        ++index;
        continue;
      }
      // The JSON the JS package would have sent: the same op, or the same
      // worded error.
      rendered.assign("{\"op\":\"put\",\"table\":");
      AppendJsonString(shape.table, &rendered);
      rendered.append(",\"row\":{");
      for (size_t k = 0; k < values.size(); ++k) {
        if (k) rendered.push_back(',');
        AppendJsonString(shape.names[k], &rendered);
        rendered.push_back(':');
        RenderBinValue(values[k], &rendered);
      }
      rendered.append("}}");
      text = rendered;
    } else {
      return fail(Malformed(b));
    }
    // An op as wire JSON: an update or a delete by key (or a put) as the
    // wire reader takes them, straight into `op` (the DOM path's op); any
    // other, or one it does not take, the DOM way (each update and delete
    // went so: 3 to 5 times a put's commit cost).
    Reader r(text);
    std::string_view last_name;
    std::shared_ptr<const TableSchema> last;
    if (!ReadFastOp(&r, tables, &last_name, &last, &op) || !r.AtEnd()) {
      Status st = DomOp(text, tables, index, &op);
      if (!st.ok()) return fail(st);
      if (dom_ops != nullptr) ++*dom_ops;
    }
    ++index;
  }
  return Status::OK();
}

bool ReadRecordInt(const Json& j, int64_t* out) {
  if (!j.is_number_integer()) return false;
  if (j.is_number_unsigned()) {
    if (j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
  } else if (j.get<int64_t>() < 0) {
    return false;
  }
  *out = j.get<int64_t>();
  return true;
}

namespace {

// One op of a record: a put, update or delete ReadFastOp takes, or any other
// op (or one it does not take) parsed alone with the DOM as the batch's
// DOM would parse it in place (DomOp's depth).
bool ReadRecordOp(Reader* r, TableResolver* tables, std::string_view* last_name,
                  std::shared_ptr<const TableSchema>* last, Op* op, int64_t* count) {
  r->Ws();
  const char* start = r->pos();
  if (ReadFastOp(r, tables, last_name, last, op)) {
    *count = -1;
    return true;
  }
  r->Reset(start);
  *op = Op();
  std::string_view span;
  if (!r->SkipValue(kMaxJsonDepth, &span)) return false;
  Json j;
  bool too_deep = false;
  if (!TryParseJsonText(span, kMaxJsonDepth - 1, &j, &too_deep)) return false;
  *op = Op();
  if (!ParseOp(j, tables, std::string(), op).ok()) return false;
  // A declaration changes what a table's name resolves to.
  if (op->declares()) last->reset();
  *count = -1;
  if (!op->is_bulk() && !op->declares() && j.is_object()) {
    auto c = j.find("count");
    if (c != j.end() && !ReadRecordInt(*c, count)) return false;
  }
  return true;
}

}  // namespace

bool ParseBatchFast(std::string_view text, int64_t head, TableResolver* tables, int64_t* to,
                    std::vector<FastRecord>* out) {
  Reader r(text);
  int64_t from = 0;
  if (!r.Eat('{') || !MemberName(&r, "from") || !r.Int(&from) || from != head || !r.Eat(',') ||
      !MemberName(&r, "to") || !r.Int(to) || *to <= from || !r.Eat(',') ||
      !MemberName(&r, "commits") || !r.Eat('[')) {
    return false;
  }
  std::vector<FastRecord> records;
  records.reserve(static_cast<size_t>(std::min<int64_t>(*to - from, 100000)));
  std::string_view last_name;
  std::shared_ptr<const TableSchema> last;
  for (int64_t seq = from + 1;; ++seq) {
    if (seq > *to) return false;
    FastRecord rec;
    int64_t n = 0;
    std::string_view owner, k;
    if (!r.Eat('{') || !MemberName(&r, "seq") || !r.Int(&n) || n != seq || !r.Eat(',') ||
        !MemberName(&r, "from") || !r.Int(&n) || n != seq - 1 || !r.Eat(',') ||
        !MemberName(&r, "at") || !r.Int(&rec.at) || !r.Eat(',') || !MemberName(&r, "owner") ||
        !r.RawString(&owner) || !r.Eat(',') || !r.RawString(&k)) {
      return false;
    }
    rec.owner.assign(owner.data(), owner.size());
    if (k == "actor") {
      std::string_view span;
      bool too_deep = false;
      if (!r.Eat(':') || !r.SkipValue(kMaxJsonDepth, &span) ||
          !TryParseJsonText(span, kMaxJsonDepth - 1, &rec.actor, &too_deep) ||
          rec.actor.is_null() || !r.Eat(',') || !r.RawString(&k)) {
        return false;
      }
    }
    if (k != "ops" || !r.Eat(':') || !r.Eat('[')) return false;
    if (!r.Eat(']')) {
      for (;;) {
        Op op;
        int64_t count = -1;
        if (!ReadRecordOp(&r, tables, &last_name, &last, &op, &count)) return false;
        rec.ops.push_back(std::move(op));
        rec.counts.push_back(count);
        if (r.Eat(',')) continue;
        if (r.Eat(']')) break;
        return false;
      }
    }
    if (!r.Eat('}')) return false;
    records.push_back(std::move(rec));
    if (r.Eat(',')) continue;
    if (r.Eat(']')) break;
    return false;
  }
  if (static_cast<int64_t>(records.size()) != *to - from || !r.Eat('}') || !r.AtEnd()) return false;
  *out = std::move(records);
  return true;
}

}  // namespace onestore
