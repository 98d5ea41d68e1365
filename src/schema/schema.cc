#include "schema/schema.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "values/json_text.h"
#include "values/vector.h"

namespace onestore {

int TableSchema::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool TableSchema::HasIntKey() const {
  return key.size() == 1 && columns[key[0]].type == Type::kInt;
}

Json ColumnJson(const Column& c) {
  Json cj = Json::object();
  cj["type"] = TypeName(c.type);
  if (c.type == Type::kVector) cj["dims"] = c.dims;
  if (c.optional) cj["optional"] = true;
  if (c.has_default) {
    std::string text;
    c.def.AppendJson(&text);
    Json def;
    bool too_deep = false;
    if (!TryParseJsonText(text, kNoJsonDepthLimit, &def, &too_deep)) def = Json();
    cj["default"] = std::move(def);
  }
  return cj;
}

Json TableSchema::ToJson() const {
  Json j = Json::object();
  j["op"] = "table";
  j["table"] = name;
  j["version"] = version;
  Json cols = Json::object();
  for (const Column& c : columns) cols[c.name] = ColumnJson(c);
  j["columns"] = cols;
  Json key_names = Json::array();
  for (int k : key) key_names.push_back(columns[k].name);
  j["key"] = key_names;
  Json idx = Json::object();
  for (const Index& ix : indexes) {
    // The columns as declared: the key suffix is implied.
    Json names = Json::array();
    for (size_t i = 0; i < ix.declared; ++i) names.push_back(columns[ix.columns[i]].name);
    idx[ix.name] = names;
  }
  j["indexes"] = idx;
  return j;
}

bool TableSchema::SameShape(const TableSchema& o) const {
  if (columns.size() != o.columns.size() || key != o.key || indexes.size() != o.indexes.size())
    return false;
  for (size_t i = 0; i < columns.size(); ++i) {
    const Column &a = columns[i], &b = o.columns[i];
    if (a.name != b.name || a.type != b.type || a.dims != b.dims || a.optional != b.optional ||
        a.has_default != b.has_default || a.def != b.def)
      return false;
  }
  for (size_t i = 0; i < indexes.size(); ++i) {
    if (indexes[i].name != o.indexes[i].name || indexes[i].declared != o.indexes[i].declared ||
        indexes[i].columns != o.indexes[i].columns)
      return false;
  }
  return true;
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i], or 0 when it is not
// one (a stray or missing continuation byte, an overlong form, a surrogate,
// beyond U+10FFFF). Sets *cp to its code point.
size_t Utf8SequenceAt(std::string_view s, size_t i, uint32_t* cp) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    n = 2, min = 0x80, *cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, min = 0x800, *cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, min = 0x10000, *cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (d & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return n;
}

// The name as a JSON string for messages (escapes shown, never raw bytes).
std::string Shown(std::string_view name) {
  std::string cut(name.substr(0, 80));
  return Json(cut).dump(-1, ' ', false, Json::error_handler_t::replace) +
         (name.size() > 80 ? "..." : "");
}

bool StartsWithFolded(std::string_view s, std::string_view lower_prefix) {
  return s.size() >= lower_prefix.size() &&
         FoldName(s.substr(0, lower_prefix.size())) == lower_prefix;
}

// Parses one column's wire form ("str" or {"type":..,"dims"?:..,"optional"?:..,"default"?:..};
// a vector column is {"type":"vector","dims":n}).
Status ParseColumn(const std::string& name, const Json& cj, const std::string& cw, Column* out) {
  Column c;
  c.name = name;
  Json type_j =
      cj.is_string() ? cj : (cj.is_object() && cj.contains("type") ? cj["type"] : Json());
  if (!type_j.is_string() || !ParseTypeName(type_j.get<std::string>(), &c.type)) {
    return Status::InvalidArgs(cw + ": unknown column type " + type_j.dump() +
                               " (use str, int, bool, num, json or vector)");
  }
  if (c.type == Type::kVector) {
    const Json* dims = cj.is_object() && cj.contains("dims") ? &cj["dims"] : nullptr;
    if (dims == nullptr || !dims->is_number_integer() || dims->get<int64_t>() < 1 ||
        dims->get<int64_t>() > kMaxVectorDims) {
      return Status::InvalidArgs(cw + ".dims: a vector column needs dims, its number of float32, " +
                                 "from 1 to " + std::to_string(kMaxVectorDims) + ", got " +
                                 (dims ? DescribeJson(*dims) : std::string("none")));
    }
    c.dims = static_cast<int>(dims->get<int64_t>());
  } else if (cj.is_object() && cj.contains("dims")) {
    return Status::InvalidArgs(cw + ".dims: only a vector column has dims (this one is " +
                               TypeName(c.type) + ")");
  }
  if (cj.is_object()) {
    if (cj.contains("optional")) {
      if (!cj["optional"].is_boolean()) return Status::InvalidArgs(cw + ".optional: not a bool");
      c.optional = cj["optional"].get<bool>();
    }
    if (cj.contains("default")) {
      ONESTORE_RETURN_IF_ERROR(
          ValueFromJson(cj["default"], c.type, cw + ".default", &c.def, c.dims));
      if (c.def.is_null() && !c.optional) {
        return Status::InvalidArgs(cw + ".default: null default on a column that is not optional");
      }
      c.has_default = true;
    }
  }
  *out = std::move(c);
  return Status::OK();
}

}  // namespace

