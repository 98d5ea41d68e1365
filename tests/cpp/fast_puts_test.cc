// Checks the fast reader of put batches (writes/fast_puts.cc) against the DOM
// path (Json::parse + ParseOps): whatever it takes, it must give exactly the
// ops the DOM path gives (the same Values, the same record text); what it
// must take (the shapes the JS package writes) it takes; and what it cannot
// give identically (escapes it does not decode, refused values, other ops,
// an update or delete not by key or not in a record's shape) it declines,
// leaving its output untouched.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "schema/schema.h"
#include "writes/writes.h"

namespace onestore {
namespace {

const char kTable[] =
    R"({"op":"table","table":"t/edits","columns":{"id":{"type":"str"},"path":{"type":"str"},)"
    R"("entry":{"type":"int"},"at":{"type":"int","default":7},"score":{"type":"num","optional":true},)"
    R"("done":{"type":"bool","optional":true},"meta":{"type":"json","optional":true}},"key":["id"]})";

class FastPutsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = std::make_shared<TableSchema>();
    ASSERT_TRUE(ParseTableSchema(Json::parse(kTable), "table", t.get()).ok());
    catalog_.Put(t);
  }

  // The DOM path's ops, or its error.
  Status Dom(const std::string& text, std::vector<Op>* ops) {
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded()) return Status::InvalidArgs("not JSON");
    TableResolver tables(&catalog_);
    return ParseOps(j, &tables, ops);
  }

  static std::string Records(const std::vector<Op>& ops) {
    std::string out;
    for (const Op& op : ops) {
      op.AppendJson(&out);
      out.push_back('\n');
    }
    return out;
  }

  // Fast and DOM agree; returns whether the fast reader took the batch.
  bool Agree(const std::string& text) {
    std::vector<Op> fast(1);  // a previous op: the fast reader appends after it
    TableResolver tables(&catalog_);
    bool took = ParsePutsFast(text, &tables, &fast);
    if (!took) {
      EXPECT_EQ(fast.size(), 1u) << text;
      return false;
    }
    fast.erase(fast.begin());
    std::vector<Op> dom;
    Status s = Dom(text, &dom);
    EXPECT_TRUE(s.ok()) << "the fast reader took what the DOM path refuses: " << text << " "
                        << s.ToString();
    EXPECT_EQ(Records(fast), Records(dom)) << text;
    EXPECT_EQ(fast.size(), dom.size());
    for (size_t i = 0; i < fast.size() && i < dom.size(); ++i) {
      EXPECT_EQ(fast[i].kind, dom[i].kind);
      EXPECT_EQ(fast[i].table, dom[i].table);
      EXPECT_EQ(fast[i].row.size(), dom[i].row.size());
      if (fast[i].row.size() != dom[i].row.size()) continue;
      for (size_t c = 0; c < fast[i].row.size(); ++c) {
        EXPECT_EQ(fast[i].row[c].type(), dom[i].row[c].type()) << text << " column " << c;
        EXPECT_TRUE(fast[i].row[c] == dom[i].row[c]) << text << " column " << c;
      }
    }
    return true;
  }

  Catalog catalog_;
};

std::string Put(const std::string& row) {
  return R"({"op":"put","table":"t/edits","row":)" + row + "}";
}

