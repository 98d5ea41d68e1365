#include "documents/documents.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "onestore/heap.h"
#include "query/query.h"
#include "values/json_text.h"

namespace onestore {

namespace {

// Column positions of the two tables (the order of their records below).
enum DocCol {
  kDId,
  kDOwner,
  kDKind,
  kDKey,
  kDVersion,
  kDSeq,
  kDRetired,
  kDBase,
  kDDeltas,
  kDBytes
};
enum DeltaCol { kVDoc, kVVersion, kVSeq, kVAt, kVActor, kVOp, kVPatch, kVValue, kVBase };

std::shared_ptr<const TableSchema> MakeTable(const char* record) {
  auto t = std::make_shared<TableSchema>();
  // `stored`: the store's own names start with "_", which user tables may not.
  Json j;
  Status st = ParseJsonText(record, "documents", &j);
  if (st.ok()) st = ParseTableSchema(j, "documents", t.get(), /*stored=*/true);
  (void)st;  // a constant record: checked by the tests
  return t;
}

Value OptStr(const std::optional<std::string>& s) { return s ? Value::Str(*s) : Value(); }

std::string Quote(const std::string& s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

// Runs a query on one of the two tables: every row, or at most `limit`.
Status Select(Backend* backend, const TableSchema& t, const Json& q, int64_t limit,
              std::vector<Row>* rows, const std::vector<Value>* after = nullptr,
              Query* parsed = nullptr) {
  Query local;
  Query* query = parsed ? parsed : &local;
  ONESTORE_RETURN_IF_ERROR(ParseQuery(q, t, "documents query", query));
  rows->clear();
  return backend->Page(*query, after, limit, rows);
}

Json Where(std::initializer_list<Json> terms) { return Json{{"and", Json(terms)}}; }

// The version row of document `id` that was current at `seq`, if any.
Status VersionAt(Backend* backend, int64_t id, int64_t seq, std::optional<Row>* out) {
  Json q = {{"where", Where({Json{{"eq", {"doc", id}}}, Json{{"lte", {"seq", seq}}}})},
            {"orderBy", Json::array({Json::array({"version", "desc"})})}};
  std::vector<Row> rows;
  ONESTORE_RETURN_IF_ERROR(Select(backend, *DeltasTable(), q, 1, &rows));
  out->reset();
  if (!rows.empty()) *out = std::move(rows[0]);
  return Status::OK();
}

// The document `id` as it was at `version`: its latest base at or before
// that version, then the patches after it.
Status Materialize(Backend* backend, int64_t id, int64_t version, Json* value) {
  Json q = {{"where", Where({Json{{"eq", {"doc", id}}}, Json{{"eq", {"base", 1}}},
                             Json{{"lte", {"version", version}}}})},
            {"orderBy", Json::array({Json::array({"version", "desc"})})}};
  std::vector<Row> rows;
  ONESTORE_RETURN_IF_ERROR(Select(backend, *DeltasTable(), q, 1, &rows));
  if (rows.empty()) {
    return Status::NotFound("document " + std::to_string(id) + " at version " +
                            std::to_string(version) + ": the deltas it needs are not retained");
  }
  const int64_t base = rows[0][kVVersion].int_value();
  Json range = {{"where", Where({Json{{"eq", {"doc", id}}}, Json{{"gte", {"version", base}}},
                                 Json{{"lte", {"version", version}}}})},
                {"orderBy", Json::array({Json::array({"version", "asc"})})}};
  ONESTORE_RETURN_IF_ERROR(Select(backend, *DeltasTable(), range, version - base + 1, &rows));
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const std::string where =
        "document " + std::to_string(id) + " version " + std::to_string(r[kVVersion].int_value());
    if (i == 0) {
      ONESTORE_RETURN_IF_ERROR(ParseJsonText(r[kVValue].text(), where, value));
    } else if (r[kVOp].text() == "change") {
      Json patch;
      ONESTORE_RETURN_IF_ERROR(ParseJsonText(r[kVPatch].text(), where, &patch));
      // A failed delta fails the whole load: no copy kept for it. Its limits
      // were checked when it was written.
      ONESTORE_RETURN_IF_ERROR(
          ApplyJsonPatch(patch, where, value, /*keep_on_failure=*/false, /*limit=*/false));
    }
  }
  return Status::OK();
}

// ---- JSON Patch preconditions (nlohmann applies; this only checks) ----

// A JSON Pointer's tokens (RFC 6901), or invalid/args.
Status PointerTokens(const Json& p, const std::string& where, std::vector<std::string>* out) {
  if (!p.is_string())
    return Status::InvalidArgs(where + ": " + DescribeJson(p) + " is not a JSON Pointer");
  const std::string& s = p.get_ref<const std::string&>();
  out->clear();
  if (s.empty()) return Status::OK();
  if (s[0] != '/') {
    return Status::InvalidArgs(where + ": " + DescribeJson(p) +
                               " is not a JSON Pointer (it must be \"\" or start with \"/\")");
  }
  std::string token;
  for (size_t i = 1; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '/') {
      out->push_back(token);
      token.clear();
    } else if (s[i] == '~') {
      if (i + 1 >= s.size() || (s[i + 1] != '0' && s[i + 1] != '1')) {
        return Status::InvalidArgs(where + ": " + DescribeJson(p) +
                                   " is not a JSON Pointer (\"~\" must be followed by 0 or 1)");
      }
      token.push_back(s[i + 1] == '0' ? '~' : '/');
      ++i;
    } else {
      token.push_back(s[i]);
    }
  }
  return Status::OK();
}

// An array index token: "0" or digits without a leading zero (at most 15).
// Counted in 64 bits: size_t is 32 bits in wasm, where 4294967297 wrapped
// to 1 and named an element it is not.
bool ArrayIndex(const std::string& t, size_t* index) {
  if (t.empty() || t.size() > 15 || (t.size() > 1 && t[0] == '0')) return false;
  uint64_t n = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > static_cast<uint64_t>(SIZE_MAX)) return false;  // past any array's end
  *index = static_cast<size_t>(n);
  return true;
}