std::string FoldName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

Status CheckPlainName(std::string_view name, const std::string& what) {
  auto refuse = [&](const std::string& why) {
    return Status::InvalidArgs(what + ": " + Shown(name) + " is not a valid name: " + why);
  };
  if (name.empty()) return Status::InvalidArgs(what + ": a name cannot be empty");
  if (name.size() > kMaxNameBytes) {
    return refuse("it is " + std::to_string(name.size()) + " bytes of UTF-8, above the limit of " +
                  std::to_string(kMaxNameBytes));
  }
  if (name[0] == '_') return refuse("a leading _ is kept for the store's own tables");
  if (StartsWithFolded(name, "sqlite_"))
    return refuse("a leading sqlite_ is kept for SQLite's own");
  for (size_t i = 0; i < name.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8SequenceAt(name, i, &cp);
    if (n == 0) return refuse("it is not well-formed UTF-8");
    if (cp == '/' || cp == ':') {
      return refuse(std::string("\"") + static_cast<char>(cp) +
                    "\" separates the parts of a table's name");
    }
    if (cp == '"') return refuse("it holds a double quote");
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
      return refuse("it holds a control character (U+0000 to U+001F or U+007F to U+009F)");
    }
    if (cp == 0xFFFD) {
      return refuse(
          "it holds U+FFFD, which is what a lone surrogate becomes; a name must be "
          "well-formed text");
    }
    i += n;
  }
  return Status::OK();
}

namespace {

// The owner part of `shown` (a table's full name, or the owner's name):
// "<type>" or "<host>:<type>", the host not "session", whose `things` are
// named `plain`.
Status OwnerPart(std::string_view owner, std::string_view shown, const std::string& where,
                 const char* things, const char* plain) {
  const size_t colon = owner.find(':');
  if (colon != std::string_view::npos) {
    std::string_view host = owner.substr(0, colon);
    ONESTORE_RETURN_IF_ERROR(CheckPlainName(host, where + " (host of " + Shown(shown) + ")"));
    if (host == "session") {
      return Status::InvalidArgs(where + ": " + Shown(shown) + ": the " + things +
                                 " of host \"session\" are named \"" + plain + "\"");
    }
    owner = owner.substr(colon + 1);
  }
  return CheckPlainName(owner, where + " (type of " + Shown(shown) + ")");
}

}  // namespace

Status CheckTableName(std::string_view full, const std::string& where) {
  const size_t slash = full.find('/');
  if (slash == std::string_view::npos) {
    return Status::InvalidArgs(
        where + ": " + Shown(full) +
        " is not a table name \"<type>/<name>\" or \"<host>:<type>/<name>\"");
  }
  ONESTORE_RETURN_IF_ERROR(OwnerPart(full.substr(0, slash), full, where, "tables", "<type>/<name>"));
  return CheckPlainName(full.substr(slash + 1), where + " (name of " + Shown(full) + ")");
}