TEST_F(FastPutsTest, TakesWhatTheJsPackageWritesAndGivesTheDomPathsOps) {
  const std::vector<std::string> rows = {
      R"({"id":"e1","path":"a/x.ts","entry":1,"at":2,"meta":{"lines":3}})",
      R"({"id":"e2","path":"a/y.ts","entry":-42,"meta":null})",  // default at, null json
      R"({"entry":0,"path":"","id":"e3"})",                      // any column order
      R"({"id":"é😀","path":"测试/\"q\"\\\/\n\t\r\b\f","entry":999999999999999999})",
      R"({"id":"e4","path":"p","entry":5,"score":1.5,"done":true})",
      R"({"id":"e5","path":"p","entry":5,"score":-2,"done":false})",
      R"({"id":"e6","path":"p","entry":5,"score":1e300})",
      R"({"id":"e7","path":"p","entry":5,"score":0.1,"meta":[1,"a",true,null,{"b":[]},{}]})",
      R"({"id":"e8","path":"p","entry":-0,"meta":"text é"})",
      R"({"id":"e9","path":"p","entry":5,"meta":{"a":{"b":{"c":[[],[-1,0]]}}}})",
      // json text with the escapes dump() writes, in values and keys (an
      // agent's message: quotes, newlines, tabs, other control chars).
      R"({"id":"e10","path":"p","entry":5,"meta":{"x":"\n"}})",
      R"({"id":"e11","path":"p","entry":5,"meta":{"content":"say \"hi\"\n\tto C:\\dir é😀","k\r":[]}})",
      R"({"id":"e12","path":"p","entry":5,"meta":["\b\f\u0000\u0001\u000b\u001f"]})",
      R"({"id":"e13","path":"p","entry":5,"meta":{"a\n":1,"a\t":2,"a":3}})",
      // Numbers with a fraction or an exponent as dump() writes them (and
      // JSON.stringify, for these).
      R"({"id":"e14","path":"p","entry":5,"meta":{"x":1.5,"y":-0.25,"z":1e+21,"w":0.14285714285714285}})",
      R"({"id":"e15","path":"p","entry":5,"meta":[-0.0,2.5e+300,-1e-300,1.5e-07]})",
  };
  std::string all = "[";
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(Agree("[" + Put(rows[i]) + "]")) << rows[i];
    all += (i ? "," : "") + Put(rows[i]);
  }
  EXPECT_TRUE(Agree(all + "]"));
  EXPECT_TRUE(Agree("[]"));
  EXPECT_TRUE(Agree(" [ " + Put(rows[0]) + " , " + Put(rows[1]) + " ] "));
}

// A replayed commit (store.commit of a record's ops) has updates and deletes
// by key among its puts, in the shape a record writes them.
TEST_F(FastPutsTest, TakesUpdatesAndDeletesByKeyAmongThePutsAsTheDomPathReadsThem) {
  const std::string del = R"({"op":"delete","table":"t/edits","key":["a"]})";
  const std::string upd =
      R"({"op":"update","table":"t/edits","key":["e1"],"set":{"at":{"value":-3},)"
      R"("path":{"value":"b/\"q\"é"},"score":{"value":null},"meta":{"value":{"n":[1,2]}}}})";
  for (const std::string& t :
       {"[" + del + "]", "[" + upd + "]",
        "[" + Put(R"({"id":"e1","path":"p","entry":1})") + "," + upd + "," + del + "," +
            Put(R"({"id":"a","path":"p","entry":2})") + "]",
        std::string(R"([{"op":"update","table":"t/edits","key":["é"],"set":{"done":{"value":true}}}])"),
        " [ " + del + " , " + del + " ] "}) {
    EXPECT_TRUE(Agree(t)) << t;
  }
}

