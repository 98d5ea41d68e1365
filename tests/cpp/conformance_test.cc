// Runs the conformance vectors of tests/conformance/*.json (the format is in
// tests/conformance/README.md) against onestore::Store's JSON API on every
// backend: memory, sqlite ":memory:" and sqlite on a temp file. Every backend
// must give exactly the rows, counts and error codes the vectors hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backends/sqlite/sqlite_backend.h"
#include "commit/store.h"
#include "host_bound_connection.h"

#ifndef ONESTORE_SOURCE_DIR
#define ONESTORE_SOURCE_DIR "."
#endif

namespace onestore {
namespace {

// Vectors keep object order (a table's columns are ordered); comparisons use
// plain nlohmann::json, where objects compare by content and 2 == 2.0.
using Plain = nlohmann::json;

std::string VectorDir() { return std::string(ONESTORE_SOURCE_DIR) + "/tests/conformance"; }

std::vector<std::string> VectorFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(VectorDir(), ec)) {
    if (e.path().extension() == ".json") files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool IsBigInt(const Json& j) {
  return j.is_object() && j.size() == 1 && j.contains("$bigint") && j["$bigint"].is_string();
}

// {"$bigint":"digits"} -> JSON integer digits, for what goes to the store.
Json ToWire(const Json& j) {
  if (IsBigInt(j)) return Json::parse(j["$bigint"].get<std::string>(), nullptr, false);
  if (j.is_array()) {
    Json out = Json::array();
    for (const Json& e : j) out.push_back(ToWire(e));
    return out;
  }
  if (j.is_object()) {
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = ToWire(it.value());
    return out;
  }
  return j;
}

constexpr int64_t kSafe = 9007199254740991LL;

// The comparable form of a value: {"$bigint":"d"} and an integer beyond 2^53
// both become the string "d" (the page encoding of such ints).
Plain Comparable(const Json& j) {
  if (IsBigInt(j)) return Plain(j["$bigint"].get<std::string>());
  if (j.is_number_integer()) {
    if (j.is_number_unsigned()) {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(kSafe)) return Plain(std::to_string(u));
      return Plain(static_cast<int64_t>(u));
    }
    int64_t i = j.get<int64_t>();
    if (i > kSafe || i < -kSafe) return Plain(std::to_string(i));
    return Plain(i);
  }
  if (j.is_array()) {
    Plain out = Plain::array();
    for (const Json& e : j) out.push_back(Comparable(e));
    return out;
  }
  if (j.is_object()) {
    Plain out = Plain::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = Comparable(it.value());
    return out;
  }
  return Plain::parse(j.dump());
}

Json ParseText(const std::string& text) { return Json::parse(text, nullptr, false); }

struct TableInfo {
  std::vector<std::string> columns;
  std::vector<int> key;  // positions of the key columns
};

struct BackendParam {
  const char* label;
  const char* backend;
  bool file;
  // The sqlite backend over HostBoundTestConnection: the SQL a Durable
  // Object runs (no SQL functions of ours, numbers as doubles).
  bool host_bound = false;
};

void PrintTo(const BackendParam& p, std::ostream* os) { *os << p.label; }

const BackendParam kBackends[] = {
    {"memory", "memory", false},
    {"sqlite_memory", "sqlite", false},
    {"sqlite_file", "sqlite", true},
    {"sqlite_host_bound", "sqlite", false, true},
};

// Runs the cases of one vector file on one backend; collects failures.
class VectorRunner {
 public:
  VectorRunner(const BackendParam& backend, const std::string& file)
      : backend_(backend), file_(file) {}