Status CheckOwnerName(std::string_view owner, const std::string& where) {
  return OwnerPart(owner, owner, where, "owners", "<type>");
}

Status ParseTableSchema(const Json& j, const std::string& where, TableSchema* out, bool stored) {
  if (!j.is_object()) return Status::InvalidArgs(where + ": a table record must be an object");
  TableSchema t;
  auto name_it = j.find("table");
  if (name_it == j.end() || !name_it->is_string()) {
    return Status::InvalidArgs(where + ".table: a table needs a name \"<type>/<name>\"");
  }
  t.name = name_it->get<std::string>();
  if (!stored) ONESTORE_RETURN_IF_ERROR(CheckTableName(t.name, where + ".table"));
  auto ver = j.find("version");
  if (ver != j.end()) {
    if (!ver->is_number_integer() || ver->get<int64_t>() < 1) {
      return Status::InvalidArgs(where + ".version: " + ver->dump() + " is not a positive integer");
    }
    t.version = ver->get<int64_t>();
  }
  auto cols = j.find("columns");
  if (cols == j.end() || !cols->is_object() || cols->empty()) {
    return Status::InvalidArgs(where + ".columns: table \"" + t.name +
                               "\" needs at least one column");
  }
  if (!stored && cols->size() > kMaxColumns) {
    return Status::InvalidArgs(where + ".columns: table \"" + t.name + "\" has " +
                               std::to_string(cols->size()) + " columns, above the limit of " +
                               std::to_string(kMaxColumns) + " that every backend can hold");
  }
  std::map<std::string, std::string> folded;  // FoldName -> the name that has it
  auto check_fold = [&](const std::string& name, const std::string& w, const char* kind) {
    auto [it, fresh] = folded.emplace(FoldName(name), name);
    if (fresh || stored) return Status::OK();
    return Status::InvalidArgs(w + ": " + kind + " " + Shown(name) + " and " + Shown(it->second) +
                               " differ only in letter case, which SQLite does not tell apart");
  };
  for (auto it = cols->begin(); it != cols->end(); ++it) {
    std::string cw = where + ".columns." + it.key();
    if (!stored) ONESTORE_RETURN_IF_ERROR(CheckPlainName(it.key(), cw));
    ONESTORE_RETURN_IF_ERROR(check_fold(it.key(), where + ".columns", "columns"));
    Column c;
    ONESTORE_RETURN_IF_ERROR(ParseColumn(it.key(), it.value(), cw, &c));
    t.columns.push_back(std::move(c));
  }
  auto key = j.find("key");
  if (key == j.end() || !key->is_array() || key->empty()) {
    return Status::InvalidArgs(where + ".key: table \"" + t.name +
                               "\" needs a key of one or more columns");
  }
  auto resolve = [&](const Json& name, const std::string& w, int* pos) -> Status {
    if (!name.is_string())
      return Status::InvalidArgs(w + ": " + name.dump() + " is not a column name");
    *pos = t.ColumnIndex(name.get<std::string>());
    if (*pos < 0)
      return Status::InvalidArgs(w + ": unknown column \"" + name.get<std::string>() +
                                 "\" in table \"" + t.name + "\"");
    Type ty = t.columns[*pos].type;
    if (ty != Type::kStr && ty != Type::kInt) {
      return Status::InvalidArgs(w + ": column \"" + name.get<std::string>() + "\" is " +
                                 TypeName(ty) + "; keys and indexes take only str and int columns");
    }
    return Status::OK();
  };
  std::set<int> seen;
  for (size_t i = 0; i < key->size(); ++i) {
    int pos;
    ONESTORE_RETURN_IF_ERROR(resolve((*key)[i], where + ".key[" + std::to_string(i) + "]", &pos));
    if (!seen.insert(pos).second) return Status::InvalidArgs(where + ".key: column listed twice");
    if (t.columns[pos].optional) {
      return Status::InvalidArgs(where + ".key: key column \"" + t.columns[pos].name +
                                 "\" cannot be optional");
    }
    t.key.push_back(pos);
  }
  auto idx = j.find("indexes");
  if (idx != j.end() && !idx->is_null()) {
    if (!idx->is_object())
      return Status::InvalidArgs(where + ".indexes: must be an object of column lists");
    folded.clear();
    for (auto it = idx->begin(); it != idx->end(); ++it) {
      std::string iw = where + ".indexes." + it.key();
      if (!stored) ONESTORE_RETURN_IF_ERROR(CheckPlainName(it.key(), iw));
      ONESTORE_RETURN_IF_ERROR(check_fold(it.key(), where + ".indexes", "indexes"));
      if (!it.value().is_array() || it.value().empty()) {
        return Status::InvalidArgs(iw + ": an index is a non-empty list of columns");
      }
      Index ix;
      ix.name = it.key();
      std::set<int> in_index;
      for (size_t i = 0; i < it.value().size(); ++i) {
        int pos;
        ONESTORE_RETURN_IF_ERROR(resolve(it.value()[i], iw + "[" + std::to_string(i) + "]", &pos));
        if (!in_index.insert(pos).second) return Status::InvalidArgs(iw + ": column listed twice");
        ix.columns.push_back(pos);
      }
      ix.declared = ix.columns.size();
      for (int k : t.key) {
        if (in_index.insert(k).second) ix.columns.push_back(k);
      }
      t.indexes.push_back(std::move(ix));
    }
  }
  *out = std::move(t);
  return Status::OK();
}

