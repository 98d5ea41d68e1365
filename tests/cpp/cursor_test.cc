// Cursors (src/query/query.h): a parsed query keeps the text its cursors
// start with (`cursor_head`), so a page does not serialize its where again.
// A cursor made with the kept head must be the very text made without it,
// for every where, direction and position, and must decode back to its
// position; a query changed by hand after parsing must not reuse it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "base64url.h"
#include "commit/store.h"
#include "query/query.h"
#include "values/json_text.h"

namespace onestore {
namespace {

const char kTable[] =
    R"([{"op":"table","table":"t/items","columns":{"id":{"type":"str"},"grp":{"type":"str"},)"
    R"("n":{"type":"int","optional":true},"x":{"type":"num","optional":true}},"key":["id"]}])";

std::unique_ptr<Store> Open() {
  OpenOptions o;
  o.backend = "memory";
  o.id = "cursors";
  std::unique_ptr<Store> s;
  EXPECT_TRUE(Store::Open(o, &s).ok());
  std::string r;
  EXPECT_TRUE(s->Commit(kTable, R"({"owner":"t","at":1})", &r).ok());
  return s;
}

// A cursor's bytes (base64url.h's decoder, written apart from the store's).
std::string DecodeBase64Url(const std::string& text) {
  std::string out;
  EXPECT_TRUE(test::FromBase64Url(text, &out)) << "not base64url: " << text;
  return out;
}

TEST(CursorTest, ACursorOfAParsedQueryIsTheTextOfOneMadeWithoutTheKeptHead) {
  auto store = Open();
  const TableSchema& t = *store->Tables().front();
  const char* queries[] = {
      "{}",
      R"({"where":{"eq":["grp","g005/"]}})",
      R"({"where":{"and":[{"prefix":["id","a"]},{"gt":["n",3]}]},"orderBy":[["n","desc"]]})",
      R"({"orderBy":[["x","asc"],["grp","desc"]]})",
  };
  // Positions whose cursor texts have every length modulo 3, so that the
  // base64url tail (none, two or three characters) is checked each way.
  const std::vector<std::vector<Value>> ids = {
      {Value::Str("a")}, {Value::Str("ab")}, {Value::Str("abc")}, {Value::Str("a\"\\é")}};
  for (const char* text : queries) {
    Query q;
    ASSERT_TRUE(ParseQuery(Json::parse(text), t, "query", &q).ok()) << text;
    ASSERT_FALSE(q.cursor_head.empty()) << text;
    Query by_hand = q;
    by_hand.cursor_head.clear();
    for (const auto& id : ids) {
      // The position holds the order's values: the asked columns, then id.
      std::vector<Value> position;
      for (const OrderTerm& o : q.order) {
        const std::string& name = t.columns[o.column].name;
        position.push_back(name == "id" ? id[0] : name == "n" ? Value::Int(-7) : name == "x" ? Value::Num(0.5) : Value::Str("g1"));
      }
      const std::string cursor = EncodeCursor(q, position);
      EXPECT_EQ(cursor, EncodeCursor(by_hand, position)) << text;
      ASSERT_EQ(cursor.substr(0, 3), "c1.");
      // The cursor's JSON: the head, then the position's values.
      Json j = Json::parse(DecodeBase64Url(cursor.substr(3)));
      ASSERT_TRUE(j.is_array() && j.size() == 4) << j.dump();
      EXPECT_EQ(j[2], q.order[0].desc ? "desc" : "asc") << text;
      std::vector<Value> back;
      ASSERT_TRUE(DecodeCursor(q, cursor, &back).ok()) << text;
      EXPECT_EQ(back, position) << text;
    }
  }
}

TEST(CursorTest, AQueryWhoseWhereWasDroppedByHandMakesItsOwnCursors) {
  auto store = Open();
  const TableSchema& t = *store->Tables().front();
  Query q;
  ASSERT_TRUE(ParseQuery(Json::parse(R"({"where":{"eq":["grp","g1"]}})"), t, "query", &q).ok());
  Query all = q;
  all.where.reset();
  all.cursor_head.clear();
  Query every;
  ASSERT_TRUE(ParseQuery(Json::parse("{}"), t, "query", &every).ok());
  const std::vector<Value> at = {Value::Str("k")};
  // Without its where, the query's cursors are those of the query with none.
  EXPECT_EQ(EncodeCursor(all, at), EncodeCursor(every, at));
  EXPECT_NE(EncodeCursor(q, at), EncodeCursor(every, at));
  std::vector<Value> back;
  EXPECT_EQ(DecodeCursor(q, EncodeCursor(every, at), &back).code(), Code::kInvalidCursor);
}

TEST(CursorTest, APageWithANextPeeksAtTheKeyOfTheRowAfterItOnEveryBackend) {
  for (const char* backend : {"memory", "sqlite"}) {
    OpenOptions o;
    o.backend = backend;
    if (o.backend == "sqlite") o.path = ":memory:";
    o.id = "peek";
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(o, &store).ok()) << backend;
    std::string r;
    ASSERT_TRUE(store->Commit(kTable, R"({"owner":"t","at":1})", &r).ok());
    ASSERT_TRUE(store->Commit(R"([{"op":"put","table":"t/items","row":{"id":"a","grp":"g"}},)"
                              R"({"op":"put","table":"t/items","row":{"id":"b","grp":"h"}},)"
                              R"({"op":"put","table":"t/items","row":{"id":"c","grp":"g"}},)"
                              R"({"op":"put","table":"t/items","row":{"id":"d","grp":"g"}}])",
                              R"({"owner":"t","at":2})", &r)
                    .ok());
    const std::string where = R"({"where":{"eq":["grp","g"]}})";
    std::string page;
    ASSERT_TRUE(store->Page("t/items", where, 1, "", &page).ok());
    Json j = Json::parse(page);
    EXPECT_EQ(j["rows"].size(), 1u) << page;
    EXPECT_EQ(j["peek"], Json::parse(R"(["c"])")) << backend << ": " << page;  // b is not in the where
    ASSERT_TRUE(store->Page("t/items", where, 1, j["next"].get<std::string>(), &page).ok());
    EXPECT_EQ(Json::parse(page)["peek"], Json::parse(R"(["d"])")) << backend << ": " << page;
    // The last page has no next and no peek.
    ASSERT_TRUE(store->Page("t/items", where, 3, "", &page).ok());
    j = Json::parse(page);
    EXPECT_FALSE(j.contains("next")) << page;
    EXPECT_FALSE(j.contains("peek")) << page;
  }
}

}  // namespace
}  // namespace onestore
