#include "schema/schema.h"

#include <cstdint>
#include <set>

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

Json TableSchema::ToJson() const {
  Json j = Json::object();
  j["op"] = "table";
  j["table"] = name;
  j["version"] = version;
  Json cols = Json::object();
  for (const Column& c : columns) {
    Json cj = Json::object();
    cj["type"] = TypeName(c.type);
    if (c.optional) cj["optional"] = true;
    if (c.has_default) {
      std::string text;
      c.def.AppendJson(&text);
      cj["default"] = Json::parse(text, nullptr, false);
    }
    cols[c.name] = cj;
  }
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
    if (a.name != b.name || a.type != b.type || a.optional != b.optional ||
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
    if (cp < 0x20 || cp == 0x7F) return refuse("it holds a control character (NUL included)");
    if (cp == 0xFFFD) {
      return refuse(
          "it holds U+FFFD, which is what a lone surrogate becomes; a name must be "
          "well-formed text");
    }
    i += n;
  }
  return Status::OK();
}

Status CheckTableName(std::string_view full, const std::string& where) {
  const size_t slash = full.find('/');
  if (slash == std::string_view::npos) {
    return Status::InvalidArgs(
        where + ": " + Shown(full) +
        " is not a table name \"<type>/<name>\" or \"<host>:<type>/<name>\"");
  }
  std::string_view owner = full.substr(0, slash);
  std::string_view name = full.substr(slash + 1);
  const size_t colon = owner.find(':');
  if (colon != std::string_view::npos) {
    std::string_view host = owner.substr(0, colon);
    ONESTORE_RETURN_IF_ERROR(CheckPlainName(host, where + " (host of " + Shown(full) + ")"));
    if (host == "session") {
      return Status::InvalidArgs(where + ": " + Shown(full) +
                                 ": the tables of host \"session\" are named \"<type>/<name>\"");
    }
    owner = owner.substr(colon + 1);
  }
  ONESTORE_RETURN_IF_ERROR(CheckPlainName(owner, where + " (type of " + Shown(full) + ")"));
  return CheckPlainName(name, where + " (name of " + Shown(full) + ")");
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
    c.name = it.key();
    const Json& cj = it.value();
    Json type_j =
        cj.is_string() ? cj : (cj.is_object() && cj.contains("type") ? cj["type"] : Json());
    if (!type_j.is_string() || !ParseTypeName(type_j.get<std::string>(), &c.type)) {
      return Status::InvalidArgs(cw + ": unknown column type " + type_j.dump() +
                                 " (use str, int, bool, num or json)");
    }
    if (cj.is_object()) {
      if (cj.contains("optional")) {
        if (!cj["optional"].is_boolean()) return Status::InvalidArgs(cw + ".optional: not a bool");
        c.optional = cj["optional"].get<bool>();
      }
      if (cj.contains("default")) {
        ONESTORE_RETURN_IF_ERROR(ValueFromJson(cj["default"], c.type, cw + ".default", &c.def));
        if (c.def.is_null() && !c.optional) {
          return Status::InvalidArgs(cw +
                                     ".default: null default on a column that is not optional");
        }
        c.has_default = true;
      }
    }
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