// The value at the first `count` of `tokens`, or nullptr (J: Json or const
// Json, so the writers below reach the same value the checks resolved).
template <typename J>
J* Resolve(J& doc, const std::vector<std::string>& tokens, size_t count) {
  J* at = &doc;
  for (size_t i = 0; i < count; ++i) {
    const std::string& t = tokens[i];
    if (at->is_object()) {
      auto it = at->find(t);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      size_t idx = 0;
      if (!ArrayIndex(t, &idx) || idx >= at->size()) return nullptr;
      at = &(*at)[idx];
    } else {
      return nullptr;
    }
  }
  return at;
}

// Whether `add` at `tokens` can apply: the parent exists and is an object,
// or an array with "-" or an index up to its size.
bool CanAdd(const Json& doc, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return true;
  const Json* parent = Resolve(doc, tokens, tokens.size() - 1);
  if (parent == nullptr) return false;
  if (parent->is_object()) return true;
  if (!parent->is_array()) return false;
  size_t idx = 0;
  return tokens.back() == "-" || (ArrayIndex(tokens.back(), &idx) && idx <= parent->size());
}

// JSON equality as RFC 6902's test has it: objects equal when they have the
// same members in any order (ordered_json's == also compares the order).
bool SameJson(const Json& a, const Json& b) {
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !SameJson(it.value(), *other)) return false;
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameJson(a[i], b[i])) return false;
    }
    return true;
  }
  // An integer and a float are equal when the float is that integer
  // exactly: nlohmann compares them as doubles, where 2^62 + 1 equals 2^62.
  if (a.is_number_float() != b.is_number_float() && a.is_number() && b.is_number()) {
    const Json& i = a.is_number_float() ? b : a;
    const double f = (a.is_number_float() ? a : b).get<double>();
    if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0) || f != std::trunc(f)) {
      return false;
    }
    if (i.is_number_unsigned()) return f >= 0 && static_cast<uint64_t>(f) == i.get<uint64_t>();
    return static_cast<int64_t>(f) == i.get<int64_t>();
  }
  return a == b;
}

bool IsPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() >= b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

void DocRecordJson(int64_t id, const Row& d, int64_t version, int64_t seq, const Json& value,
                   std::string* out) {
  *out += "{\"id\":" + std::to_string(id) + ",\"address\":{\"kind\":" + Quote(d[kDKind].text());
  if (!d[kDKey].is_null()) *out += ",\"key\":" + Quote(d[kDKey].text());
  *out += "},\"version\":" + std::to_string(version) + ",\"seq\":" + std::to_string(seq) +
          ",\"value\":";
  AppendJsonText(value, out);
  out->push_back('}');
}

// The record of document row `d` at `at` (-1: now), or "null".
Status RecordAt(Backend* backend, const Row& d, int64_t at, std::string* out) {
  const int64_t id = d[kDId].int_value();
  int64_t version = d[kDVersion].int_value(), seq = d[kDSeq].int_value();
  if (at < 0) {
    if (!d[kDRetired].is_null()) {
      *out += "null";
      return Status::OK();
    }
  } else {
    std::optional<Row> v;
    ONESTORE_RETURN_IF_ERROR(VersionAt(backend, id, at, &v));
    if (!v || (*v)[kVOp].text() == "retire") {
      *out += "null";
      return Status::OK();
    }
    version = (*v)[kVVersion].int_value();
    seq = (*v)[kVSeq].int_value();
  }
  Json value;
  ONESTORE_RETURN_IF_ERROR(Materialize(backend, id, version, &value));
  DocRecordJson(id, d, version, seq, value, out);
  return Status::OK();
}

Status AddressQuery(const std::string& owner, const Json& address, const std::string& where,
                    bool live_only, Json* q) {
  if (!address.is_object() || !address.contains("kind") || !address["kind"].is_string()) {
    return Status::InvalidArgs(where + ": " + DescribeJson(address) +
                               " is not a document address {kind, key?}");
  }
  for (auto it = address.begin(); it != address.end(); ++it) {
    if (it.key() != "kind" && it.key() != "key") {
      return Status::InvalidArgs(where + ": unknown address field \"" + it.key() + "\"");
    }
    // The address is stored in str columns, which hold no NUL: refused
    // alike by a create and a find (a create took one, and no find could
    // reach it).
    if (it->is_string() && it->get_ref<const std::string&>().find('\0') != std::string::npos) {
      return Status::InvalidArgs(where + "." + it.key() + ": " + DescribeJson(*it) +
                                 " holds a NUL, which a document's address cannot");
    }
  }
  Json terms =
      Json::array({Json{{"eq", {"owner", owner}}}, Json{{"eq", {"kind", address["kind"]}}}});
  auto key = address.find("key");
  if (key == address.end() || key->is_null()) {
    terms.push_back(Json{{"isNull", "key"}});
  } else if (key->is_string()) {
    terms.push_back(Json{{"eq", {"key", *key}}});
  } else {
    return Status::InvalidArgs(where + ".key: " + DescribeJson(*key) + " is not a string");
  }
  if (live_only) terms.push_back(Json{{"isNull", "retired"}});
  *q = {{"where", Json{{"and", terms}}}};
  return Status::OK();
}

