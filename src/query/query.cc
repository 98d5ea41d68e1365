#include "query/query.h"

#include <cstring>

#include "onestore/cold.h"
#include "values/json_text.h"

namespace onestore {

const char* PredOpName(PredOp op) {
  switch (op) {
    case PredOp::kEq:
      return "eq";
    case PredOp::kNe:
      return "ne";
    case PredOp::kLt:
      return "lt";
    case PredOp::kLte:
      return "lte";
    case PredOp::kGt:
      return "gt";
    case PredOp::kGte:
      return "gte";
    case PredOp::kIn:
      return "inArray";
    case PredOp::kIsNull:
      return "isNull";
    case PredOp::kPrefix:
      return "prefix";
    case PredOp::kAnd:
      return "and";
    case PredOp::kOr:
      return "or";
    case PredOp::kNot:
      return "not";
  }
  return "?";
}

namespace {

bool PredOpFromName(std::string_view name, PredOp* op) {
  static const PredOp kAll[] = {PredOp::kEq,     PredOp::kNe,  PredOp::kLt, PredOp::kLte,
                                PredOp::kGt,     PredOp::kGte, PredOp::kIn, PredOp::kIsNull,
                                PredOp::kPrefix, PredOp::kAnd, PredOp::kOr, PredOp::kNot};
  for (PredOp o : kAll) {
    if (name == PredOpName(o)) {
      *op = o;
      return true;
    }
  }
  return false;
}

// Resolves a column operand of a predicate or an order term.
ONESTORE_COLD Status ResolveColumn(const Json& name, const TableSchema& t, const std::string& where,
                                   const char* use, int* pos) {
  if (!name.is_string()) {
    return Status::InvalidArgs(where + ": " + DescribeJson(name) + " is not a column name");
  }
  const std::string& n = name.get_ref<const std::string&>();
  *pos = t.ColumnIndex(n);
  if (*pos < 0) {
    return Status::InvalidArgs(where + ": unknown column \"" + n + "\" in table \"" + t.name +
                               "\"");
  }
  if (t.columns[*pos].type == Type::kJson || t.columns[*pos].type == Type::kVector) {
    return Status::InvalidArgs(where + ": " + TypeName(t.columns[*pos].type) + " column \"" + n +
                               "\" cannot be used in " + use +
                               " (only str, int, bool and num columns can" +
                               (t.columns[*pos].type == Type::kVector ? "; search a vector with nearest)" : ")"));
  }
  return Status::OK();
}

ONESTORE_COLD Status Operand(const Json& j, const TableSchema& t, int column,
                             const std::string& where, const char* op, Value* out) {
  if (j.is_null()) {
    return Status::InvalidArgs(where + ": " + op + " on column \"" + t.columns[column].name +
                               "\" got null; a comparison with null is never true, use isNull");
  }
  return ValueFromJson(j, t.columns[column].type, where, out);
}

}  // namespace

ONESTORE_COLD Status ParsePredicate(const Json& j, const TableSchema& t, const std::string& where,
                                    Predicate* out) {
  return ParsePredicateAt(j, t, where, 0, out);
}

ONESTORE_COLD Status ParsePredicateAt(const Json& j, const TableSchema& t, const std::string& where,
                                      int depth, Predicate* out) {
  if (depth >= kMaxNesting) {
    return Status::InvalidArgs(where + ": the where nests deeper than " +
                               std::to_string(kMaxNesting) + " levels");
  }
  if (!j.is_object() || j.size() != 1) {
    return Status::InvalidArgs(
        where + ": " + DescribeJson(j) +
        " is not a predicate (one of {\"eq\":[col,v]}, {\"and\":[...]}, ...)");
  }
  auto it = j.begin();
  Predicate p;
  if (!PredOpFromName(it.key(), &p.op)) {
    return Status::InvalidArgs(where + ": unknown operator \"" + it.key() + "\"");
  }
  const Json& a = it.value();
  const std::string w = where + "." + it.key();
  switch (p.op) {
    case PredOp::kEq:
    case PredOp::kNe:
    case PredOp::kLt:
    case PredOp::kLte:
    case PredOp::kGt:
    case PredOp::kGte:
    case PredOp::kPrefix:
    case PredOp::kIn: {
      if (!a.is_array() || a.size() != 2) {
        return Status::InvalidArgs(w + ": takes [column, operand], got " + DescribeJson(a));
      }
      ONESTORE_RETURN_IF_ERROR(ResolveColumn(a[0], t, w + "[0]", "a where", &p.column));
      Type ct = t.columns[p.column].type;
      if (p.op == PredOp::kPrefix) {
        if (ct != Type::kStr) {
          return Status::InvalidArgs(w + ": prefix needs a str column, \"" +
                                     t.columns[p.column].name + "\" is " + TypeName(ct));
        }
        ONESTORE_RETURN_IF_ERROR(Operand(a[1], t, p.column, w + "[1]", "prefix", &p.value));
      } else if (p.op == PredOp::kIn) {
        if (!a[1].is_array())
          return Status::InvalidArgs(w + "[1]: inArray takes a list, got " + DescribeJson(a[1]));
        for (size_t i = 0; i < a[1].size(); ++i) {
          Value v;
          ONESTORE_RETURN_IF_ERROR(
              Operand(a[1][i], t, p.column, w + "[1][" + std::to_string(i) + "]", "inArray", &v));
          p.values.push_back(std::move(v));
        }
      } else {
        ONESTORE_RETURN_IF_ERROR(Operand(a[1], t, p.column, w + "[1]", PredOpName(p.op), &p.value));
      }
      break;
    }
    case PredOp::kIsNull:
      ONESTORE_RETURN_IF_ERROR(ResolveColumn(a, t, w, "a where", &p.column));
      break;
    case PredOp::kAnd:
    case PredOp::kOr:
      if (!a.is_array())
        return Status::InvalidArgs(w + ": takes a list of predicates, got " + DescribeJson(a));
      for (size_t i = 0; i < a.size(); ++i) {
        Predicate c;
        ONESTORE_RETURN_IF_ERROR(
            ParsePredicateAt(a[i], t, w + "[" + std::to_string(i) + "]", depth + 1, &c));
        p.children.push_back(std::move(c));
      }
      break;
    case PredOp::kNot: {
      Predicate c;
      ONESTORE_RETURN_IF_ERROR(ParsePredicateAt(a, t, w, depth + 1, &c));
      p.children.push_back(std::move(c));
      break;
    }
  }
  *out = std::move(p);
  return Status::OK();
}

void Predicate::AppendJson(const TableSchema& t, std::string* out) const {
  out->append("{\"");
  out->append(PredOpName(op));
  out->append("\":");
  switch (op) {
    case PredOp::kIsNull:
      AppendJsonString(t.columns[column].name, out);
      break;
    case PredOp::kAnd:
    case PredOp::kOr:
      out->push_back('[');
      for (size_t i = 0; i < children.size(); ++i) {
        if (i) out->push_back(',');
        children[i].AppendJson(t, out);
      }
      out->push_back(']');
      break;
    case PredOp::kNot:
      children[0].AppendJson(t, out);
      break;
    case PredOp::kIn:
      out->push_back('[');
      AppendJsonString(t.columns[column].name, out);
      out->append(",[");
      for (size_t i = 0; i < values.size(); ++i) {
        if (i) out->push_back(',');
        values[i].AppendJson(out);
      }
      out->append("]]");
      break;
    default:
      out->push_back('[');
      AppendJsonString(t.columns[column].name, out);
      out->push_back(',');
      value.AppendJson(out);
      out->push_back(']');
  }
  out->push_back('}');
}

std::vector<Value> Query::OrderValues(const Row& row) const {
  std::vector<Value> v;
  v.reserve(order.size());
  for (const OrderTerm& o : order) v.push_back(row[o.column]);
  return v;
}

int Query::CompareRows(const Row& a, const Row& b) const {
  for (const OrderTerm& o : order) {
    int c = CompareValues(a[o.column], b[o.column]);
    if (c != 0) return o.desc ? -c : c;
  }
  return 0;
}

int Query::CompareToPosition(const Row& row, const std::vector<Value>& pos) const {
  for (size_t i = 0; i < order.size() && i < pos.size(); ++i) {
    int c = CompareValues(row[order[i].column], pos[i]);
    if (c != 0) return order[i].desc ? -c : c;
  }
  return 0;
}

namespace {

uint64_t Fnv(std::string_view s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string Hex(uint64_t v) {
  static const char kHex[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = kHex[v & 15];
  return s;
}

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void AppendBase64Url(std::string_view in, std::string* out) {
  out->reserve(out->size() + (in.size() + 2) / 3 * 4);
  size_t i = 0;
  while (i + 2 < in.size()) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    const char four[4] = {kB64[n >> 18], kB64[(n >> 12) & 63], kB64[(n >> 6) & 63], kB64[n & 63]};
    out->append(four, 4);
    i += 3;
  }
  if (i + 1 == in.size()) {
    uint32_t n = uint8_t(in[i]) << 16;
    *out += kB64[n >> 18];
    *out += kB64[(n >> 12) & 63];
  } else if (i + 2 == in.size()) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    *out += kB64[n >> 18];
    *out += kB64[(n >> 12) & 63];
    *out += kB64[(n >> 6) & 63];
  }
}

bool FromBase64Url(std::string_view in, std::string* out) {
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::strchr(kB64, c);
    if (c == 0 || p == nullptr) return false;
    acc = (acc << 6) | static_cast<uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

// The part of a query a cursor must share besides its order: table + where.
uint64_t WhereFingerprint(const Query& q) {
  std::string s = q.table->name;
  s.push_back('\0');
  if (q.where) q.where->AppendJson(*q.table, &s);
  return Fnv(s);
}

uint64_t OrderFingerprint(const Query& q, bool reversed) {
  std::string s;
  for (const OrderTerm& o : q.order) {
    s += std::to_string(o.column);
    s += (o.desc != reversed) ? 'd' : 'a';
  }
  return Fnv(s);
}

// A cursor's JSON text up to its values: [where, order, direction, [values]]
// with the where's and the order's fingerprints in hex.
std::string CursorHead(const Query& q) {
  return "[\"" + Hex(WhereFingerprint(q)) + "\",\"" + Hex(OrderFingerprint(q, false)) + "\",\"" +
         (q.order.empty() || !q.order[0].desc ? "asc" : "desc") + "\",[";
}

}  // namespace

// A query-cache miss (Store::ParsedQuery) or an updateWhere/deleteWhere: cold.
ONESTORE_COLD Status ParseQuery(const Json& j, const TableSchema& t, const std::string& where,
                                Query* out) {
  Query q;
  q.table = &t;
  if (!j.is_object())
    return Status::InvalidArgs(where + ": a query must be an object, got " + DescribeJson(j));
  auto w = j.find("where");
  if (w != j.end() && !w->is_null()) {
    Predicate p;
    ONESTORE_RETURN_IF_ERROR(ParsePredicate(*w, t, where + ".where", &p));
    q.where = std::move(p);
  }
  bool last_desc = false;
  std::vector<bool> used(t.columns.size(), false);
  auto ob = j.find("orderBy");
  if (ob != j.end() && !ob->is_null()) {
    if (!ob->is_array())
      return Status::InvalidArgs(where + ".orderBy: must be a list, got " + DescribeJson(*ob));
    for (size_t i = 0; i < ob->size(); ++i) {
      const Json& term = (*ob)[i];
      std::string tw = where + ".orderBy[" + std::to_string(i) + "]";
      const Json* name = &term;
      bool desc = false;
      if (term.is_array()) {
        if (term.empty() || term.size() > 2)
          return Status::InvalidArgs(tw + ": takes [column, \"asc\"|\"desc\"]");
        name = &term[0];
        if (term.size() == 2) {
          if (term[1] == "desc") {
            desc = true;
          } else if (term[1] != "asc") {
            return Status::InvalidArgs(tw + ": direction " + DescribeJson(term[1]) +
                                       " is not \"asc\" or \"desc\"");
          }
        }
      }
      OrderTerm o;
      ONESTORE_RETURN_IF_ERROR(ResolveColumn(*name, t, tw, "an orderBy", &o.column));
      o.desc = desc;
      last_desc = desc;
      if (used[o.column]) continue;  // a repeated column adds nothing to the order
      used[o.column] = true;
      q.order.push_back(o);
    }
  }
  for (int k : t.key) {
    if (!used[k]) q.order.push_back(OrderTerm{k, last_desc});
  }
  q.fingerprint = WhereFingerprint(q) ^ OrderFingerprint(q, false);
  q.cursor_head = CursorHead(q);
  *out = std::move(q);
  return Status::OK();
}

std::string EncodeCursor(const Query& q, const std::vector<Value>& position) {
  std::string s = q.cursor_head.empty() ? CursorHead(q) : q.cursor_head;
  for (size_t i = 0; i < position.size(); ++i) {
    if (i) s.push_back(',');
    position[i].AppendJson(&s);
  }
  s += "]]";
  std::string out = "c1.";
  AppendBase64Url(s, &out);
  return out;
}

Status DecodeCursor(const Query& q, std::string_view text, std::vector<Value>* position) {
  std::string shown(text.substr(0, 40));
  if (text.size() > 40) shown += "...";
  auto bad = [&](const std::string& why) {
    return Status::InvalidCursor("cursor \"" + shown + "\" " + why);
  };
  std::string raw;
  if (text.substr(0, 3) != "c1." || !FromBase64Url(text.substr(3), &raw)) {
    return bad("is not a onestore cursor (pass page().next back unchanged)");
  }
  // A cursor nests two levels ([where, order, direction, [values]]): anything
  // deeper is refused while reading, before it is built.
  Json j;
  bool too_deep = false;
  if (!TryParseJsonText(raw, /*max_depth=*/2, &j, &too_deep) || !j.is_array() || j.size() != 4 ||
      !j[0].is_string() || !j[1].is_string() || !j[2].is_string() || !j[3].is_array()) {
    return bad("is damaged");
  }
  // The direction the store wrote: the order's fingerprint holds it too,
  // this copy only words the other-direction message.
  if (j[2] != "asc" && j[2] != "desc") return bad("is damaged");
  if (j[0].get<std::string>() != Hex(WhereFingerprint(q))) {
    return bad("belongs to another query or table");
  }
  if (j[1].get<std::string>() != Hex(OrderFingerprint(q, false))) {
    if (j[1].get<std::string>() == Hex(OrderFingerprint(q, true))) {
      return bad("was made for the other direction (" + j[2].get<std::string>() + ")");
    }
    return bad("belongs to a query with another order");
  }
  if (j[3].size() != q.order.size()) return bad("is damaged");
  position->clear();
  for (size_t i = 0; i < q.order.size(); ++i) {
    Value v;
    const Column& c = q.table->columns[q.order[i].column];
    Status s = ValueFromJson(j[3][i], c.type, "cursor", &v);
    if (!s.ok()) return bad("is damaged");
    // No row has null in a required column: no cursor the store made does.
    if (v.is_null() && !c.optional) return bad("is damaged");
    position->push_back(std::move(v));
  }
  return Status::OK();
}

Status ParseKey(const Json& j, const TableSchema& t, const std::string& where, Key* out) {
  if (!j.is_array() || j.size() != t.key.size()) {
    std::string names;
    for (int k : t.key) names += (names.empty() ? "" : ", ") + t.columns[k].name;
    return Status::InvalidArgs(where + ": " + DescribeJson(j) + " is not a key of table \"" +
                               t.name + "\" (a list of: " + names + ")");
  }
  out->clear();
  for (size_t i = 0; i < t.key.size(); ++i) {
    const Column& c = t.columns[t.key[i]];
    Value v;
    ONESTORE_RETURN_IF_ERROR(
        ValueFromJson(j[i], c.type, where + "[" + std::to_string(i) + "]", &v));
    if (v.is_null()) {
      return Status::InvalidArgs(where + "[" + std::to_string(i) + "]: key column \"" + c.name +
                                 "\" cannot be null");
    }
    out->push_back(std::move(v));
  }
  return Status::OK();
}

Status CheckKeySize(const TableSchema& t, const Row& row, size_t op) {
  for (int k : t.key) {
    const Value& v = row[k];
    if (v.type() == Type::kStr && v.text().size() > kMaxKeyBytes) {
      const std::string& name = t.columns[k].name;
      return Status::Limit("ops[" + std::to_string(op) + "].row." + name +
                           ": a value of key column \"" + name + "\" is " +
                           std::to_string(v.text().size()) + " bytes of UTF-8, above the " +
                           std::to_string(kMaxKeyBytes) + " bytes a key value may hold");
    }
  }
  return Status::OK();
}

}  // namespace onestore
