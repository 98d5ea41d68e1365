// Checks ReadLog (src/history/log.h) on the memory and sqlite backends: one
// commit's record as the outbox holds it, not_found for a trimmed seq or one
// beyond the head, filters by owner and actor (a record's ops never decide a
// match), the seq cursor, and the per-call scan budget.
#include "history/log.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "commit/store.h"
#include "values/json_text.h"

namespace onestore {
namespace {

const char kTable[] =
    R"({"op":"table","table":"a/t","columns":{"id":{"type":"int"},"note":{"type":"str"}},"key":["id"]})";

class LogTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    OpenOptions o;
    o.backend = GetParam();
    if (o.backend == "sqlite") o.path = ":memory:";
    ASSERT_TRUE(Store::Open(o, &store_).ok());
    Commit(std::string("[") + kTable + "]", R"({"owner":"a"})");
  }
  void Commit(const std::string& ops, const std::string& meta) {
    std::string result;
    Status s = store_->Commit(ops, meta, &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Put(int id, const std::string& note, const std::string& meta) {
    Commit(R"([{"op":"put","table":"a/t","row":{"id":)" + std::to_string(id) + R"(,"note":")" +
               note + R"("}}])",
           meta);
  }
  Json Ask(const std::string& request) {
    std::string answer;
    Status s = ReadLog(store_.get(), request, &answer);
    EXPECT_TRUE(s.ok()) << request << ": " << s.ToString();
    Json j;
    EXPECT_TRUE(ParseJsonText(answer, "answer", &j).ok()) << answer;
    return j;
  }
  Status Refused(const std::string& request) {
    std::string answer;
    return ReadLog(store_.get(), request, &answer);
  }
  std::unique_ptr<Store> store_;
};

TEST_P(LogTest, OneCommitIsItsOutboxRecordAndATrimmedOrFutureSeqIsNotFound) {
  Put(1, "x", R"({"owner":"a","actor":{"kind":"person","id":"ana"}})");
  std::string batch;
  ASSERT_TRUE(store_->ReadOutbox(1, 1, &batch).ok());
  std::string record;
  ASSERT_TRUE(ReadLog(store_.get(), R"({"seq":2})", &record).ok());
  EXPECT_NE(batch.find(record), std::string::npos) << "the record's text, untouched";
  EXPECT_EQ(Refused(R"({"seq":3})").code(), Code::kNotFound);
  int64_t removed = 0;
  ASSERT_TRUE(store_->TrimOutbox(1, &removed).ok());
  Status s = Refused(R"({"seq":1})");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("oldest retained commit is 2"), std::string::npos) << s.message();
  EXPECT_EQ(Refused(R"({"seq":0})").code(), Code::kInvalidArgs);
  EXPECT_EQ(Refused(R"({"seq":2,"owner":"a"})").code(), Code::kInvalidArgs);
  EXPECT_EQ(Refused(R"({"nope":1})").code(), Code::kInvalidArgs);
  EXPECT_EQ(Refused(R"({"limit":1001})").code(), Code::kInvalidArgs);
  EXPECT_EQ(Refused(R"({"actor":{"name":"ana"}})").code(), Code::kInvalidArgs);
  EXPECT_EQ(Refused(R"([1])").code(), Code::kInvalidArgs);
}

TEST_P(LogTest, FiltersMatchOwnerAndActorNotWhatTheOpsHold) {
  Put(1, R"({\"owner\":\"b\",\"actor\":{\"id\":\"bot\"}})", R"({"owner":"a","actor":{"kind":"person","id":"ana"}})");
  Put(2, "y", R"({"owner":"a","actor":{"kind":"agent","id":"bot","for":{"kind":"person","id":"ana"}}})");
  Put(3, "z", R"({"owner":"a"})");
  auto seqs = [&](const std::string& req) {
    std::string out;
    const Json page = Ask(req);
    for (const Json& c : page["commits"]) out += std::to_string(c["seq"].get<int64_t>()) + " ";
    return out;
  };
  EXPECT_EQ(seqs(R"({"actor":{"id":"ana"}})"), "2 ");
  EXPECT_EQ(seqs(R"({"actor":{"kind":"agent"}})"), "3 ");
  EXPECT_EQ(seqs(R"({"actor":{"id":"bot"}})"), "3 ");
  EXPECT_EQ(seqs(R"({"actor":{"kind":"agent","id":"ana"}})"), "");
  EXPECT_EQ(seqs(R"({"owner":"a"})"), "1 2 3 4 ");
  EXPECT_EQ(seqs(R"({"owner":"b"})"), "");
  EXPECT_EQ(seqs(R"({"from":2,"to":3})"), "2 3 ");
  Json first = Ask(R"({"owner":"a","limit":3})");
  EXPECT_EQ(first["commits"].size(), 3u);
  ASSERT_EQ(first["next"], 3);
  Json second = Ask(R"({"owner":"a","limit":3,"after":3})");
  EXPECT_EQ(second["commits"].size(), 1u);
  EXPECT_FALSE(second.contains("next"));
}

TEST_P(LogTest, OneCallReadsAtMostTheScanBudget) {
  for (int i = 0; i < kLogScanBudget + 10; ++i) Put(i, "n", R"({"owner":"a"})");
  Put(-1, "m", R"({"owner":"a","actor":{"kind":"agent","id":"rare"}})");
  Json first = Ask(R"({"actor":{"id":"rare"}})");
  EXPECT_TRUE(first["commits"].empty());
  ASSERT_EQ(first["next"], kLogScanBudget);
  Json second = Ask(R"({"actor":{"id":"rare"},"after":)" + std::to_string(kLogScanBudget) + "}");
  ASSERT_EQ(second["commits"].size(), 1u);
  EXPECT_EQ(second["commits"][0]["seq"], store_->head());
  EXPECT_FALSE(second.contains("next"));
}

INSTANTIATE_TEST_SUITE_P(Backends, LogTest, ::testing::Values("memory", "sqlite"));

}  // namespace
}  // namespace onestore