  void Run() {
    std::string path = VectorDir() + "/" + file_;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr) << "cannot open " << path;
    std::string text;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
    doc_ = ParseText(text);
    ASSERT_FALSE(doc_.is_discarded()) << path << " is not valid JSON";
    ASSERT_TRUE(doc_.contains("cases") && doc_["cases"].is_array()) << path;
    for (const Json& t : doc_.value("tables", Json::array())) {
      TableInfo info;
      for (auto it = t["columns"].begin(); it != t["columns"].end(); ++it)
        info.columns.push_back(it.key());
      for (const Json& k : t["key"]) {
        auto pos = std::find(info.columns.begin(), info.columns.end(), k.get<std::string>());
        info.key.push_back(static_cast<int>(pos - info.columns.begin()));
      }
      tables_[t["table"].get<std::string>()] = info;
    }
    int index = 0;
    for (const Json& c : doc_["cases"]) RunCase(c, index++);
  }

 private:
  std::string TempPath(int index) {
    return ::testing::TempDir() + "onestore_conformance_" + backend_.label + "_" +
           std::filesystem::path(file_).stem().string() + "_" + std::to_string(index) + ".sqlite";
  }

  static void RemoveFiles(const std::string& path) {
    for (const char* suffix : {"", "-journal", "-wal", "-shm"})
      std::remove((path + suffix).c_str());
  }

  void RunCase(const Json& c, int index) {
    case_name_ = c.value("name", "case " + std::to_string(index));
    saved_.clear();
    OpenOptions o;
    o.backend = backend_.backend;
    std::string path;
    if (backend_.file) {
      path = TempPath(index);
      RemoveFiles(path);
      o.path = path;
    } else {
      o.path = ":memory:";
    }
    o.id = "conformance";
    std::unique_ptr<Store> store;
    Status s = backend_.host_bound
                   ? Store::OpenWith(NewSqlBackend(std::make_unique<HostBoundTestConnection>()),
                                     o.id, &store)
                   : Store::Open(o, &store);
    if (!s.ok()) {
      ADD_FAILURE() << Where(-1, Json()) << "open failed: " << s.ToString();
      return;
    }
    store_ = store.get();
    bool ok = true;
    if (doc_.contains("tables") && !doc_["tables"].empty()) {
      std::string result;
      s = store_->Commit(ToWire(doc_["tables"]).dump(), R"({"owner":"conformance"})", &result);
      if (!s.ok()) {
        ADD_FAILURE() << Where(-1, Json()) << "declaring the tables failed: " << s.ToString();
        ok = false;
      }
    }
    int step = 0;
    if (ok && doc_.contains("setup")) {
      for (const Json& st : doc_["setup"]) {
        if (!RunStep(st, step, true)) {
          ok = false;
          break;
        }
        ++step;
      }
    }
    step = 0;
    if (ok) {
      for (const Json& st : c["steps"]) {
        if (!RunStep(st, step++, false)) break;
      }
    }
    store_->Close();
    store_ = nullptr;
    store.reset();
    if (backend_.file) RemoveFiles(path);
  }

  std::string Where(int step, const Json& st, bool setup = false) const {
    std::ostringstream out;
    out << "[" << backend_.label << "] " << file_ << " / \"" << case_name_ << "\"";
    if (step >= 0) out << (setup ? " / setup step " : " / step ") << step;
    if (st.is_object() && st.contains("note")) out << " (" << st["note"].get<std::string>() << ")";
    out << ": ";
    return out.str();
  }

  // Checks `s` against the step's "error" (if any). Returns true when the
  // step should go on to compare a successful answer.
  bool CheckStatus(const Status& s, const Json& st, int step, bool setup, bool* failed) {
    *failed = false;
    if (st.contains("error")) {
      std::string want = st["error"].get<std::string>();
      if (s.ok()) {
        ADD_FAILURE() << Where(step, st, setup) << "expected error " << want
                      << ", but it succeeded";
        *failed = true;
      } else if (want != CodeString(s.code())) {
        ADD_FAILURE() << Where(step, st, setup) << "expected error " << want << ", got "
                      << s.ToString();
        *failed = true;
      }
      return false;
    }
    if (!s.ok()) {
      ADD_FAILURE() << Where(step, st, setup) << "unexpected error " << s.ToString();
      *failed = true;
      return false;
    }
    return true;
  }