Status ReadInt(const Json& j, const char* name, const std::string& where, int64_t min,
               int64_t* out) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return Status::OK();
  if (!it->is_number_integer() || it->get<int64_t>() < min) {
    return Status::InvalidArgs(where + "." + name + ": " + DescribeJson(*it) +
                               " is not an integer >= " + std::to_string(min));
  }
  *out = it->get<int64_t>();
  return Status::OK();
}

}  // namespace

const std::shared_ptr<const TableSchema>& DocumentsTable() {
  static const auto* t = new std::shared_ptr<const TableSchema>(MakeTable(R"({"op":"table",
    "table":"_documents","version":1,"columns":{"id":{"type":"int"},"owner":{"type":"str"},
    "kind":{"type":"str"},"key":{"type":"str","optional":true},"version":{"type":"int"},
    "seq":{"type":"int"},"retired":{"type":"int","optional":true},"base":{"type":"int"},
    "deltas":{"type":"int"},"bytes":{"type":"int"}},"key":["id"],
    "indexes":{"address":["owner","kind","key"]}})"));
  return *t;
}

const std::shared_ptr<const TableSchema>& DeltasTable() {
  static const auto* t = new std::shared_ptr<const TableSchema>(MakeTable(R"({"op":"table",
    "table":"_deltas","version":1,"columns":{"doc":{"type":"int"},"version":{"type":"int"},
    "seq":{"type":"int"},"at":{"type":"int"},"actor":{"type":"json","optional":true},
    "op":{"type":"str"},"patch":{"type":"json","optional":true},
    "value":{"type":"json","optional":true},"base":{"type":"int"}},"key":["doc","version"]})"));
  return *t;
}

const std::shared_ptr<const TableSchema>& RestoresTable() {
  static const auto* t = new std::shared_ptr<const TableSchema>(MakeTable(R"({"op":"table",
    "table":"_restores","version":1,"columns":{"seq":{"type":"int"},"snapshot":{"type":"int"}},
    "key":["seq"]})"));
  return *t;
}

bool IsStoreTable(std::string_view name) {
  return name == kDocumentsTable || name == kDeltasTable || name == kRestoresTable;
}

bool IsDocOpName(const std::string& name) { return name.compare(0, 4, "doc.") == 0; }

Status ParseDocOp(const Json& j, const std::string& where, DocOp* out) {
  const std::string& name = j["op"].get_ref<const std::string&>();
  DocOp op;
  if (name == "doc.create") {
    op.kind = DocOpKind::kCreate;
  } else if (name == "doc.change") {
    op.kind = DocOpKind::kChange;
  } else if (name == "doc.retire") {
    op.kind = DocOpKind::kRetire;
  } else {
    return Status::InvalidArgs(where + ".op: unknown document op \"" + name +
                               "\" (doc.create, doc.change, doc.retire)");
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    bool known =
        k == "op" || k == "owner" || k == "id" || k == "version" ||
        (op.kind == DocOpKind::kCreate && (k == "kind" || k == "key" || k == "value")) ||
        (op.kind == DocOpKind::kChange && (k == "patch" || k == "base" || k == "checkpointWhen"));
    if (!known) return Status::InvalidArgs(where + ": unknown field \"" + k + "\" in a " + name);
  }
  auto owner = j.find("owner");
  if (owner == j.end() || !owner->is_string() || owner->get_ref<const std::string&>().empty()) {
    return Status::InvalidArgs(where + ".owner: a " + name +
                               " names its owner (a non-empty string)");
  }
  op.owner = owner->get<std::string>();
  ONESTORE_RETURN_IF_ERROR(CheckOwnerName(op.owner, where + ".owner"));
  auto id = j.find("id");
  if (id == j.end() || !id->is_number_integer() || id->get<int64_t>() < 1 ||
      id->get<int64_t>() > kMaxSafeInteger) {
    return Status::InvalidArgs(
        where + ".id: " + (id == j.end() ? std::string("missing") : DescribeJson(*id)) +
        " is not a document id (a positive safe integer)");
  }
  op.id = id->get<int64_t>();
  ONESTORE_RETURN_IF_ERROR(ReadInt(j, "version", where, 1, &op.version));
  if (op.kind == DocOpKind::kCreate) {
    Json address = Json::object();
    address["kind"] = j.contains("kind") ? j["kind"] : Json();
    if (j.contains("key")) address["key"] = j["key"];
    Json ignored;
    ONESTORE_RETURN_IF_ERROR(AddressQuery(op.owner, address, where, false, &ignored));
    op.doc_kind = address["kind"].get<std::string>();
    if (address.contains("key") && !address["key"].is_null())
      op.key = address["key"].get<std::string>();
    if (!j.contains("value"))
      return Status::InvalidArgs(where + ".value: a doc.create needs a value");
    op.value = j["value"];
  } else if (op.kind == DocOpKind::kChange) {
    auto patch = j.find("patch");
    if (patch == j.end() || !patch->is_array()) {
      return Status::InvalidArgs(
          where + ".patch: " + (patch == j.end() ? std::string("missing") : DescribeJson(*patch)) +
          " is not a JSON Patch (an array of ops, RFC 6902)");
    }
    op.patch = *patch;
    auto base = j.find("base");
    if (base != j.end() && !base->is_null()) {
      if (!base->is_boolean())
        return Status::InvalidArgs(where + ".base: " + DescribeJson(*base) +
                                   " is not true or false");
      op.base = base->get<bool>();
    }
    auto cw = j.find("checkpointWhen");
    if (cw != j.end() && !cw->is_null()) {
      if (!cw->is_object()) {
        return Status::InvalidArgs(where + ".checkpointWhen: " + DescribeJson(*cw) +
                                   " is not {deltas, bytes}");
      }
      ONESTORE_RETURN_IF_ERROR(
          ReadInt(*cw, "deltas", where + ".checkpointWhen", 0, &op.max_deltas));
      ONESTORE_RETURN_IF_ERROR(ReadInt(*cw, "bytes", where + ".checkpointWhen", 0, &op.max_bytes));
    }
  }
  *out = std::move(op);
  return Status::OK();
}