namespace {

Status ReadChangeVersion(const Json& j, const TableSchema& before, const std::string& where,
                         bool strictly_higher, int64_t* version) {
  auto v = j.find("version");
  if (v == j.end() || !v->is_number_integer()) {
    return Status::InvalidArgs(where + ".version: a schema change carries the table's new version, an integer, got " +
                               (v == j.end() ? std::string("nothing") : DescribeJson(*v)));
  }
  *version = v->get<int64_t>();
  if (*version < before.version || (strictly_higher && *version == before.version)) {
    return Status::InvalidArgs(where + ".version: " + std::to_string(*version) + " is not above " +
                               "table \"" + before.name + "\"'s version " +
                               std::to_string(before.version));
  }
  return Status::OK();
}

// True when a name is taken in `t` by a column (in any letter case).
bool HasColumnFolded(const TableSchema& t, const std::string& name, const std::string& except) {
  const std::string f = FoldName(name);
  for (const Column& c : t.columns) {
    if (c.name != except && FoldName(c.name) == f) return true;
  }
  return false;
}

}  // namespace

Status ParseAlter(const Json& j, std::shared_ptr<const TableSchema> before, const std::string& where,
                  TableSchema* after, SchemaChange* change) {
  if (!j.is_object()) return Status::InvalidArgs(where + ": an alter must be an object");
  TableSchema t = *before;
  SchemaChange ch;
  ch.before = before;
  ONESTORE_RETURN_IF_ERROR(ReadChangeVersion(j, *before, where, true, &t.version));
  for (size_t i = 0; i < t.columns.size(); ++i) ch.source.push_back(static_cast<int>(i));
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k != "op" && k != "table" && k != "version" && k != "drop" && k != "rename" && k != "add") {
      return Status::InvalidArgs(where + "." + k + ": an alter takes drop, rename and add");
    }
  }
  auto drop = j.find("drop");
  if (drop != j.end()) {
    if (!drop->is_array()) return Status::InvalidArgs(where + ".drop: must be a list of column names");
    for (size_t i = 0; i < drop->size(); ++i) {
      const Json& n = (*drop)[i];
      const std::string w = where + ".drop[" + std::to_string(i) + "]";
      if (!n.is_string()) return Status::InvalidArgs(w + ": " + DescribeJson(n) + " is not a column name");
      const std::string name = n.get<std::string>();
      const int pos = t.ColumnIndex(name);
      if (pos < 0) {
        return Status::InvalidArgs(w + ": table \"" + t.name + "\" has no column " + Shown(name));
      }
      for (int k : t.key) {
        if (k == pos) {
          return Status::InvalidArgs(w + ": column " + Shown(name) + " is part of the key of table \"" +
                                     t.name + "\"; a key changes by an eager migration");
        }
      }
      if (t.columns.size() == 1) return Status::InvalidArgs(w + ": a table keeps at least one column");
      t.columns.erase(t.columns.begin() + pos);
      ch.source.erase(ch.source.begin() + pos);
      for (int& k : t.key) k -= k > pos ? 1 : 0;
      std::vector<Index> kept;
      for (Index& ix : t.indexes) {
        bool uses = false;
        for (int& c : ix.columns) {
          uses = uses || c == pos;
          c -= c > pos ? 1 : 0;
        }
        if (uses) {
          ch.dropped_indexes.push_back(ix.name);
        } else {
          kept.push_back(std::move(ix));
        }
      }
      t.indexes = std::move(kept);
      ch.drop.push_back(name);
    }
  }
  auto rename = j.find("rename");
  if (rename != j.end()) {
    if (!rename->is_object()) {
      return Status::InvalidArgs(where + ".rename: must be an object {old: new}");
    }
    for (auto it = rename->begin(); it != rename->end(); ++it) {
      const std::string w = where + ".rename." + it.key();
      const int pos = t.ColumnIndex(it.key());
      if (pos < 0) {
        return Status::InvalidArgs(w + ": table \"" + t.name + "\" has no column " + Shown(it.key()));
      }
      if (!it.value().is_string()) {
        return Status::InvalidArgs(w + ": " + DescribeJson(it.value()) + " is not a column name");
      }
      const std::string to = it.value().get<std::string>();
      ONESTORE_RETURN_IF_ERROR(CheckPlainName(to, w));
      if (HasColumnFolded(t, to, it.key())) {
        return Status::InvalidArgs(w + ": table \"" + t.name + "\" already has a column " + Shown(to) +
                                   " (letter case aside)");
      }
      t.columns[pos].name = to;
      ch.rename.emplace_back(it.key(), to);
    }
  }
  auto add = j.find("add");
  if (add != j.end()) {
    if (!add->is_object()) {
      return Status::InvalidArgs(where + ".add: must be an object {name: column}");
    }
    for (auto it = add->begin(); it != add->end(); ++it) {
      const std::string w = where + ".add." + it.key();
      ONESTORE_RETURN_IF_ERROR(CheckPlainName(it.key(), w));
      if (HasColumnFolded(t, it.key(), "")) {
        return Status::InvalidArgs(w + ": table \"" + t.name + "\" already has a column " +
                                   Shown(it.key()) + " (letter case aside)");
      }
      Column c;
      ONESTORE_RETURN_IF_ERROR(ParseColumn(it.key(), it.value(), w, &c));
      if (!c.optional && !c.has_default) {
        return Status::InvalidArgs(w + ": an added column needs a default (or optional()), so that " +
                                   "the rows already stored have a value");
      }
      t.columns.push_back(std::move(c));
      ch.source.push_back(-1);
      ch.add.push_back(t.columns.back());
    }
  }
  if (t.columns.size() > kMaxColumns) {
    return Status::InvalidArgs(where + ": table \"" + t.name + "\" would have " +
                               std::to_string(t.columns.size()) + " columns, above the limit of " +
                               std::to_string(kMaxColumns));
  }
  *after = std::move(t);
  *change = std::move(ch);
  return Status::OK();
}

