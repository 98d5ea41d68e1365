// A seeded random differential test: the memory backend against the sqlite
// backend over thousands of random writes (puts, key updates with random set
// expressions, key deletes, updateWhere and deleteWhere with random
// predicates) and random reads (where trees, orders, limits, every page
// through the cursors, counts, gets). Both stores must give the same answer,
// error codes included, at every step. Text mixes multi-byte characters and
// emoji so that code-point order matters.
//
// Fixed seeds by default. ONESTORE_DIFF_SEEDS picks others: a comma-separated
// list ("7,8,9"), or "random:N" for N seeds from the clock (printed).
// ONESTORE_DIFF_STEPS overrides the number of steps per seed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "commit/store.h"

namespace onestore {
namespace {

using Plain = nlohmann::json;

const char kTable[] =
    R"({"op":"table","table":"t/diff","version":1,"columns":{)"
    R"("id":{"type":"str"},"n":{"type":"int","optional":true},"m":{"type":"int","default":0},)"
    R"("s":{"type":"str","optional":true},"f":{"type":"bool","optional":true},)"
    R"("x":{"type":"num","optional":true},"g":{"type":"int"}},)"
    R"("key":["id","g"],"indexes":{"byN":["n"],"bySM":["s","m"]}})";

const char* const kTableName = "t/diff";

// Pieces of text: ASCII, two-byte, CJK, fullwidth (U+FF08, U+FF5E), private
// use, U+FFFD and emoji, so that code-point and UTF-16 order differ.
const char* const kPieces[] = {
    "a", "b", "Z",  "/",    "é", "测", "试", "（", "～", "\xEE\x80\x80", "\xEF\xBF\xBD",
    "😀", "😁", "a/", "测试", "😀a"};

const int64_t kInts[] = {0,
                         1,
                         2,
                         3,
                         -1,
                         -2,
                         5,
                         7,
                         10,
                         100,
                         INT64_MAX,
                         INT64_MIN,
                         INT64_MAX - 1,
                         INT64_MIN + 1,
                         9007199254740993LL,
                         9007199254740992LL,
                         -9007199254740993LL};
const double kNums[] = {0.0, 1.0, -1.5, 0.25, 2.5, 1e10, -3.0, 0.1, 1e300, -1e-300};
const char* const kCols[] = {"id", "n", "m", "s", "f", "x", "g"};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  int Below(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool Chance(int percent) { return Below(100) < percent; }

  std::string Text(int max_pieces = 3) {
    int k = Below(max_pieces + 1);
    std::string s;
    for (int i = 0; i < k; ++i) s += kPieces[Below(sizeof(kPieces) / sizeof(kPieces[0]))];
    return s;
  }
  Plain Str() { return Plain(Text()); }
  // Mostly small ints, so that equalities and ties happen; sometimes extremes.
  Plain Int() {
    if (Chance(80)) return Plain(static_cast<int64_t>(Below(11) - 3));
    return Plain(kInts[Below(sizeof(kInts) / sizeof(kInts[0]))]);
  }
  Plain Num() { return Plain(kNums[Below(sizeof(kNums) / sizeof(kNums[0]))]); }
  Plain Bool() { return Plain(Chance(50)); }

  // A literal for column `c`; null allowed for optional columns when `nulls`.
  Plain Literal(const std::string& c, bool nulls) {
    if (nulls && c != "id" && c != "g" && c != "m" && Chance(15)) return Plain();
    if (c == "id") return Id();
    if (c == "g") return Plain(static_cast<int64_t>(Below(3)));
    if (c == "n" || c == "m") return Int();
    if (c == "s") return Str();
    if (c == "f") return Bool();
    return Num();
  }
  Plain Id() {
    static const char* const kIds[] = {"a",     "b",  "c", "é",  "测", "测试（一）",
                                       "测试😀", "～", "😀", "😀a", "Z",  "a/b"};
    if (Chance(70)) return Plain(kIds[Below(sizeof(kIds) / sizeof(kIds[0]))]);
    return Plain(Text(2));
  }
  // A key: mostly one that was put before (it may be deleted since).
  Plain Key() {
    if (!keys_.empty() && Chance(75)) return keys_[Below(static_cast<int>(keys_.size()))];
    return Plain::array({Id(), Plain(static_cast<int64_t>(Below(3)))});
  }

  Plain Row() {
    Plain r = Plain::object();
    r["id"] = Id();
    r["g"] = static_cast<int64_t>(Below(3));
    if (keys_.size() < 64)
      keys_.push_back(Plain::array({r["id"], r["g"]}));
    else
      keys_[Below(64)] = Plain::array({r["id"], r["g"]});
    for (const char* c : {"n", "m", "s", "f", "x"}) {
      if (std::string(c) == "m" && Chance(30)) continue;  // default 0
      if (Chance(20)) continue;                           // optional: omitted
      r[c] = Literal(c, true);
    }
    return r;
  }

  // A random where tree. Rarely a refused one (a null operand, a wrong type).
  Plain Where(int depth = 0) {
    int pick = Below(depth >= 2 ? 9 : 12);
    const std::string c = kCols[Below(7)];
    if (Chance(1)) return Plain{{"eq", Plain::array({c, Plain()})}};
    if (Chance(1)) return Plain{{"lt", Plain::array({"n", "1"})}};
    switch (pick) {
      case 0:
        return Plain{{"eq", Plain::array({c, Literal(c, false)})}};
      case 1:
        return Plain{{"ne", Plain::array({c, Literal(c, false)})}};
      case 2:
        return Plain{{"lt", Plain::array({c, Literal(c, false)})}};
      case 3:
        return Plain{{"lte", Plain::array({c, Literal(c, false)})}};
      case 4:
        return Plain{{"gt", Plain::array({c, Literal(c, false)})}};
      case 5:
        return Plain{{"gte", Plain::array({c, Literal(c, false)})}};
      case 6: {
        Plain list = Plain::array();
        int k = Below(4);
        for (int i = 0; i < k; ++i) list.push_back(Literal(c, false));
        return Plain{{"inArray", Plain::array({c, list})}};
      }
      case 7:
        return Plain{{"isNull", c}};
      case 8: {
        const char* sc = Chance(80) ? "s" : "id";
        return Plain{{"prefix", Plain::array({sc, Text(2)})}};
      }
      case 9:
        return Plain{{"not", Where(depth + 1)}};
      default: {
        Plain list = Plain::array();
        int k = 1 + Below(3);
        for (int i = 0; i < k; ++i) list.push_back(Where(depth + 1));
        return Plain{{pick == 10 ? "and" : "or", list}};
      }
    }
  }

  // A random expression producing a value for column `target`.
  Plain Expr(const std::string& target, int depth = 0) {
    const bool is_int = target == "n" || target == "m";
    const bool is_str = target == "s";
    const bool is_num = target == "x";
    int pick = Below(depth >= 2 ? 2 : 8);
    auto col = [&]() -> Plain {
      if (is_int) return Plain{{"col", Chance(50) ? "n" : "m"}};
      if (is_str) return Plain{{"col", Chance(70) ? "s" : "id"}};
      return Plain{{"col", target}};
    };
    switch (pick) {
      case 0:
        return Plain{{"value", Literal(target, true)}};
      case 1:
        return col();
      case 2:
        if (is_int)
          return Plain{{Chance(50) ? "add" : "sub",
                        Plain::array({Expr(target, depth + 1), Expr(target, depth + 1)})}};
        if (is_str)
          return Plain{
              {"concat", Plain::array({Expr(target, depth + 1), Expr(target, depth + 1)})}};
        return col();
      case 3:
        if (is_int || is_str || is_num) {
          Plain list = Plain::array();
          int k = 1 + Below(3);
          for (int i = 0; i < k; ++i) list.push_back(Expr(target, depth + 1));
          return Plain{{Chance(50) ? "max" : "min", list}};
        }
        return col();
      case 4:
        if (is_str) return Plain{{"replacePrefix", Plain::array({Text(1), Text(1)})}};
        return Plain{{"value", Literal(target, false)}};
      case 5:
        return Plain{
            {"coalesce", Plain::array({Expr(target, depth + 1), Expr(target, depth + 1)})}};
      case 6:
        return Plain{
            {"when", Plain::array({Where(1), Expr(target, depth + 1), Expr(target, depth + 1)})}};
      default:
        if (is_int) return Plain{{"add", Plain::array({col(), Plain{{"value", Int()}}})}};
        return col();
    }
  }

  Plain Set() {
    Plain set = Plain::object();
    int k = 1 + Below(3);
    for (int i = 0; i < k; ++i) {
      static const char* const kSettable[] = {"n", "m", "s", "f", "x"};
      std::string c = kSettable[Below(5)];
      set[c] = Expr(c);
    }
    return set;
  }

  Plain Op() {
    int pick = Below(100);
    if (pick < 40) return Plain{{"op", "put"}, {"table", kTableName}, {"row", Row()}};
    if (pick < 60)
      return Plain{{"op", "update"}, {"table", kTableName}, {"key", Key()}, {"set", Set()}};
    if (pick < 72) return Plain{{"op", "delete"}, {"table", kTableName}, {"key", Key()}};
    if (pick < 92)
      return Plain{{"op", "update"}, {"table", kTableName}, {"where", Where()}, {"set", Set()}};
    return Plain{{"op", "delete"}, {"table", kTableName}, {"where", Where()}};
  }

  Plain Query() {
    Plain q = Plain::object();
    q["where"] = Chance(20) ? Plain() : Where();
    Plain order = Plain::array();
    int k = Below(3);
    for (int i = 0; i < k; ++i) {
      order.push_back(Plain::array({kCols[Below(7)], Chance(50) ? "asc" : "desc"}));
    }
    q["orderBy"] = order;
    return q;
  }

 private:
  std::mt19937_64 rng_;
  std::vector<Plain> keys_;
};

// The answer of one call, comparable across backends: the error code, or
// the payload parsed (numbers compare by value).
struct Answer {
  std::string code;  // "" when OK
  Plain payload;
  bool operator==(const Answer& o) const { return code == o.code && payload == o.payload; }
  std::string Describe() const { return code.empty() ? payload.dump() : code; }
};

Answer FromStatus(const Status& s, const std::string& text) {
  Answer a;
  if (!s.ok()) {
    a.code = CodeString(s.code());
    return a;
  }
  a.payload = text.empty() ? Plain() : Plain::parse(text, nullptr, false);
  return a;
}

std::vector<uint64_t> Seeds() {
  const char* env = std::getenv("ONESTORE_DIFF_SEEDS");
  std::vector<uint64_t> seeds;
  if (env == nullptr || *env == 0) return {1, 2, 3, 4, 5, 6, 7, 20260101};
  std::string v(env);
  if (v.rfind("random:", 0) == 0) {
    int n = std::atoi(v.c_str() + 7);
    std::mt19937_64 r(
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
    for (int i = 0; i < n; ++i) seeds.push_back(r() % 1000000000ULL);
    return seeds;
  }
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) seeds.push_back(std::strtoull(item.c_str(), nullptr, 10));
  }
  return seeds;
}

int Steps() {
  const char* env = std::getenv("ONESTORE_DIFF_STEPS");
  return env != nullptr && *env != 0 ? std::atoi(env) : 4000;
}

class Differential {
 public:
  explicit Differential(uint64_t seed) : seed_(seed), gen_(seed) {}