void DocOp::AppendJson(std::string* out) const {
  // What follows the value or patch, with the record's own end: room kept
  // for it when the value is written, so that a large value's record is
  // not grown again (and by doubling) for its last bytes.
  constexpr size_t kTail = 64;
  static const char* kNames[] = {"doc.create", "doc.change", "doc.retire"};
  *out += "{\"op\":\"" + std::string(kNames[static_cast<int>(kind)]) +
          "\",\"owner\":" + Quote(owner) + ",\"id\":" + std::to_string(id);
  if (kind == DocOpKind::kCreate) {
    *out += ",\"kind\":" + Quote(doc_kind);
    if (key) *out += ",\"key\":" + Quote(*key);
    *out += ",\"value\":";
    AppendDump(value, out, kTail);
  } else if (kind == DocOpKind::kChange) {
    *out += ",\"patch\":";
    AppendDump(patch, out, kTail);
    *out += std::string(",\"base\":") + (base.value_or(false) ? "true" : "false");
  }
  *out += ",\"version\":" + std::to_string(version) + "}";
}

// Adds `value` at `tokens`, where CanAdd holds: the whole document, a member
// (added, or replaced where it exists), an array's end ("-") or an index.
void AddAt(Json* doc, const std::vector<std::string>& tokens, Json value) {
  if (tokens.empty()) {
    *doc = std::move(value);
    return;
  }
  Json* parent = Resolve(*doc, tokens, tokens.size() - 1);
  size_t idx = 0;
  if (parent->is_object()) {
    (*parent)[tokens.back()] = std::move(value);
  } else if (tokens.back() == "-") {
    parent->push_back(std::move(value));
  } else {
    ArrayIndex(tokens.back(), &idx);
    parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(idx), std::move(value));
  }
}

// Removes the value at `tokens`, which Resolve found (not the whole document).
void RemoveAt(Json* doc, const std::vector<std::string>& tokens) {
  Json* parent = Resolve(*doc, tokens, tokens.size() - 1);
  size_t idx = 0;
  if (parent->is_object()) {
    parent->erase(tokens.back());
  } else {
    ArrayIndex(tokens.back(), &idx);
    parent->erase(idx);
  }
}

void JsonFootprint(const Json& v, size_t* bytes, int* depth) {
  *bytes = 0;
  *depth = 0;
  std::vector<std::pair<const Json*, int>> stack{{&v, 0}};
  while (!stack.empty()) {
    auto [j, d] = stack.back();
    stack.pop_back();
    *bytes += 32;
    if (j->is_string()) {
      *bytes += j->get_ref<const std::string&>().size();
    } else if (j->is_object()) {
      if (d + 1 > *depth) *depth = d + 1;
      for (auto it = j->begin(); it != j->end(); ++it) {
        *bytes += it.key().size() + 32;
        stack.emplace_back(&it.value(), d + 1);
      }
    } else if (j->is_array()) {
      if (d + 1 > *depth) *depth = d + 1;
      for (const Json& item : *j) stack.emplace_back(&item, d + 1);
    }
  }
}

namespace {
size_t FootprintOf(const Json& v) {
  size_t bytes = 0;
  int depth = 0;
  JsonFootprint(v, &bytes, &depth);
  return bytes;
}

// The refusals of a document past its bounds (kMaxDocumentFootprint,
// kMaxDocumentDepth), at `at` (a create's value, a change's patch or op).
Status TooLarge(const std::string& at, size_t footprint) {
  return Status::Limit(at + ": the document would hold about " + std::to_string(footprint >> 20) +
                       " MiB, above the " + std::to_string(kMaxDocumentFootprint >> 20) +
                       " MiB a document may hold");
}
Status TooDeep(const std::string& at, int depth) {
  return Status::InvalidArgs(at + ": the document would nest " + std::to_string(depth) +
                             " levels, above the " + std::to_string(kMaxDocumentDepth) +
                             " a document may (it could not be read back)");
}
}  // namespace