Status ParseIndexChange(const Json& j, std::shared_ptr<const TableSchema> before,
                        const std::string& where, TableSchema* after, SchemaChange* change) {
  if (!j.is_object()) return Status::InvalidArgs(where + ": an index change must be an object");
  TableSchema t = *before;
  SchemaChange ch;
  ch.before = before;
  ONESTORE_RETURN_IF_ERROR(ReadChangeVersion(j, *before, where, false, &t.version));
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k != "op" && k != "table" && k != "version" && k != "drop" && k != "create") {
      return Status::InvalidArgs(where + "." + k + ": an index change takes drop and create");
    }
  }
  auto drop = j.find("drop");
  if (drop != j.end()) {
    if (!drop->is_array()) return Status::InvalidArgs(where + ".drop: must be a list of index names");
    for (size_t i = 0; i < drop->size(); ++i) {
      const Json& n = (*drop)[i];
      const std::string w = where + ".drop[" + std::to_string(i) + "]";
      if (!n.is_string()) return Status::InvalidArgs(w + ": " + DescribeJson(n) + " is not an index name");
      const std::string name = n.get<std::string>();
      auto found = std::find_if(t.indexes.begin(), t.indexes.end(),
                                [&](const Index& ix) { return ix.name == name; });
      if (found == t.indexes.end()) {
        return Status::InvalidArgs(w + ": table \"" + t.name + "\" has no index " + Shown(name));
      }
      t.indexes.erase(found);
      ch.drop_indexes.push_back(name);
    }
  }
  auto create = j.find("create");
  if (create != j.end()) {
    if (!create->is_object()) {
      return Status::InvalidArgs(where + ".create: must be an object of column lists");
    }
    // The table record's own checks (column types, names, letter case), on
    // the table with the new indexes.
    Json record = t.ToJson();
    for (auto it = create->begin(); it != create->end(); ++it) {
      for (const Index& ix : t.indexes) {
        if (FoldName(ix.name) == FoldName(it.key())) {
          return Status::InvalidArgs(where + ".create." + it.key() + ": table \"" + t.name +
                                     "\" already has an index " + Shown(ix.name));
        }
      }
      record["indexes"][it.key()] = it.value();
    }
    TableSchema with;
    ONESTORE_RETURN_IF_ERROR(ParseTableSchema(record, where, &with));
    for (const Index& ix : with.indexes) {
      if (create->contains(ix.name)) ch.create_indexes.push_back(ix);
    }
    t.indexes = with.indexes;
  }
  *after = std::move(t);
  *change = std::move(ch);
  return Status::OK();
}