  // Runs the steps; returns "" or the first divergence.
  std::string Run(int steps) {
    OpenOptions mo;
    mo.backend = "memory";
    mo.id = "diff";
    OpenOptions so;
    so.backend = "sqlite";
    so.path = ":memory:";
    so.id = "diff";
    so.durability_full = false;
    Status s = Store::Open(mo, &mem_);
    if (!s.ok()) return "open memory: " + s.ToString();
    s = Store::Open(so, &sql_);
    if (!s.ok()) return "open sqlite: " + s.ToString();
    std::string ops = std::string("[") + kTable + "]";
    if (std::string e = Commit(ops); !e.empty()) return e;
    for (step_ = 0; step_ < steps; ++step_) {
      std::string e;
      int pick = gen_.Below(100);
      if (pick < 55) {
        Plain list = Plain::array();
        int k = 1 + gen_.Below(3);
        for (int i = 0; i < k; ++i) list.push_back(gen_.Op());
        e = Commit(list.dump());
      } else if (pick < 85) {
        e = ReadAll(gen_.Query(), 1 + gen_.Below(7));
      } else if (pick < 93) {
        Plain q = gen_.Query();
        e = Compare("count " + q.dump(), CountOf(mem_.get(), q), CountOf(sql_.get(), q));
      } else {
        std::string key = gen_.Key().dump();
        std::string a, b;
        Status sa = mem_->Get(kTableName, key, &a);
        Status sb = sql_->Get(kTableName, key, &b);
        e = Compare("get " + key, FromStatus(sa, a), FromStatus(sb, b));
      }
      if (!e.empty()) return e;
      if (step_ % 200 == 199) {
        // The whole table, in key order, after every 200 steps.
        e = ReadAll(Plain{{"where", Plain()}, {"orderBy", Plain::array()}}, 1000);
        if (!e.empty()) return e;
      }
    }
    return "";
  }