  Plain KeyOf(const std::string& table, const Json& row) const {
    auto it = tables_.find(table);
    Plain key = Plain::array();
    if (it == tables_.end() || !row.is_array()) return key;
    for (int k : it->second.key) key.push_back(Comparable(row[k]));
    return key;
  }

  // An expected key: an array, or a bare value for a one-column key.
  static Plain ExpectedKey(const Json& k) {
    if (k.is_array()) return Comparable(k);
    Plain key = Plain::array();
    key.push_back(Comparable(k));
    return key;
  }

  bool Expect(bool cond, int step, const Json& st, bool setup, const std::string& what) {
    if (!cond) ADD_FAILURE() << Where(step, st, setup) << what;
    return cond;
  }

  // One page call. Returns false (after reporting) on a failure.
  Status PageOnce(const Json& p, const std::string& cursor, Json* page) {
    std::string text;
    Json query = p.contains("query") ? ToWire(p["query"]) : Json::object();
    int64_t limit = p.value("limit", 1000);
    Status s = store_->Page(p["table"].get<std::string>(), query.dump(), limit, cursor, &text);
    if (s.ok()) {
      *page = ParseText(text);
      if (page->is_discarded() || !page->is_object() || !page->contains("rows")) {
        return Status::InvalidArgs("page answer is not {\"rows\":...}: " + text);
      }
    }
    return s;
  }

  bool RunStep(const Json& st, int step, bool setup) {
    bool failed = false;
    // A step of the JS API alone (owner.tx, handle.neighbours): the wire
    // steps around it check the same tables here.
    if (st.value("jsOnly", false)) return true;
    if (st.contains("commit")) {
      std::string result;
      Status s = store_->Commit(ToWire(st["commit"]).dump(), R"({"owner":"conformance"})", &result);
      if (!CheckStatus(s, st, step, setup, &failed)) return !failed;
      if (st.contains("counts")) {
        Json r = ParseText(result);
        Plain got = r.is_object() && r.contains("counts") ? Comparable(r["counts"]) : Plain();
        return Expect(got == Comparable(st["counts"]), step, st, setup,
                      "counts: expected " + Comparable(st["counts"]).dump() + ", got " +
                          got.dump() + " (commit answer " + result + ")");
      }
      return true;
    }
    if (st.contains("get")) {
      const Json& g = st["get"];
      std::string row;
      Status s = store_->Get(g["table"].get<std::string>(), ToWire(g["key"]).dump(), &row);
      if (!CheckStatus(s, st, step, setup, &failed)) return !failed;
      Plain got = Comparable(ParseText(row));
      Plain want = Comparable(st["row"]);
      return Expect(got == want, step, st, setup, "get: expected " + want.dump() + ", got " + row);
    }
    if (st.contains("count")) {
      const Json& c = st["count"];
      int64_t n = -1;
      Json query = c.contains("query") ? ToWire(c["query"]) : Json::object();
      Status s = store_->Count(c["table"].get<std::string>(), query.dump(), &n);
      if (!CheckStatus(s, st, step, setup, &failed)) return !failed;
      return Expect(n == st["expect"].get<int64_t>(), step, st, setup,
                    "count: expected " + st["expect"].dump() + ", got " + std::to_string(n));
    }
    if (st.contains("tx")) {
      // An owner.tx of the JS API: here its recorded "ops" are committed as
      // wire ops (without their counts), and must give those counts.
      Json ops = Json::array();
      Json counts = Json::array();
      for (const Json& op : st["ops"]) {
        Json plain = op;
        counts.push_back(op.contains("count") ? op["count"] : Json(1));
        plain.erase("count");
        ops.push_back(plain);
      }
      Json wire = Json::object();
      wire["commit"] = ops;
      wire["counts"] = counts;
      if (st.contains("note")) wire["note"] = st["note"];
      return RunStep(wire, step, setup);
    }
    if (st.contains("page")) return RunPage(st, step, setup);
    if (st.contains("doc")) return RunDocuments(st, step, setup);
    if (st.contains("nearest")) return RunNearest(st, step, setup);
    ADD_FAILURE() << Where(step, st, setup) << "unknown step " << st.dump();
    return false;
  }

