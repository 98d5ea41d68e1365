// Checks the reads that issue 13 made cheaper keep their answers: a page or
// a count after an alter of its table reads the new table (the store keeps
// parsed queries by table and text), and a get's key given in the common
// one-value shape ["text"] or [digits] (read without the JSON parser) finds,
// misses and refuses exactly what the full path does, on both backends.
// And the SQL of a page and of an outbox read has its LIMIT in the text:
// SQLite re-prepares a statement whose bound LIMIT is bound again.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/sqlite/sqlite_backend.h"
#include "commit/store.h"
#include "host_bound_connection.h"

namespace onestore {
namespace {

const char kV1[] =
    R"({"op":"table","table":"t/items","version":1,"columns":{"id":{"type":"int"},)"
    R"("title":{"type":"str"},"n":{"type":"int"}},"key":["id"]})";
// Version 2: title renamed to name, size added.
const char kV2[] =
    R"({"op":"table","table":"t/items","version":2,"columns":{"id":{"type":"int"},)"
    R"("name":{"type":"str"},"n":{"type":"int"},"size":{"type":"int","default":7}},)"
    R"("key":["id"],"migrations":{"2":{"alter":{"rename":{"title":"name"},)"
    R"("add":{"size":{"type":"int","default":7}}}}}})";
const char kNames[] =
    R"({"op":"table","table":"t/names","version":1,"columns":{"id":{"type":"str"},)"
    R"("v":{"type":"int"}},"key":["id"]})";
const char kPairs[] =
    R"({"op":"table","table":"t/pairs","version":1,"columns":{"a":{"type":"str"},)"
    R"("b":{"type":"int"}},"key":["a","b"]})";

class ReadCacheTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    OpenOptions o;
    o.backend = GetParam();
    if (o.backend == "sqlite") o.path = ":memory:";
    Status s = Store::Open(o, &store_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void DeclareAndCommit(const std::string& decl) {
    std::string records, result;
    Status s = store_->Declare(decl, &records);
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (records.empty() || records == "[]") return;
    s = store_->Commit(records, R"({"owner":"t"})", &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void MustCommit(const std::string& ops) {
    std::string result;
    Status s = store_->Commit(ops, R"({"owner":"t"})", &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::unique_ptr<Store> store_;
};

TEST_P(ReadCacheTest, APageAndACountAfterAnAlterReadTheAlteredTableWithTheSameQueryText) {
  DeclareAndCommit(kV1);
  MustCommit(R"([{"op":"put","table":"t/items","row":{"id":1,"title":"a","n":1}},)"
             R"({"op":"put","table":"t/items","row":{"id":2,"title":"b","n":2}}])");
  const std::string by_title = R"({"where":{"eq":["title","b"]},"orderBy":[["title","asc"]]})";
  const std::string by_name = R"({"where":{"eq":["name","b"]},"orderBy":[]})";
  std::string page;
  int64_t count = 0;
  ASSERT_TRUE(store_->Page("t/items", by_title, 10, "", &page).ok());
  EXPECT_EQ(page, R"({"rows":[[2,"b",2]]})");
  ASSERT_TRUE(store_->Count("t/items", by_title, &count).ok());
  EXPECT_EQ(count, 1);
  EXPECT_EQ(store_->Page("t/items", by_name, 10, "", &page).code(), Code::kInvalidArgs);

  DeclareAndCommit(kV2);
  // The same texts again: title is gone, name is there, rows have size.
  Status s = store_->Page("t/items", by_title, 10, "", &page);
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << page;
  EXPECT_NE(s.message().find("title"), std::string::npos) << s.message();
  EXPECT_EQ(store_->Count("t/items", by_title, &count).code(), Code::kInvalidArgs);
  ASSERT_TRUE(store_->Page("t/items", by_name, 10, "", &page).ok());
  EXPECT_EQ(page, R"({"rows":[[2,"b",2,7]]})");
  ASSERT_TRUE(store_->Count("t/items", by_name, &count).ok());
  EXPECT_EQ(count, 1);
}

TEST_P(ReadCacheTest, ACursorFromAKeptQueryStillPagesAndOneFromAnotherQueryIsRefused) {
  DeclareAndCommit(kV1);
  MustCommit(R"([{"op":"put","table":"t/items","row":{"id":1,"title":"a","n":1}},)"
             R"({"op":"put","table":"t/items","row":{"id":2,"title":"b","n":2}},)"
             R"({"op":"put","table":"t/items","row":{"id":3,"title":"c","n":3}}])");
  const std::string desc = R"({"where":null,"orderBy":[["n","desc"]]})";
  std::string page;
  ASSERT_TRUE(store_->Page("t/items", desc, 2, "", &page).ok());
  const Json first = Json::parse(page);
  ASSERT_TRUE(first.contains("next")) << page;
  const std::string next = first["next"].get<std::string>();
  ASSERT_TRUE(store_->Page("t/items", desc, 2, next, &page).ok());
  EXPECT_EQ(page, R"({"rows":[[1,"a",1]]})");
  EXPECT_EQ(store_->Page("t/items", R"({"where":null,"orderBy":[]})", 2, next, &page).code(),
            Code::kInvalidCursor);
}

TEST_P(ReadCacheTest, AOneValueKeyFindsAndMissesAsTheFullPathDoes) {
  DeclareAndCommit(kV1);
  DeclareAndCommit(kNames);
  MustCommit(R"([{"op":"put","table":"t/items","row":{"id":-5,"title":"neg","n":1}},)"
             R"({"op":"put","table":"t/items","row":{"id":0,"title":"zero","n":2}},)"
             R"({"op":"put","table":"t/items","row":{"id":123456789012345,"title":"big","n":3}},)"
             R"({"op":"put","table":"t/names","row":{"id":"e1","v":1}},)"
             R"({"op":"put","table":"t/names","row":{"id":"","v":2}},)"
             R"({"op":"put","table":"t/names","row":{"id":"a\"b","v":3}},)"
             R"({"op":"put","table":"t/names","row":{"id":"caf\u00e9","v":4}}])");
  std::string row;
  struct Case {
    const char* table;
    const char* key;
    const char* row;
  };
  const Case cases[] = {
      {"t/items", "[-5]", R"([-5,"neg",1])"},
      {"t/items", "[0]", R"([0,"zero",2])"},
      {"t/items", "[-0]", R"([0,"zero",2])"},
      {"t/items", "[123456789012345]", R"([123456789012345,"big",3])"},
      {"t/items", "[ 0 ]", R"([0,"zero",2])"},  // not the simple shape: the full path
      {"t/items", "[7]", "null"},
      {"t/names", R"(["e1"])", R"(["e1",1])"},
      {"t/names", R"([""])", R"(["",2])"},
      {"t/names", R"(["a\"b"])", R"(["a\"b",3])"},
      {"t/names", "[\"caf\xc3\xa9\"]", "[\"caf\xc3\xa9\",4]"},
      {"t/names", R"(["caf\u00e9"])", "[\"caf\xc3\xa9\",4]"},
      {"t/names", R"(["e2"])", "null"},
  };
  for (const Case& c : cases) {
    Status s = store_->Get(c.table, c.key, &row);
    ASSERT_TRUE(s.ok()) << c.key << ": " << s.ToString();
    EXPECT_EQ(row, c.row) << c.key;
  }
}

TEST_P(ReadCacheTest, AOneValueKeyOfTheWrongShapeOrTypeIsRefusedAsTheFullPathRefusesIt) {
  DeclareAndCommit(kV1);
  DeclareAndCommit(kNames);
  DeclareAndCommit(kPairs);
  std::string row;
  struct Case {
    const char* table;
    const char* key;
    const char* says;
  };
  const Case cases[] = {
      {"t/items", "[01]", "not valid JSON"},
      {"t/items", "[1.5]", "get key[0]"},
      {"t/items", R"(["1"])", "get key[0]"},
      {"t/items", "[]", "is not a key"},
      {"t/items", "[1,2]", "is not a key"},
      {"t/items", "[null]", "get key[0]"},
      {"t/names", "[1]", "get key[0]"},
      {"t/names", R"(["a\u0000b"])", "get key[0]"},
      {"t/names", R"(["a")", "not valid JSON"},
      {"t/names", R"(["a"]])", "not valid JSON"},
      {"t/pairs", R"(["a"])", "is not a key"},
      {"t/none", R"(["a"])", "unknown table"},
  };
  for (const Case& c : cases) {
    Status s = store_->Get(c.table, c.key, &row);
    EXPECT_EQ(s.code(), Code::kInvalidArgs) << c.key << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.key << ": " << s.message();
  }
}

TEST_P(ReadCacheTest, ATransactionsGetTakesTheOneValueKeyAndSeesItsOwnStagedRow) {
  DeclareAndCommit(kNames);
  MustCommit(R"([{"op":"put","table":"t/names","row":{"id":"e1","v":1}}])");
  const int tx = store_->TxOpen();
  std::string row;
  Status s = store_->TxGet(tx, R"([{"op":"put","table":"t/names","row":{"id":"e1","v":9}}])",
                           "t/names", R"(["e1"])", &row);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(row, R"(["e1",9])");
  ASSERT_TRUE(store_->TxGet(tx, "[]", "t/names", R"(["e2"])", &row).ok());
  EXPECT_EQ(row, "null");
  EXPECT_EQ(store_->TxGet(tx, "[]", "t/names", "[1]", &row).code(), Code::kInvalidArgs);
  store_->TxClose(tx);
  ASSERT_TRUE(store_->Get("t/names", R"(["e1"])", &row).ok());
  EXPECT_EQ(row, R"(["e1",1])");
}

// A host-bound connection that records the text of every statement run.
class RecordingConnection : public HostBoundTestConnection {
 public:
  explicit RecordingConnection(std::vector<std::string>* texts) : texts_(texts) {}
  Status Run(const std::string& sql, const std::vector<Value>& params, const std::string& what,
             SqlRows* rows, bool count_changes) override {
    texts_->push_back(sql);
    return HostBoundTestConnection::Run(sql, params, what, rows, count_changes);
  }