 private:
  std::string Prefix() const {
    return "seed " + std::to_string(seed_) + " step " + std::to_string(step_) + ": ";
  }

  std::string Compare(const std::string& what, const Answer& a, const Answer& b) {
    if (a == b) return "";
    return Prefix() + what + "\n  memory: " + a.Describe() + "\n  sqlite: " + b.Describe();
  }

  static Answer CountOf(Store* store, const Plain& q) {
    int64_t n = -1;
    Status s = store->Count(kTableName, q.dump(), &n);
    return FromStatus(s, std::to_string(n));
  }

  std::string Commit(const std::string& ops) {
    std::string ra, rb;
    Status sa = mem_->Commit(ops, R"({"owner":"diff"})", &ra);
    Status sb = sql_->Commit(ops, R"({"owner":"diff"})", &rb);
    Answer a = FromStatus(sa, ra), b = FromStatus(sb, rb);
    // seq and at are the store's own; compare the counts.
    if (a.code.empty()) a.payload = a.payload["counts"];
    if (b.code.empty()) b.payload = b.payload["counts"];
    return Compare("commit " + ops, a, b);
  }

  // Reads every page of `q` on both stores, each following its own cursors.
  std::string ReadAll(const Plain& q, int limit) {
    std::string ca, cb;
    const std::string qt = q.dump();
    for (int page = 0; page < 10000; ++page) {
      std::string ta, tb;
      Status sa = mem_->Page(kTableName, qt, limit, ca, &ta);
      Status sb = sql_->Page(kTableName, qt, limit, cb, &tb);
      Answer a = FromStatus(sa, ta), b = FromStatus(sb, tb);
      std::string what =
          "page " + std::to_string(page) + " (limit " + std::to_string(limit) + ") of " + qt;
      if (!a.code.empty() || !b.code.empty()) return Compare(what, a, b);
      // Compare rows and whether there is a next page; the cursors' texts
      // are each store's own.
      Answer ra{"", a.payload["rows"]}, rb{"", b.payload["rows"]};
      ra.payload.push_back(a.payload.contains("next"));
      rb.payload.push_back(b.payload.contains("next"));
      if (std::string e = Compare(what, ra, rb); !e.empty()) return e;
      if (!a.payload.contains("next")) return "";
      ca = a.payload["next"].get<std::string>();
      cb = b.payload["next"].get<std::string>();
    }
    return Prefix() + "the cursors of " + qt + " do not end";
  }

  uint64_t seed_;
  Gen gen_;
  int step_ = -1;
  std::unique_ptr<Store> mem_, sql_;
};

TEST(Differential, MemoryAndSqliteGiveTheSameAnswersOverRandomWritesAndReads) {
  const int steps = Steps();
  for (uint64_t seed : Seeds()) {
    Differential d(seed);
    std::string e = d.Run(steps);
    EXPECT_EQ(e, "") << "reproduce with ONESTORE_DIFF_SEEDS=" << seed << " (steps " << steps << ")";
  }
}

}  // namespace
}  // namespace onestore