  // A documents read (Store::Documents): its answer, or with "pages" the ids
  // of each page of a list followed through its cursors. versions answers
  // are compared without their times and actors.
  bool RunDocuments(const Json& st, int step, bool setup) {
    bool failed = false;
    Json request = ToWire(st["doc"]);
    std::string answer;
    if (st.contains("pages")) {
      Json pages = Json::array();
      for (int guard = 0; guard < 1000; ++guard) {
        Status s = store_->Documents(request.dump(), &answer);
        if (!CheckStatus(s, st, step, setup, &failed)) return !failed;
        Json page = ParseText(answer);
        Json ids = Json::array();
        for (const Json& d : page["rows"]) ids.push_back(d["id"]);
        if (!ids.empty() || pages.empty()) pages.push_back(ids);
        if (!page.contains("next")) break;
        request["after"] = page["next"];
      }
      return Expect(Comparable(pages) == Comparable(st["pages"]), step, st, setup,
                    "documents pages: expected " + st["pages"].dump() + ", got " + pages.dump());
    }
    Status s = store_->Documents(request.dump(), &answer);
    if (!CheckStatus(s, st, step, setup, &failed)) return !failed;
    Json got = ParseText(answer);
    if (request.value("call", "") == "versions" && got.is_array()) {
      for (Json& v : got) {
        v.erase("at");
        v.erase("actor");
      }
    }
    return Expect(Comparable(got) == Comparable(st["expect"]), step, st, setup,
                  "documents: expected " + st["expect"].dump() + ", got " + answer);
  }

  // A nearest call (Store::Nearest): the keys and exact distances of its hits.
  bool RunNearest(const Json& st, int step, bool setup) {
    bool failed = false;
    Json request = ToWire(st["nearest"]);
    const std::string table = request["table"].get<std::string>();
    request.erase("table");
    std::string answer;
    Status s = store_->Nearest(table, request.dump(), &answer);
    if (!CheckStatus(s, st, step, setup, &failed)) return !failed;
    Json a = ParseText(answer);
    Plain got = Plain::array();
    for (size_t i = 0; i < a["rows"].size(); ++i) {
      Plain hit = Plain::array();
      hit.push_back(KeyOf(table, a["rows"][i]));
      hit.push_back(Plain::parse(a["distances"][i].dump()));
      got.push_back(hit);
    }
    Plain want = Plain::array();
    for (const Json& h : st["hits"]) {
      Plain hit = Plain::array();
      hit.push_back(ExpectedKey(h[0]));
      hit.push_back(Plain::parse(h[1].dump()));
      want.push_back(hit);
    }
    return Expect(got == want, step, st, setup,
                  "nearest: expected " + want.dump() + ", got " + got.dump() + " (" + answer + ")");
  }