TEST_F(FastPutsTest, DeclinesWhatItCannotGiveIdentically) {
  const std::vector<std::string> texts = {
      "[" + Put(R"({"id":"\u0041","path":"p","entry":1})") + "]",        // \u escape
      "[" + Put(R"({"id":"a\u0000","path":"p","entry":1})") + "]",       // NUL
      "[" + Put(R"({"id":"a","path":"p","entry":1.5})") + "]",           // fraction in an int
      "[" + Put(R"({"id":"a","path":"p","entry":1e3})") + "]",           // exponent in an int
      "[" + Put(R"({"id":"a","path":"p","entry":9223372036854775807})") + "]",  // 19 digits
      "[" + Put(R"({"id":"a","path":"p","entry":01})") + "]",            // not JSON
      "[" + Put(R"({"id":"a","path":"p","entry":"1"})") + "]",           // wrong type
      "[" + Put(R"({"id":"a","path":null,"entry":1})") + "]",            // null, not optional
      "[" + Put(R"({"id":"a","entry":1})") + "]",                        // missing column
      "[" + Put(R"({"id":"a","path":"p","entry":1,"nope":1})") + "]",    // unknown column
      "[" + Put(R"({"id":"a","path":"p","entry":1,"entry":2})") + "]",   // repeated column
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":1.50}})") + "]",     // json 1.5 as dump() does not write it
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":1E5}})") + "]",      // nor 100000.0
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":1.5e-7}})") + "]",   // nor 1.5e-07
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":12345678901234567890}})") + "]",  // 20 digits
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":-0}})") + "]",       // json -0
      // json escapes dump() does not write (it writes "/", "\n", lowercase hex,
      // the char itself from 0x20 up), and a repeated key with escapes
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\/"}})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\u000a"}})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\u001F"}})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\u0020"}})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\u0041"}})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\u007f"}})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\ud83d\ude00"}})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\u00"}})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\"})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":"\q"}})") + "]",
      "[" + Put("{\"id\":\"a\",\"path\":\"p\",\"entry\":1,\"meta\":{\"x\":\"\t\"}}") + "]",  // a raw tab
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"a\n":1,"a\n":2}})") + "]",
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{ "x":1}})") + "]",       // json spaces
      "[" + Put(R"({"id":"a","path":"p","entry":1,"meta":{"x":1,"x":2}})") + "]",  // json repeat
      "[" + Put(R"({"id":"a","path":"p","entry":1,"done":1})") + "]",    // not a bool
      "[" + Put(R"({"id":"a","path":"p","entry":1})") + "] x",           // trailing text
      "[" + Put(R"({"id":"a","path":"p","entry":1})"),                   // cut short
      "[" + Put("{\"id\":\"\xC3\",\"path\":\"p\",\"entry\":1}") + "]",   // bad UTF-8
      "[" + Put("{\"id\":\"\xED\xA0\x80\",\"path\":\"p\",\"entry\":1}") + "]",  // surrogate
      R"([{"op":"put","table":"t/nope","row":{"id":"a"}}])",             // unknown table
      R"([{"table":"t/edits","op":"put","row":{"id":"a","path":"p","entry":1}}])",  // key order
      R"([{"op":"put","table":"t/edits","row":{"id":"a","path":"p","entry":1},"x":1}])",
      R"([{"op":"table","table":"t/more","columns":{"id":{"type":"str"}},"key":["id"]}])",
      "[" + Put(R"({"id":"a","path":"p","entry":1})") +
          R"(,{"op":"update","table":"t/edits","where":{"eq":["path","p"]},"set":{"entry":{"value":2}}}])",
      R"([{"op":"update","table":"t/edits","key":["a"],"set":{"id":{"value":"b"}}}])",  // a key column
      R"([{"op":"update","table":"t/edits","key":["a"],"set":{"nope":{"value":1}}}])",  // unknown
      R"([{"op":"update","table":"t/edits","key":["a"],"set":{"path":{"value":null}}}])",  // null
      R"([{"op":"update","table":"t/edits","key":["a"],"set":{"entry":{"value":1},"entry":{"value":2}}}])",
      R"([{"op":"update","table":"t/edits","key":["a"],"set":{"entry":{"add":1}}}])",  // an expression
      R"([{"op":"update","table":"t/edits","key":["a"],"set":{"entry":{"value":1}},"count":1}])",
      R"([{"op":"update","table":"t/edits","key":["a"]}])",              // no set
      R"([{"op":"delete","table":"t/edits","key":["a","b"]}])",          // the key's arity
      R"([{"op":"delete","table":"t/edits","key":[1]}])",                // the key's type
      R"([{"op":"delete","table":"t/edits","key":[null]}])",
      R"([{"op":"delete","table":"t/nope","key":["a"]}])",
      R"([{"op":"delete","table":"_documents","key":[1]}])",             // the store's own
      R"([{"op":"delete","key":["a"],"table":"t/edits"}])",              // key order
      R"({"op":"put"})",
  };
  for (const std::string& t : texts) EXPECT_FALSE(Agree(t)) << t;
}

TEST(FastCommitMeta, TakesTheContextTheJsPackageWritesWithoutAnActor) {
  for (const std::string text :
       {R"({"owner":"file-history","at":1795967523735})", R"( { "owner" : "é/x" , "at" : 0 } )",
        R"({"owner":"","at":-5})"}) {
    std::string owner;
    int64_t at = 1;
    ASSERT_TRUE(ParseCommitMetaFast(text, &owner, &at)) << text;
    Json dom = Json::parse(text);
    EXPECT_EQ(owner, dom["owner"].get<std::string>()) << text;
    EXPECT_EQ(at, dom["at"].get<int64_t>()) << text;
  }
  for (const std::string text : {
           R"({"owner":"x","at":1,"actor":{"kind":"person","id":"ana"}})",
           R"({"at":1,"owner":"x"})",
           R"({"owner":"x"})",
           R"({"owner":"\u0041","at":1})",  // an escape
           R"({"owner":"x","at":1.5})",
           R"({"owner":"x","at":12345678901234567890})",
           R"({"owner":"x","at":1} x)",
           R"({"owner":1,"at":1})",
           "",
           "{}",
       }) {
    std::string owner = "unchanged";
    int64_t at = 7;
    EXPECT_FALSE(ParseCommitMetaFast(text, &owner, &at)) << text;
    EXPECT_EQ(owner, "unchanged");
    EXPECT_EQ(at, 7);
  }
}

}  // namespace
}  // namespace onestore
