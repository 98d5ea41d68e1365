// The restore of a snapshot kept as copies of the tables inside the store's
// own database (a durable store's: Snapshots::RestoreCopies, which finds the
// rows that differ inside SQLite, Backend::DiffWithCopy) against the restore
// of the same snapshot as a memory copy (Snapshots::Restore, which compares
// every row): the same ops in the same order and the same fingerprint, on a
// sqlite file whose copies are made as js/snapshots-durable.js makes them
// (the table's CREATE TABLE under the copy's name, INSERT ... SELECT). Puts,
// overwrites with equal and with other values, NULLs, json, big ints and
// deletes, a two-column key, a table altered since the snapshot (compared
// row by row) and a table declared after it (emptied).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "commit/store.h"
#include "snapshot/snapshot.h"
#include "sqlite3.h"
#include "store_fixtures.h"
#include "values/json_text.h"

namespace onestore {
namespace {

using test::CommitOps;
using test::FingerprintOf;

constexpr char kTables[] = R"([
  {"op":"table","table":"t/a","version":1,"columns":{"id":{"type":"str"},"n":{"type":"int"},
   "x":{"type":"num","optional":true},"j":{"type":"json","optional":true},
   "b":{"type":"bool","optional":true}},"key":["id"]},
  {"op":"table","table":"t/b","version":1,"columns":{"g":{"type":"int"},"k":{"type":"str"},
   "v":{"type":"str","optional":true}},"key":["g","k"]},
  {"op":"table","table":"t/c","version":1,"columns":{"id":{"type":"int"},"v":{"type":"str"}},"key":["id"]}])";

std::string PutA(int i, int64_t n, const std::string& rest = R"("x":null,"j":null,"b":null)") {
  return R"({"op":"put","table":"t/a","row":{"id":"a)" + std::to_string(i) + R"(","n":)" +
         std::to_string(n) + "," + rest + "}}";
}

void Seed(Store* s) {
  CommitOps(s, kTables);
  std::string ops = "[";
  for (int i = 0; i < 300; ++i) {
    if (i > 0) ops += ",";
    ops += PutA(
        i, i % 7 == 0 ? 9007199254740993LL + i : i,
        i % 3 == 0 ? R"("x":1.5,"j":{"k":[1,"two"]},"b":true)" : R"("x":null,"j":null,"b":false)");
    ops += R"(,{"op":"put","table":"t/b","row":{"g":)" + std::to_string(i % 5) + R"(,"k":"k)" +
           std::to_string(i) + R"(","v":)" + (i % 4 == 0 ? std::string("null") : "\"v\"") + "}}";
    ops += R"(,{"op":"put","table":"t/c","row":{"id":)" + std::to_string(i) + R"(,"v":"c"}})";
  }
  CommitOps(s, ops + "]");
}

void Change(Store* s) {
  CommitOps(s, "[" + PutA(1, 1, R"("x":null,"j":null,"b":false)") + "," +  // the same values again
                   PutA(2, 2, R"("x":2.5,"j":null,"b":null)") + "," +      // other values
                   PutA(3, 3, R"("x":null,"j":{"k":[1,"two"]},"b":true)") +
                   "," +                  // a NULL where a value was
                   PutA(1000, 5) + "," +  // a new row
                   R"({"op":"delete","table":"t/a","key":["a4"]},)"
                   R"({"op":"delete","table":"t/a","key":["a299"]},)"
                   R"({"op":"put","table":"t/b","row":{"g":0,"k":"k0","v":"now"}},)"
                   R"({"op":"delete","table":"t/b","key":[1,"k1"]},)"
                   R"({"op":"put","table":"t/b","row":{"g":9,"k":"new","v":null}}])");
  CommitOps(
      s, R"([{"op":"alter","table":"t/c","version":2,"add":{"tag":{"type":"str","default":"-"}}},)"
         R"({"op":"put","table":"t/c","row":{"id":7,"v":"changed","tag":"x"}},)"
         R"({"op":"delete","table":"t/c","key":[8]},)"
         R"({"op":"table","table":"t/d","version":1,"columns":{"id":{"type":"int"}},"key":["id"]},)"
         R"({"op":"put","table":"t/d","row":{"id":1}}])");
}