Status ApplyJsonPatch(const Json& patch, const std::string& where, Json* doc,
                      bool keep_on_failure, bool limit, DocSize* size) {
  if (!patch.is_array()) {
    return Status::InvalidArgs(where + ": " + DescribeJson(patch) +
                               " is not a JSON Patch (an array)");
  }
  Json copy;
  if (keep_on_failure) copy = *doc;
  Json& work = keep_on_failure ? copy : *doc;
  std::vector<std::string> path, from;
  // The document's footprint as the ops change it, checked before a value
  // is added (kMaxDocumentFootprint): each added value is measured once,
  // as copying it costs anyway; and the bound on its depth (DocSize).
  DocSize local;
  DocSize& known = size != nullptr ? *size : local;
  if (limit && !known.known) {
    JsonFootprint(work, &known.footprint, &known.depth);
    known.known = true;
  }
  size_t footprint = limit ? known.footprint : 0;
  int depth = known.depth;
  auto grow = [&](const Json& added, size_t i, size_t at_level) {
    if (!limit) return Status::OK();
    size_t bytes = 0;
    int added_depth = 0;
    JsonFootprint(added, &bytes, &added_depth);
    footprint += bytes;
    depth = std::max(depth, static_cast<int>(std::min<size_t>(at_level, kMaxDocumentDepth + 1)) + added_depth);
    if (footprint <= kMaxDocumentFootprint) return Status::OK();
    return TooLarge(where + ".patch[" + std::to_string(i) + "]", footprint);
  };
  for (size_t i = 0; i < patch.size(); ++i) {
    const Json& op = patch[i];
    // The op's name in errors, built only for one.
    auto w = [&] { return where + ".patch[" + std::to_string(i) + "]"; };
    auto name_of = op.is_object() ? op.find("op") : op.end();
    if (name_of == op.end() || !name_of->is_string()) {
      return Status::InvalidArgs(w() + ": " + DescribeJson(op) +
                                 " is not a JSON Patch op {op, path, ...}");
    }
    const std::string& name = name_of->get_ref<const std::string&>();
    auto path_of = op.find("path");
    if (path_of == op.end()) return Status::InvalidArgs(w() + ".path: missing");
    ONESTORE_RETURN_IF_ERROR(PointerTokens(*path_of, w() + ".path", &path));
    const bool needs_value = name == "add" || name == "replace" || name == "test";
    const bool needs_from = name == "move" || name == "copy";
    if (!needs_value && !needs_from && name != "remove") {
      return Status::InvalidArgs(
          w() + ".op: \"" + name +
          "\" is not a JSON Patch op (add, remove, replace, move, copy, test)");
    }
    auto value = op.find("value");
    if (needs_value && value == op.end()) return Status::InvalidArgs(w() + ".value: missing");
    auto from_of = op.find("from");
    if (needs_from) {
      if (from_of == op.end()) return Status::InvalidArgs(w() + ".from: missing");
      ONESTORE_RETURN_IF_ERROR(PointerTokens(*from_of, w() + ".from", &from));
    }
    auto fail = [&](const std::string& why) {
      return Status::InvalidArgs(w() + ": the patch does not apply: " + name + " at " +
                                 DescribeJson(*path_of) + " " + why);
    };
    if (name == "test") {
      const Json* target = Resolve(work, path, path.size());
      if (target == nullptr) return fail("(no such path)");
      if (!SameJson(*target, *value)) {
        return fail("failed: the value there is " + DescribeJson(*target) + ", not " +
                    DescribeJson(*value));
      }
    } else if (name == "replace") {
      Json* target = Resolve(work, path, path.size());
      if (target == nullptr) return fail("(no such path)");
      if (limit) footprint -= std::min(footprint, FootprintOf(*target));
      ONESTORE_RETURN_IF_ERROR(grow(*value, i, path.size()));
      *target = *value;
    } else if (name == "remove") {
      if (Resolve(work, path, path.size()) == nullptr) return fail("(no such path)");
      if (path.empty()) return fail("(the whole document cannot be removed)");
      if (limit) footprint -= std::min(footprint, FootprintOf(*Resolve(work, path, path.size())));
      RemoveAt(&work, path);
    } else if (name == "add") {
      if (!CanAdd(work, path)) return fail("(no such parent, or not an index of its array)");
      ONESTORE_RETURN_IF_ERROR(grow(*value, i, path.size()));
      AddAt(&work, path, *value);
    } else {  // move, copy
      Json* source = Resolve(work, from, from.size());
      if (source == nullptr) return fail("(no such from " + DescribeJson(*from_of) + ")");
      if (name == "copy") {
        if (!CanAdd(work, path)) return fail("(no such parent, or not an index of its array)");
        ONESTORE_RETURN_IF_ERROR(grow(*source, i, path.size()));
        AddAt(&work, path, *source);
      } else {
        // A move to where it is does nothing, the root's too: RFC 6902
        // forbids a move into a proper child only.
        if (from == path) continue;
        if (from.empty() || IsPrefix(from, path)) return fail("(a value cannot move into itself)");
        // The add is checked once the value is removed (an index may
        // shift). In place: a move that does not apply fails the patch,
        // and `work` is then dropped (the copy kept_on_failure made, or a
        // state the caller drops). A copy of the whole document for each
        // move made a patch of moves cost its count times the document.
        Json moved = std::move(*Resolve(work, from, from.size()));
        RemoveAt(&work, from);
        if (!CanAdd(work, path)) return fail("(no such parent once the value is removed)");
        AddAt(&work, path, std::move(moved));
        // Moved deeper by as many levels as the path is longer.
        if (path.size() > from.size()) depth += static_cast<int>(std::min<size_t>(path.size() - from.size(), kMaxDocumentDepth + 1));
      }
    }
  }
  if (keep_on_failure) *doc = std::move(copy);
  if (limit) {
    known.footprint = footprint;
    known.depth = depth;
  }
  return Status::OK();
}

Status EnsureDocumentTables(Backend* backend, const Catalog& catalog, bool* created) {
  *created = false;
  if (catalog.Find(kDocumentsTable) != nullptr) return Status::OK();
  for (const auto* t : {&DocumentsTable(), &DeltasTable()}) {
    Op op;
    op.kind = OpKind::kTable;
    op.table = *t;
    ONESTORE_RETURN_IF_ERROR(backend->Apply(&op, nullptr));
  }
  *created = true;
  return Status::OK();
}

Status EnsureRestoresTable(Backend* backend, const Catalog& catalog, bool* created) {
  *created = false;
  if (catalog.Find(kRestoresTable) != nullptr) return Status::OK();
  Op op;
  op.kind = OpKind::kTable;
  op.table = RestoresTable();
  ONESTORE_RETURN_IF_ERROR(backend->Apply(&op, nullptr));
  *created = true;
  return Status::OK();
}