  bool RunPage(const Json& st, int step, bool setup) {
    const Json& p = st["page"];
    const std::string table = p["table"].get<std::string>();
    std::string cursor;
    bool from_start = true;
    if (p.contains("after")) {
      auto it = saved_.find(p["after"].get<std::string>());
      if (it == saved_.end()) {
        ADD_FAILURE() << Where(step, st, setup) << "no saved cursor " << p["after"];
        return false;
      }
      cursor = it->second;
      from_start = false;
    } else if (p.contains("cursor")) {
      cursor = p["cursor"].get<std::string>();
      from_start = false;
    }
    bool failed = false;
    Json page;
    Status s = PageOnce(p, cursor, &page);
    if (!CheckStatus(s, st, step, setup, &failed)) return !failed;

    int64_t total = 0;
    bool read_to_end = false;
    if (st.contains("pages")) {
      Plain got_pages = Plain::array();
      for (int guard = 0;; ++guard) {
        Plain keys = Plain::array();
        for (const Json& row : page["rows"]) keys.push_back(KeyOf(table, row));
        total += static_cast<int64_t>(page["rows"].size());
        if (!keys.empty()) got_pages.push_back(keys);
        if (!page.contains("next")) break;
        if (keys.empty()) {
          ADD_FAILURE() << Where(step, st, setup) << "an empty page carries a next cursor";
          return false;
        }
        if (guard > 10000) {
          ADD_FAILURE() << Where(step, st, setup) << "the cursors do not end";
          return false;
        }
        std::string next = page["next"].get<std::string>();
        s = PageOnce(p, next, &page);
        if (!s.ok()) {
          ADD_FAILURE() << Where(step, st, setup) << "following next failed: " << s.ToString();
          return false;
        }
      }
      Plain want = Plain::array();
      for (const Json& pg : st["pages"]) {
        Plain keys = Plain::array();
        for (const Json& k : pg) keys.push_back(ExpectedKey(k));
        want.push_back(keys);
      }
      if (!Expect(got_pages == want, step, st, setup,
                  "pages: expected " + want.dump() + ", got " + got_pages.dump()))
        return false;
      read_to_end = true;
    } else {
      total = static_cast<int64_t>(page["rows"].size());
      read_to_end = !page.contains("next");
      if (st.contains("save")) {
        if (!Expect(page.contains("next"), step, st, setup, "expected a next cursor to save"))
          return false;
        saved_[st["save"].get<std::string>()] = page["next"].get<std::string>();
      }
      if (st.contains("rows")) {
        Plain got = Comparable(page["rows"]);
        Plain want = Comparable(st["rows"]);
        if (!Expect(got == want, step, st, setup,
                    "rows: expected " + want.dump() + ", got " + got.dump()))
          return false;
      } else if (st.contains("keys")) {
        Plain got = Plain::array();
        for (const Json& row : page["rows"]) got.push_back(KeyOf(table, row));
        Plain want = Plain::array();
        for (const Json& k : st["keys"]) want.push_back(ExpectedKey(k));
        if (!Expect(got == want, step, st, setup,
                    "keys: expected " + want.dump() + ", got " + got.dump()))
          return false;
      }
    }
    // A page read from the start to the end has as many rows as count says.
    if (from_start && read_to_end) {
      int64_t n = -1;
      Json query = p.contains("query") ? ToWire(p["query"]) : Json::object();
      s = store_->Count(table, query.dump(), &n);
      if (!Expect(s.ok() && n == total, step, st, setup,
                  "count of the same query: expected " + std::to_string(total) + ", got " +
                      (s.ok() ? std::to_string(n) : s.ToString())))
        return false;
    }
    return true;
  }

  const BackendParam& backend_;
  std::string file_;
  Json doc_;
  std::map<std::string, TableInfo> tables_;
  std::map<std::string, std::string> saved_;
  std::string case_name_;
  Store* store_ = nullptr;
};

class ConformanceTest : public ::testing::TestWithParam<std::tuple<BackendParam, std::string>> {};

TEST_P(ConformanceTest, EveryBackendGivesTheAnswersOfTheVectors) {
  VectorRunner runner(std::get<0>(GetParam()), std::get<1>(GetParam()));
  runner.Run();
}

std::string ParamName(const ::testing::TestParamInfo<ConformanceTest::ParamType>& info) {
  std::string name = std::string(std::get<0>(info.param).label) + "_" +
                     std::filesystem::path(std::get<1>(info.param)).stem().string();
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Vectors, ConformanceTest,
                         ::testing::Combine(::testing::ValuesIn(kBackends),
                                            ::testing::ValuesIn(VectorFiles())),
                         ParamName);

TEST(ConformanceVectors, TheVectorDirectoryHoldsVectors) {
  EXPECT_GE(VectorFiles().size(), 5u) << "no vectors found in " << VectorDir();
}

}  // namespace
}  // namespace onestore
