#include "schema/schema.h"

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
    Json names = Json::array();
    // Only the declared part: the key suffix is implied.
    size_t declared = ix.columns.size();
    // Strip the trailing key columns that were appended.
    while (declared > 0) {
      int c = ix.columns[declared - 1];
      bool is_key_suffix = false;
      for (int k : key) is_key_suffix |= (k == c);
      if (!is_key_suffix) break;
      --declared;
    }
    for (size_t i = 0; i < declared; ++i) names.push_back(columns[ix.columns[i]].name);
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
    if (indexes[i].name != o.indexes[i].name || indexes[i].columns != o.indexes[i].columns)
      return false;
  }
  return true;
}

namespace {

bool ValidName(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == '"') return false;
  }
  return true;
}

}  // namespace

Status ParseTableSchema(const Json& j, const std::string& where, TableSchema* out) {
  if (!j.is_object()) return Status::InvalidArgs(where + ": a table record must be an object");
  TableSchema t;
  auto name_it = j.find("table");
  if (name_it == j.end() || !name_it->is_string() || !ValidName(name_it->get<std::string>())) {
    return Status::InvalidArgs(
        where + ".table: a table needs a name (text without quotes or control characters)");
  }
  t.name = name_it->get<std::string>();
  if (!t.name.empty() && t.name[0] == '_') {
    return Status::InvalidArgs(where + ".table: \"" + t.name +
                               "\" starts with _, which is kept for system tables");
  }
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
  for (auto it = cols->begin(); it != cols->end(); ++it) {
    std::string cw = where + ".columns." + it.key();
    if (!ValidName(it.key())) return Status::InvalidArgs(cw + ": not a valid column name");
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
    for (auto it = idx->begin(); it != idx->end(); ++it) {
      std::string iw = where + ".indexes." + it.key();
      if (!ValidName(it.key())) return Status::InvalidArgs(iw + ": not a valid index name");
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

void Catalog::Put(std::shared_ptr<const TableSchema> t) { tables_[t->name] = std::move(t); }

std::vector<std::shared_ptr<const TableSchema>> Catalog::All() const {
  std::vector<std::shared_ptr<const TableSchema>> out;
  for (const auto& [name, t] : tables_) out.push_back(t);
  return out;
}

}  // namespace onestore