Status DocWriter::Load(int64_t id, const std::string& where, Doc** out) {
  auto hit = docs_.find(id);
  if (hit != docs_.end()) {
    *out = &hit->second;
    return Status::OK();
  }
  std::optional<Row> row;
  if (!fresh_tables_)
    ONESTORE_RETURN_IF_ERROR(backend_->Get(*DocumentsTable(), {Value::Int(id)}, &row));
  if (!row) {
    *out = nullptr;
    return Status::OK();
  }
  const Row& r = *row;
  Doc d;
  d.owner = r[kDOwner].text();
  d.kind = r[kDKind].text();
  if (!r[kDKey].is_null()) d.key = r[kDKey].text();
  d.version = r[kDVersion].int_value();
  d.seq = r[kDSeq].int_value();
  if (!r[kDRetired].is_null()) d.retired = r[kDRetired].int_value();
  d.base = r[kDBase].int_value();
  d.deltas = r[kDDeltas].int_value();
  d.bytes = r[kDBytes].int_value();
  if (!d.retired) ONESTORE_RETURN_IF_ERROR(Materialize(backend_, id, d.version, &d.value));
  *out = &docs_.emplace(id, std::move(d)).first->second;
  return Status::OK();
}

Status DocWriter::Apply(DocOp* op, const std::string& where, std::vector<Op>* writes) {
  const std::string what = "document " + std::to_string(op->id);
  Doc* doc = nullptr;
  ONESTORE_RETURN_IF_ERROR(Load(op->id, where, &doc));
  Json patch;  // the delta row's patch
  const char* op_name = "create";
  bool base = false;
  if (op->kind == DocOpKind::kCreate) {
    if (doc != nullptr) return Status::InvalidArgs(where + ".id: " + what + " already exists");
    // One live document per address: this commit's documents first, then
    // the committed ones it has not touched.
    for (const auto& [id, d] : docs_) {
      if (!d.retired && d.owner == op->owner && d.kind == op->doc_kind && d.key == op->key) {
        return Status::InvalidArgs(where + ": the address {kind: " + Quote(op->doc_kind) +
                                   (op->key ? ", key: " + Quote(*op->key) : std::string()) +
                                   "} of owner " + Quote(op->owner) +
                                   " already holds live document " + std::to_string(id));
      }
    }
    if (!fresh_tables_) {
      Json address = {{"kind", op->doc_kind}};
      if (op->key) address["key"] = *op->key;
      Json q;
      ONESTORE_RETURN_IF_ERROR(AddressQuery(op->owner, address, where, true, &q));
      std::vector<Row> rows;
      ONESTORE_RETURN_IF_ERROR(Select(backend_, *DocumentsTable(), q, 16, &rows));
      for (const Row& r : rows) {
        if (docs_.count(r[kDId].int_value())) continue;  // its state here says otherwise
        return Status::InvalidArgs(where + ": the address {kind: " + Quote(op->doc_kind) +
                                   (op->key ? ", key: " + Quote(*op->key) : std::string()) +
                                   "} of owner " + Quote(op->owner) +
                                   " already holds live document " +
                                   std::to_string(r[kDId].int_value()));
      }
    }
    if (op->version != 0 && op->version != 1) {
      return Status::InvalidArgs(where + ".version: a new document's version is 1, not " +
                                 std::to_string(op->version));
    }
    // Its bounds, as a change's (measured before the value is copied: one
    // far past the footprint would stop the core on the copy).
    Doc d;
    JsonFootprint(op->value, &d.size.footprint, &d.size.depth);
    d.size.known = true;
    if (d.size.footprint > kMaxDocumentFootprint) return TooLarge(where + ".value", d.size.footprint);
    if (d.size.depth > kMaxDocumentDepth) return TooDeep(where + ".value", d.size.depth);
    // Its room, asked before the copy: the value kept here, and its text
    // twice (the delta row's, the outbox record's), each text one block.
    // Near the heap's cap a large one aborted the core in the record.
    if (d.size.footprint > kParseRoomAbove) {
      const double text = static_cast<double>(DumpedLength(op->value));
      if (!HeapHasRoomFor(static_cast<double>(d.size.footprint) + 2 * text, text)) {
        return Status::Limit(where + ".value: a new document of about " +
                             std::to_string(d.size.footprint >> 20) +
                             " MiB needs more of the wasm heap than is left; keep a "
                             "document this large in a file store");
      }
    }
    d.owner = op->owner;
    d.kind = op->doc_kind;
    d.key = op->key;
    d.version = 1;
    d.base = 1;
    d.value = op->value;
    doc = &docs_.emplace(op->id, std::move(d)).first->second;
    base = true;
  } else {
    if (doc == nullptr || doc->owner != op->owner || doc->retired) {
      return Status::InvalidArgs(where + ".id: owner " + Quote(op->owner) + " has no live " + what);
    }
    if (op->version != 0 && op->version != doc->version + 1) {
      return Status::InvalidArgs(where + ".version: " + what + " is at version " +
                                 std::to_string(doc->version) + ", so this op makes version " +
                                 std::to_string(doc->version + 1) + ", not " +
                                 std::to_string(op->version));
    }
    doc->version += 1;
    if (op->kind == DocOpKind::kChange) {
      op_name = "change";
      // In place, with no copy of the document: a patch that fails fails
      // the commit (or the replica's batch), which drops this writer and
      // every state it holds.
      ONESTORE_RETURN_IF_ERROR(ApplyJsonPatch(op->patch, where, &doc->value,
                                              /*keep_on_failure=*/false, /*limit=*/true, &doc->size));
      if (doc->size.depth > kMaxDocumentDepth) {
        // The bound says it may be too deep: measured.
        int depth = 0;
        JsonFootprint(doc->value, &doc->size.footprint, &depth);
        doc->size.depth = depth;
        if (depth > kMaxDocumentDepth) return TooDeep(where + ".patch", depth);
      }
      patch = op->patch;
      const int64_t bytes = static_cast<int64_t>(DumpedLength(patch));
      base = op->base ? *op->base
                      : doc->deltas + 1 > op->max_deltas || doc->bytes + bytes > op->max_bytes;
      if (base) {
        // A base is the whole value written again (its text and its row):
        // heap the commit's own check, which sees only the patch, did not
        // count. On a memory store every base stays in the heap.
        if (!HeapHasRoomFor(3.0 * static_cast<double>(doc->size.footprint), 0)) {
          return Status::Limit(where + ": " + what + "'s new base (its whole value, about " +
                               std::to_string(doc->size.footprint >> 20) +
                               " MiB) needs more of the wasm heap than is left; keep a "
                               "document this large in a file store");
        }
        doc->base = doc->version;
        doc->deltas = 0;
        doc->bytes = 0;
      } else {
        doc->deltas += 1;
        doc->bytes += bytes;
      }
    } else {
      op_name = "retire";
      doc->retired = seq_;
    }
  }
  op->version = doc->version;
  if (op->kind == DocOpKind::kChange) op->base = base;
  doc->seq = seq_;

  Op put;
  put.kind = OpKind::kPut;
  put.table = DocumentsTable();
  put.row = {Value::Int(op->id),
             Value::Str(doc->owner),
             Value::Str(doc->kind),
             OptStr(doc->key),
             Value::Int(doc->version),
             Value::Int(seq_),
             doc->retired ? Value::Int(*doc->retired) : Value(),
             Value::Int(doc->base),
             Value::Int(doc->deltas),
             Value::Int(doc->bytes)};
  writes->push_back(std::move(put));
  Op delta;
  delta.kind = OpKind::kPut;
  delta.table = DeltasTable();
  auto text = [](const Json& j) {
    std::string t;
    AppendDump(j, &t);
    return Value::JsonText(std::move(t));
  };
  delta.row = {Value::Int(op->id),
               Value::Int(doc->version),
               Value::Int(seq_),
               Value::Int(at_),
               actor_ ? text(*actor_) : Value(),
               Value::Str(op_name),
               op->kind == DocOpKind::kChange ? text(patch) : Value(),
               base ? text(doc->value) : Value(),
               Value::Int(base ? 1 : 0)};
  writes->push_back(std::move(delta));
  return Status::OK();
}