// Runs `sql` on the database file `path` through a connection of its own.
std::string Query1(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  std::string out;
  if (sqlite3_step(stmt) == SQLITE_ROW)
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  return out;
}

// Copies every table of the store file `path` as js/snapshots-durable.js
// does, and returns the copies' list as Snapshots::RestoreCopies takes it.
std::string MakeCopies(const std::string& path, Store* s) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  Json list = Json::array();
  int k = 0;
  for (const auto& t : s->Tables()) {
    const std::string copy = "_snap_s1_" + std::to_string(k++);
    const std::string quoted = "\"" + t->name + "\"";
    const std::string create = Query1(
        db, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '" + t->name + "'");
    const std::string head = "CREATE TABLE " + quoted;
    EXPECT_EQ(create.rfind(head, 0), 0u) << create;
    const std::string sql = "CREATE TABLE \"" + copy + "\"" + create.substr(head.size()) +
                            "; INSERT INTO \"" + copy + "\" SELECT * FROM " + quoted;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    Json record;
    const std::string text =
        Query1(db, "SELECT record FROM _tables WHERE name = '" + t->name + "'");
    EXPECT_TRUE(ParseJsonText(text, "record", &record).ok()) << text;
    list.push_back(Json{{"copy", copy}, {"table", record}});
  }
  sqlite3_close_v2(db);
  return list.dump();
}

TEST(RestoreCopies, FindsTheSameOpsInsideTheDatabaseAsARowByRowRestore) {
  const std::string path = test::FreshStorePath("restore_copies", "same_ops");
  auto s = test::OpenTestStore("sqlite", path);
  Seed(s.get());
  const int64_t snap_seq = s->head();
  std::unique_ptr<Store> snapshot;
  ASSERT_TRUE(Snapshots::CopyToMemory(s.get(), &snapshot).ok());
  const std::string copies = MakeCopies(path, s.get());
  Change(s.get());

  // The same changed store in memory, restored from the memory copy.
  std::unique_ptr<Store> twin;
  ASSERT_TRUE(Snapshots::CopyToMemory(s.get(), &twin).ok());
  ASSERT_EQ(FingerprintOf(twin.get()), FingerprintOf(s.get()));

  const std::string marker =
      R"({"op":"restore","snapshot":"s1","seq":)" + std::to_string(snap_seq) + "}";
  std::string result;
  Status st =
      Snapshots::Restore(twin.get(), snapshot.get(), marker, R"({"owner":"store"})", &result);
  ASSERT_TRUE(st.ok()) << st.message();
  st = Snapshots::RestoreCopies(s.get(), copies, marker, R"({"owner":"store"})", &result);
  ASSERT_TRUE(st.ok()) << st.message();

  EXPECT_EQ(s->LastOps(), twin->LastOps());
  EXPECT_EQ(FingerprintOf(s.get()), FingerprintOf(twin.get()));
  const Json ops = Json::parse(s->LastOps());
  EXPECT_GT(ops.size(), 10u);
  EXPECT_EQ(ops[0]["op"], "restore");
}

TEST(RestoreCopies, AnUnchangedStoreRestoresWithTheMarkerAlone) {
  const std::string path = test::FreshStorePath("restore_copies", "unchanged");
  auto s = test::OpenTestStore("sqlite", path);
  Seed(s.get());
  const std::string before = FingerprintOf(s.get());
  const std::string copies = MakeCopies(path, s.get());
  std::string result;
  Status st =
      Snapshots::RestoreCopies(s.get(), copies, R"({"op":"restore","snapshot":"s1","seq":2})",
                               R"({"owner":"store"})", &result);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(s->LastOps(), R"([{"op":"restore","snapshot":"s1","seq":2}])");
  EXPECT_EQ(FingerprintOf(s.get()), before);
}

}  // namespace
}  // namespace onestore