Json AlterJson(const TableSchema& after, const SchemaChange& ch) {
  Json j = Json::object();
  j["op"] = "alter";
  j["table"] = after.name;
  j["version"] = after.version;
  if (!ch.drop.empty()) j["drop"] = ch.drop;
  if (!ch.rename.empty()) {
    Json r = Json::object();
    for (const auto& [from, to] : ch.rename) r[from] = to;
    j["rename"] = r;
  }
  if (!ch.add.empty()) {
    Json a = Json::object();
    for (const Column& c : ch.add) a[c.name] = ColumnJson(c);
    j["add"] = a;
  }
  return j;
}

Json IndexChangeJson(const TableSchema& after, const SchemaChange& ch) {
  Json j = Json::object();
  j["op"] = "index";
  j["table"] = after.name;
  j["version"] = after.version;
  if (!ch.drop_indexes.empty()) j["drop"] = ch.drop_indexes;
  if (!ch.create_indexes.empty()) {
    Json c = Json::object();
    for (const Index& ix : ch.create_indexes) {
      Json names = Json::array();
      for (size_t i = 0; i < ix.declared; ++i) names.push_back(after.columns[ix.columns[i]].name);
      c[ix.name] = names;
    }
    j["create"] = c;
  }
  return j;
}

const TableSchema* Catalog::Find(std::string_view name) const {
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const TableSchema> Catalog::FindShared(std::string_view name) const {
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : it->second;
}

Status Catalog::Lookup(std::string_view name, const std::string& where,
                       const TableSchema** out) const {
  *out = Find(name);
  if (*out == nullptr) {
    return Status::InvalidArgs(where + ": unknown table \"" + std::string(name) +
                               "\" (open it with owner.table(def) first)");
  }
  return Status::OK();
}

const TableSchema* Catalog::FindCaseTwin(std::string_view name) const {
  auto it = folded_.find(FoldName(name));
  if (it == folded_.end() || it->second == name) return nullptr;
  return Find(it->second);
}

void Catalog::Put(std::shared_ptr<const TableSchema> t) {
  folded_[FoldName(t->name)] = t->name;
  tables_[t->name] = std::move(t);
}

std::vector<std::shared_ptr<const TableSchema>> Catalog::All() const {
  std::vector<std::shared_ptr<const TableSchema>> out;
  for (const auto& [name, t] : tables_) out.push_back(t);
  return out;
}

}  // namespace onestore