Status DocumentsRead(Backend* backend, bool tables_exist, bool restores_exist, int64_t head,
                     const Json& req, std::string* answer) {
  answer->clear();
  if (!req.is_object() || !req.contains("call") || !req["call"].is_string() ||
      !req.contains("owner") || !req["owner"].is_string()) {
    return Status::InvalidArgs("documents: " + DescribeJson(req) + " is not a documents request");
  }
  const std::string call = req["call"].get<std::string>();
  const std::string owner = req["owner"].get<std::string>();
  const std::string where = "documents." + call;
  int64_t at = -1;
  ONESTORE_RETURN_IF_ERROR(ReadInt(req, "at", where + " options", 0, &at));
  if (at > head) {
    return Status::InvalidArgs(where + ": at " + std::to_string(at) + " is after the head " +
                               std::to_string(head));
  }
  if (at >= 0 && restores_exist && (call == "find" || call == "load")) {
    // A restore after `at` to a snapshot from before it took the versions
    // of `at` away: the history here would answer with an older version.
    Json q = {{"where", Where({Json{{"gt", {"seq", at}}}, Json{{"lt", {"snapshot", at}}}})},
              {"orderBy", Json::array({Json::array({"seq", "asc"})})}};
    std::vector<Row> rows;
    ONESTORE_RETURN_IF_ERROR(Select(backend, *RestoresTable(), q, 1, &rows));
    if (!rows.empty()) {
      return Status::NotFound(
          where + ": the documents' history at seq " + std::to_string(at) +
          " is gone: the restore at seq " + std::to_string(rows[0][0].int_value()) +
          " took it back to its snapshot of seq " + std::to_string(rows[0][1].int_value()) +
          "; store.at(" + std::to_string(at) + ") reads the store as it was then");
    }
  }
  auto doc_row = [&](std::optional<Row>* row) -> Status {
    auto id = req.find("id");
    if (id == req.end() || !id->is_number_integer() || id->get<int64_t>() < 1) {
      return Status::InvalidArgs(where + ": " +
                                 (id == req.end() ? std::string("missing id") : DescribeJson(*id)) +
                                 " is not a document id");
    }
    row->reset();
    if (tables_exist) {
      ONESTORE_RETURN_IF_ERROR(
          backend->Get(*DocumentsTable(), {Value::Int(id->get<int64_t>())}, row));
    }
    if (*row && (**row)[kDOwner].text() != owner) row->reset();  // another owner's
    return Status::OK();
  };
  if (call == "load") {
    std::optional<Row> row;
    ONESTORE_RETURN_IF_ERROR(doc_row(&row));
    if (!row) {
      *answer = "null";
      return Status::OK();
    }
    return RecordAt(backend, *row, at, answer);
  }
  if (call == "versions") {
    std::optional<Row> row;
    ONESTORE_RETURN_IF_ERROR(doc_row(&row));
    *answer = "[";
    if (row) {
      // The version rows without their bases and patches (ScanColumns: a
      // memory store walks them in place, a sqlite one selects the columns
      // listed here): a base's row holds the whole value, and reading them
      // held every base in the heap in turn, refused near a full heap
      // (docs/reliability.md, "A full wasm heap").
      Json q = {{"where", Json{{"eq", {"doc", (*row)[kDId].int_value()}}}}};
      Query parsed;
      ONESTORE_RETURN_IF_ERROR(ParseQuery(q, *DeltasTable(), "documents query", &parsed));
      const int64_t last = (*row)[kDVersion].int_value();
      std::vector<bool> wanted(DeltasTable()->columns.size(), false);
      for (int c : {kVVersion, kVSeq, kVAt, kVActor, kVOp}) wanted[c] = true;
      // In version order, whatever the scan's.
      std::map<int64_t, std::string> versions;
      ONESTORE_RETURN_IF_ERROR(backend->ScanColumns(parsed, wanted, [&](const Row& r) {
        const int64_t v = r[kVVersion].int_value();
        if (v > last) return true;
        std::string& one = versions[v];
        one = "{\"version\":" + std::to_string(v) +
              ",\"seq\":" + std::to_string(r[kVSeq].int_value()) +
              ",\"at\":" + std::to_string(r[kVAt].int_value()) +
              ",\"op\":" + Quote(r[kVOp].text());
        if (!r[kVActor].is_null()) one += ",\"actor\":" + r[kVActor].text();
        one.push_back('}');
        return true;
      }));
      for (const auto& [v, one] : versions) {
        if (answer->size() > 1) answer->push_back(',');
        *answer += one;
      }
    }
    answer->push_back(']');
    return Status::OK();
  }
  if (call == "find") {
    Json q;
    ONESTORE_RETURN_IF_ERROR(AddressQuery(owner, req.value("address", Json()), where, at < 0, &q));
    if (!tables_exist) {
      *answer = "null";
      return Status::OK();
    }
    // Every incarnation at the address (newest first); the one live at `at`.
    q["orderBy"] = Json::array({Json::array({"id", "desc"})});
    std::vector<Row> rows;
    ONESTORE_RETURN_IF_ERROR(Select(backend, *DocumentsTable(), q, 100000, &rows));
    for (const Row& r : rows) {
      std::string one;
      ONESTORE_RETURN_IF_ERROR(RecordAt(backend, r, at, &one));
      if (one != "null") {
        *answer = std::move(one);
        return Status::OK();
      }
    }
    *answer = "null";
    return Status::OK();
  }
  if (call == "list") {
    int64_t limit = 50;
    ONESTORE_RETURN_IF_ERROR(ReadInt(req, "limit", where, 1, &limit));
    if (limit > 1000) {
      return Status::InvalidArgs(where + ": limit " + std::to_string(limit) +
                                 " is not between 1 and 1000");
    }
    const Json filter = req.value("filter", Json::object());
    if (!filter.is_object()) {
      return Status::InvalidArgs(where + ": filter " + DescribeJson(filter) + " is not {kind?}");
    }
    Json terms = Json::array({Json{{"eq", {"owner", owner}}}, Json{{"isNull", "retired"}}});
    for (auto it = filter.begin(); it != filter.end(); ++it) {
      if (it.key() != "kind" || !it->is_string()) {
        return Status::InvalidArgs(where + ": filter " + DescribeJson(filter) +
                                   " is not {kind?} (kind a string)");
      }
      terms.push_back(Json{{"eq", {"kind", *it}}});
    }
    if (!tables_exist) {
      *answer = "{\"rows\":[]}";
      return Status::OK();
    }
    Json q = {
        {"where", Json{{"and", terms}}},
        {"orderBy", Json::array({Json::array({"kind", "asc"}), Json::array({"key", "asc"})})}};
    Query parsed;
    ONESTORE_RETURN_IF_ERROR(ParseQuery(q, *DocumentsTable(), where, &parsed));
    std::vector<Value> after;
    const bool has_after = req.contains("after") && !req["after"].is_null();
    if (has_after) {
      if (!req["after"].is_string()) {
        return Status::InvalidCursor(where + ": after " + DescribeJson(req["after"]) +
                                     " is not a cursor");
      }
      ONESTORE_RETURN_IF_ERROR(DecodeCursor(parsed, req["after"].get<std::string>(), &after));
    }
    std::vector<Row> rows;
    PageBytes bytes;  // cut at kReadBytes: then `next` too
    ONESTORE_RETURN_IF_ERROR(
        backend->Page(parsed, has_after ? &after : nullptr, limit + 1, &rows, &bytes));
    bool more = static_cast<int64_t>(rows.size()) > limit || bytes.cut;
    if (static_cast<int64_t>(rows.size()) > limit) rows.resize(limit);
    *answer = "{\"rows\":[";
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i) answer->push_back(',');
      ONESTORE_RETURN_IF_ERROR(RecordAt(backend, rows[i], -1, answer));
      // Each record holds its document's value: the page stops at
      // kReadBytes of records too.
      if (answer->size() >= kReadBytes && i + 1 < rows.size()) {
        rows.resize(i + 1);
        more = true;
      }
    }
    answer->push_back(']');
    if (more) {
      *answer += ",\"next\":";
      AppendJsonString(EncodeCursor(parsed, parsed.OrderValues(rows.back())), answer);
    }
    answer->push_back('}');
    return Status::OK();
  }
  return Status::InvalidArgs(where + ": unknown call (find, load, list, versions)");
}

}  // namespace onestore