 private:
  std::vector<std::string>* texts_;
};

TEST(ReadStatementTest, APageAndAnOutboxReadWriteTheirLimitIntoTheTextAndBindNone) {
  std::vector<std::string> texts;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(
      Store::OpenWith(NewSqlBackend(std::make_unique<RecordingConnection>(&texts)), "s1", &store)
          .ok());
  std::string records, result, page;
  ASSERT_TRUE(store->Declare(kNames, &records).ok());
  ASSERT_TRUE(store->Commit(records, R"({"owner":"t"})", &result).ok());
  ASSERT_TRUE(store
                  ->Commit(R"([{"op":"put","table":"t/names","row":{"id":"a","v":1}},)"
                           R"({"op":"put","table":"t/names","row":{"id":"b","v":2}},)"
                           R"({"op":"put","table":"t/names","row":{"id":"c","v":3}}])",
                           R"({"owner":"t"})", &result)
                  .ok());
  texts.clear();
  ASSERT_TRUE(store->Page("t/names", "", 2, "", &page).ok());
  EXPECT_EQ(page.rfind(R"({"rows":[["a",1],["b",2]],"next":")", 0), 0u) << page;
  ASSERT_TRUE(store->Page("t/names", "", 5, "", &page).ok());
  std::string batch;
  ASSERT_TRUE(store->ReadOutbox(0, 7, &batch).ok());
  std::vector<std::string> limited;
  for (const std::string& t : texts) {
    if (t.find("LIMIT") != std::string::npos) limited.push_back(t);
  }
  ASSERT_EQ(limited.size(), 3u);
  EXPECT_EQ(limited[0].substr(limited[0].size() - 8), " LIMIT 3") << limited[0];
  EXPECT_EQ(limited[1].substr(limited[1].size() - 8), " LIMIT 6") << limited[1];
  EXPECT_EQ(limited[2].substr(limited[2].size() - 8), " LIMIT 7") << limited[2];
  for (const std::string& t : limited) EXPECT_EQ(t.find("LIMIT ?"), std::string::npos) << t;
  for (const std::string& t : limited) EXPECT_EQ(t.find("LIMIT CAST"), std::string::npos) << t;
}

INSTANTIATE_TEST_SUITE_P(Backends, ReadCacheTest, ::testing::Values("memory", "sqlite"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onestore
