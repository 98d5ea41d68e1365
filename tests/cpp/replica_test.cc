// Replicas (src/sync/replica.h) and the content fingerprint
// (src/sync/fingerprint.h): the conformance vectors' commits replayed into a
// replica on every backend give the same tables, row by row and by
// fingerprint, and the same outbox records; a batch is applied whole or not
// at all (gaps, divergence, overlap, malformed batches); SHA-256 matches the
// FIPS 180-4 vectors.
#include "sync/replica.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backends/memory/memory_backend.h"
#include "backends/sqlite/sqlite_backend.h"
#include "commit/store.h"
#include "host_bound_connection.h"
#include "sync/fingerprint.h"
#include "sync/sha256.h"

#ifndef ONESTORE_SOURCE_DIR
#define ONESTORE_SOURCE_DIR "."
#endif

namespace onestore {
namespace {

std::string ReadFile(const std::string& path) {
  std::string text;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

// {"$bigint":"digits"} -> JSON integer digits (tests/conformance/README.md).
Json ToWire(const Json& j) {
  if (j.is_object() && j.size() == 1 && j.contains("$bigint"))
    return Json::parse(j["$bigint"].get<std::string>());
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

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "onestore_replica_" + name + ".sqlite";
}

void RemoveFiles(const std::string& path) {
  for (const char* suffix : {"", "-journal", "-wal", "-lock"}) std::remove((path + suffix).c_str());
}

struct ReplicaBackend {
  const char* label;
  const char* backend;  // memory | sqlite
  bool file;
  bool host_bound;
};

const ReplicaBackend kBackends[] = {
    {"memory", "memory", false, false},
    {"sqlite_memory", "sqlite", false, false},
    {"sqlite_file", "sqlite", true, false},
    {"sqlite_host_bound", "sqlite", false, true},
};

// A store opened as a replica, with its Replica.
struct OpenReplica {
  std::unique_ptr<Store> store;
  std::unique_ptr<Replica> replica;
};

Status OpenStoreOn(const ReplicaBackend& b, const std::string& path, bool replica,
                   OpenReplica* out) {
  OpenOptions o;
  o.backend = b.backend;
  o.path = b.file ? path : ":memory:";
  o.id = "replica-test";
  o.replica = replica;
  Status s = b.host_bound
                 ? Store::OpenWith(NewSqlBackend(std::make_unique<HostBoundTestConnection>()), o.id,
                                   &out->store, replica)
                 : Store::Open(o, &out->store);
  if (s.ok() && replica) s = Replica::Attach(out->store.get(), &out->replica);
  return s;
}

// Every table of `s`, as "table record" then its rows in key order.
std::string Dump(Store* s) {
  std::string out;
  for (const auto& t : s->Tables()) {
    out += t->ToJson().dump() + "\n";
    std::string page;
    Status st = s->Page(t->name, "{}", 100000, "", &page);
    EXPECT_TRUE(st.ok()) << st.ToString();
    out += page + "\n";
  }
  return out;
}

std::string Fp(Store* s) {
  std::string fp;
  Status st = Fingerprint(s, &fp);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return fp;
}

std::string Batch(Store* s, int64_t after = 0, int64_t limit = 1000000) {
  std::string b;
  Status st = s->ReadOutbox(after, limit, &b);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return b;
}

Status Commit(Store* s, const std::string& ops) {
  std::string result;
  return s->Commit(ops, R"({"owner":"t","at":1700000000000})", &result);
}

// ---- SHA-256 ----

TEST(Sha256, GivesTheDigestsOfTheFipsVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a's, fed in uneven pieces: the buffering across calls.
  Sha256 h;
  std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    size_t n = std::min(left, chunk.size());
    h.Update(std::string_view(chunk.data(), n));
    left -= n;
  }
  EXPECT_EQ(h.FinalHex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PadsMessagesOfEveryLengthAroundABlock) {
  // 55, 56 and 64 bytes: the length fits in the block, spills over, or
  // needs a block of its own (values from sha256sum).
  EXPECT_EQ(Sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

// ---- conformance vectors replayed into replicas ----

std::vector<std::string> VectorFiles() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(ONESTORE_SOURCE_DIR) +
                                                           "/tests/conformance")) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Runs every commit of a vector case on an owner's store; failing commits
// (the vectors' refusals) leave no record.
void RunCommits(Store* s, const Json& doc, const Json& c) {
  if (doc.contains("tables") && !doc["tables"].empty()) {
    ASSERT_TRUE(Commit(s, ToWire(doc["tables"]).dump()).ok());
  }
  auto run = [&](const Json& steps) {
    for (const Json& st : steps) {
      if (!st.contains("commit")) continue;
      Status r = Commit(s, ToWire(st["commit"]).dump());
      EXPECT_EQ(r.ok(), !st.contains("error")) << st.dump() << ": " << r.ToString();
    }
  };
  if (doc.contains("setup")) run(doc["setup"]);
  run(c["steps"]);
}

class ReplicaVectors : public ::testing::TestWithParam<ReplicaBackend> {};

TEST_P(ReplicaVectors, AReplicaOfEveryVectorCaseHoldsTheSameTablesFingerprintAndRecords) {
  const ReplicaBackend& b = GetParam();
  int cases = 0;
  for (const std::string& file : VectorFiles()) {
    Json doc = Json::parse(ReadFile(file));
    int index = 0;
    for (const Json& c : doc["cases"]) {
      SCOPED_TRACE(file + ": " + c.value("name", std::to_string(index)));
      OpenReplica owner;
      ASSERT_TRUE(OpenStoreOn(kBackends[0], "", false, &owner).ok());
      RunCommits(owner.store.get(), doc, c);
      const std::string path = TempPath(std::string(b.label) + "_" + std::to_string(index++));
      RemoveFiles(path);
      OpenReplica r;
      Status s = OpenStoreOn(b, path, true, &r);
      ASSERT_TRUE(s.ok()) << s.ToString();
      // Batches of three commits, as a driver would send them.
      for (int64_t at = 0; at < owner.store->head(); at += 3) {
        std::string result;
        s = r.replica->ApplyBatch(Batch(owner.store.get(), at, 3), &result);
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
      EXPECT_EQ(r.store->head(), owner.store->head());
      EXPECT_EQ(Dump(r.store.get()), Dump(owner.store.get()));
      EXPECT_EQ(Fp(r.store.get()), Fp(owner.store.get()));
      EXPECT_EQ(Batch(r.store.get()), Batch(owner.store.get()));
      if (b.file) {  // and after a reopen, from the file alone
        r.replica.reset();
        r.store.reset();
        ASSERT_TRUE(OpenStoreOn(b, path, true, &r).ok());
        EXPECT_EQ(Dump(r.store.get()), Dump(owner.store.get()));
        EXPECT_EQ(Fp(r.store.get()), Fp(owner.store.get()));
        r.replica.reset();
        r.store.reset();
        RemoveFiles(path);
      }
      ++cases;
    }
  }
  EXPECT_GT(cases, 20);
}

INSTANTIATE_TEST_SUITE_P(Backends, ReplicaVectors, ::testing::ValuesIn(kBackends),
                         [](const auto& info) { return std::string(info.param.label); });

// ---- batches: applied whole or not at all ----

constexpr char kTable[] =
    R"([{"op":"table","table":"t/items","version":1,"columns":{"id":{"type":"str"},"n":{"type":"int"}},"key":["id"],"indexes":{}}])";

class ReplicaBatches : public ::testing::TestWithParam<ReplicaBackend> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(OpenStoreOn(kBackends[0], "", false, &owner_).ok());
    path_ = TempPath(std::string("batches_") + GetParam().label);
    RemoveFiles(path_);
    ASSERT_TRUE(OpenStoreOn(GetParam(), path_, true, &r_).ok());
    ASSERT_TRUE(Commit(owner_.store.get(), kTable).ok());
    ASSERT_TRUE(Commit(owner_.store.get(),
                       R"([{"op":"put","table":"t/items","row":{"id":"a","n":1}},
                           {"op":"put","table":"t/items","row":{"id":"b","n":2}}])")
                    .ok());
    ASSERT_TRUE(
        Commit(
            owner_.store.get(),
            R"([{"op":"update","table":"t/items","where":{"gte":["n",1]},"set":{"n":{"add":[{"col":"n"},10]}}}])")
            .ok());
  }
  void TearDown() override {
    r_.replica.reset();
    r_.store.reset();
    RemoveFiles(path_);
  }
  Status Apply(const std::string& batch) {
    std::string result;
    return r_.replica->ApplyBatch(batch, &result);
  }

  OpenReplica owner_, r_;
  std::string path_;
};

TEST_P(ReplicaBatches, ABatchAlreadyAppliedIsANoOpAndAnOverlapAppliesOnlyItsNewCommits) {
  ASSERT_TRUE(Apply(Batch(owner_.store.get(), 0, 2)).ok());
  EXPECT_EQ(r_.store->head(), 2);
  std::string result;
  ASSERT_TRUE(r_.replica->ApplyBatch(Batch(owner_.store.get(), 0, 2), &result).ok());
  EXPECT_EQ(result, R"({"head":2,"applied":0})");
  ASSERT_TRUE(r_.replica->ApplyBatch(Batch(owner_.store.get(), 0, 3), &result).ok());
  EXPECT_EQ(result, R"({"head":3,"applied":1})");
  EXPECT_EQ(Dump(r_.store.get()), Dump(owner_.store.get()));
}

TEST_P(ReplicaBatches, ABatchStartingAheadOfTheHeadIsAGapAndChangesNothing) {
  Status s = Apply(Batch(owner_.store.get(), 1, 2));
  EXPECT_EQ(s.code(), Code::kSyncGap) << s.ToString();
  EXPECT_EQ(r_.store->head(), 0);
  EXPECT_TRUE(r_.store->Tables().empty());
  EXPECT_TRUE(Apply(Batch(owner_.store.get())).ok());  // the gap was all: it goes on
  EXPECT_EQ(Fp(r_.store.get()), Fp(owner_.store.get()));
}

TEST_P(ReplicaBatches, AMutatedCountDivergesLeavesNothingAppliedAndRefusesLaterBatches) {
  std::string batch = Batch(owner_.store.get());
  const std::string count = "\"count\":2";
  ASSERT_NE(batch.find(count), std::string::npos) << batch;
  batch.replace(batch.find(count), count.size(), "\"count\":3");
  Status s = Apply(batch);
  EXPECT_EQ(s.code(), Code::kSyncDiverged) << s.ToString();
  EXPECT_NE(s.message().find("seq 3"), std::string::npos) << s.message();
  // Rolled back whole: the table and the puts of seqs 1 and 2 are not there.
  EXPECT_EQ(r_.store->head(), 0);
  EXPECT_TRUE(r_.store->Tables().empty());
  std::string none;
  EXPECT_TRUE(Batch(r_.store.get()).find("\"commits\":[]") != std::string::npos);
  // Every later batch is refused, even a good one.
  EXPECT_EQ(Apply(Batch(owner_.store.get(), 0, 1)).code(), Code::kSyncDiverged);
  ASSERT_TRUE(r_.replica->RecordDivergence().ok());
  if (GetParam().file) {  // recorded in _meta: still refused after a reopen
    r_.replica.reset();
    r_.store.reset();
    ASSERT_TRUE(OpenStoreOn(GetParam(), path_, true, &r_).ok());
    EXPECT_NE(r_.replica->diverged().find("seq 3"), std::string::npos);
    EXPECT_EQ(Apply(Batch(owner_.store.get(), 0, 1)).code(), Code::kSyncDiverged);
    EXPECT_EQ(r_.store->head(), 0);
  }
}

TEST_P(ReplicaBatches, AnUpdateOfAMissingRowDiverges) {
  ASSERT_TRUE(Apply(Batch(owner_.store.get())).ok());
  // The owner updates b; the replica lost b on the way (a forged record).
  ASSERT_TRUE(Commit(owner_.store.get(),
                     R"([{"op":"update","table":"t/items","key":["zz"],"set":{"n":5}}])")
                  .code() == Code::kNotFound);
  ASSERT_TRUE(
      Commit(owner_.store.get(), R"([{"op":"update","table":"t/items","key":["b"],"set":{"n":5}}])")
          .ok());
  std::string batch = Batch(owner_.store.get(), 3);
  batch.replace(batch.find("[\"b\"]"), 5, "[\"q\"]");
  Status s = Apply(batch);
  EXPECT_EQ(s.code(), Code::kSyncDiverged) << s.ToString();
  EXPECT_EQ(r_.store->head(), 3);
}

TEST_P(ReplicaBatches, AKeyOpsRecordedCountIsChecked) {
  ASSERT_TRUE(Apply(Batch(owner_.store.get())).ok());
  Status s = Apply(
      R"({"from":3,"to":4,"commits":[{"seq":4,"from":3,"at":1,"owner":"t","ops":[{"op":"delete","table":"t/items","key":["nope"],"count":1}]}]})");
  EXPECT_EQ(s.code(), Code::kSyncDiverged) << s.ToString();
}

TEST_P(ReplicaBatches, AMalformedBatchIsRefusedWithInvalidArgsAndChangesNothing) {
  const char* bad[] = {
      "not json",
      "[]",
      R"({"from":0,"to":1})",
      R"({"from":-1,"to":0,"commits":[]})",
      R"({"from":0,"to":2,"commits":[{"seq":1,"from":0,"at":1,"owner":"t","ops":[]}]})",
      R"({"from":0,"to":1,"commits":[{"seq":2,"from":1,"at":1,"owner":"t","ops":[]}]})",
      R"({"from":0,"to":2,"commits":[{"seq":1,"from":0,"at":1,"owner":"t","ops":[]},{"seq":2,"from":0,"at":1,"owner":"t","ops":[]}]})",
      R"({"from":0,"to":1,"commits":[{"seq":1,"from":0,"at":1,"owner":"t","ops":[{"op":"put","table":"t/none","row":{}}]}]})",
      R"({"from":0,"to":1,"commits":[{"seq":1,"from":0,"at":"x","owner":"t","ops":[]}]})",
      R"({"from":0,"to":1,"commits":[{"seq":1,"from":0,"at":1,"owner":"t","ops":[],"extra":1}]})",
      R"({"from":0,"to":1,"commits":[{"seq":1,"from":0,"at":1,"owner":"t","actor":{"kind":1},"ops":[]}]})",
  };
  for (const char* b : bad) {
    Status s = Apply(b);
    EXPECT_EQ(s.code(), Code::kInvalidArgs) << b << ": " << s.ToString();
  }
  EXPECT_EQ(r_.store->head(), 0);
  EXPECT_TRUE(Apply(Batch(owner_.store.get())).ok());  // not diverged: it goes on
  EXPECT_EQ(Fp(r_.store.get()), Fp(owner_.store.get()));
}

// ---- the fast reader of a batch (src/writes/fast_puts.cc, ParseBatchFast) ----

// A history with every op a record holds: puts with escapes, json, num and
// bool cells; updates by key with literals and with an expression (which the
// fast reader leaves to the DOM); a delete by key; bulk ops; a second table;
// an alter that drops a column mid-batch, then puts of the new shape; an
// actor.
void CommitVariedHistory(Store* o) {
  auto commit = [&](const std::string& ops, const char* meta = R"({"owner":"t","at":1700000000000})") {
    std::string result;
    Status s = o->Commit(ops, meta, &result);
    ASSERT_TRUE(s.ok()) << ops << ": " << s.ToString();
  };
  commit(R"([{"op":"table","table":"t/docs","version":1,"columns":{"id":{"type":"str"},)"
         R"("s":{"type":"str","optional":true},"j":{"type":"json"},"f":{"type":"num"},)"
         R"("b":{"type":"bool"},"tag":{"type":"str","optional":true}},"key":["id"],"indexes":{}}])");
  // (t/docs' puts last: the reader's table of the last put is t/docs v1
  // when the alter below makes v2.)
  commit(R"([{"op":"put","table":"t/items","row":{"id":"c","n":-7}},)"
         R"({"op":"put","table":"t/docs","row":{"id":"d\"1","s":"\u00e9\n\t\\","j":{"a":[1,2,{"b":null}]},"f":1.5,"b":false,"tag":"x"}},)"
         R"({"op":"put","table":"t/docs","row":{"b":true,"f":-2,"j":"text","id":"d2"}}])");
  commit(R"([{"op":"update","table":"t/docs","key":["d\"1"],"set":{"s":{"value":null},"f":{"value":2.25},"b":{"value":true},"j":{"value":{"k":"v"}}}},)"
         R"({"op":"update","table":"t/items","key":["c"],"set":{"n":{"add":[{"col":"n"},1]}}},)"
         R"({"op":"delete","table":"t/items","key":["a"]}])",
         R"({"owner":"t","at":1700000000001,"actor":{"kind":"user","id":"u\u00e91","for":{"kind":"app","id":"x"}}})");
  commit(R"([{"op":"alter","table":"t/docs","version":2,"drop":["tag"]}])");
  commit(R"([{"op":"put","table":"t/docs","row":{"id":"d3","s":"three","j":[],"f":0,"b":false}},)"
         R"({"op":"update","table":"t/docs","where":{"eq":["b",true]},"set":{"f":{"value":9}}},)"
         R"({"op":"delete","table":"t/items","where":{"gte":["n",0]}}])");
}

TEST_P(ReplicaBatches, TheFastReaderAndTheDomPathGiveTheSameRowsAndRecords) {
  Store* o = owner_.store.get();
  CommitVariedHistory(o);
  if (HasFatalFailure()) return;
  const std::string batch = Batch(o);
  // The same batch with its members in another order: the fast reader
  // declines it and the DOM path reads it (as before the fast reader).
  Json j = Json::parse(batch);
  const std::string reordered = Json{{"commits", j["commits"]}, {"to", j["to"]}, {"from", j["from"]}}.dump();
  ASSERT_NE(reordered, batch);
  OpenReplica dom;
  const std::string dom_path = path_ + "-dom.sqlite";
  RemoveFiles(dom_path);
  ASSERT_TRUE(OpenStoreOn(GetParam(), dom_path, true, &dom).ok());
  std::string result;
  Status s = dom.replica->ApplyBatch(reordered, &result);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Fast: in one batch, and in batches of two commits.
  ASSERT_TRUE(Apply(batch).ok());
  OpenReplica pairs;
  const std::string pairs_path = path_ + "-pairs.sqlite";
  RemoveFiles(pairs_path);
  ASSERT_TRUE(OpenStoreOn(GetParam(), pairs_path, true, &pairs).ok());
  for (int64_t at = 0; at < o->head(); at += 2) {
    s = pairs.replica->ApplyBatch(Batch(o, at, 2), &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  for (Store* r : {r_.store.get(), dom.store.get(), pairs.store.get()}) {
    EXPECT_EQ(r->head(), o->head());
    EXPECT_EQ(Dump(r), Dump(o));
    EXPECT_EQ(Fp(r), Fp(o));
    EXPECT_EQ(Batch(r), Batch(o));  // the very records, byte for byte
  }
  dom = OpenReplica();
  pairs = OpenReplica();
  RemoveFiles(dom_path);
  RemoveFiles(pairs_path);
}

TEST_P(ReplicaBatches, ABatchNotWrittenAsTheStoreWritesItIsStoredAsTheStoreWritesIt) {
  Store* o = owner_.store.get();
  CommitVariedHistory(o);
  if (HasFatalFailure()) return;
  // Whitespace everywhere and \u escapes: the replica's records are the
  // store's own rendering of the ops, never the text as received.
  std::string text = Json::parse(Batch(o)).dump(1);
  const std::string d2 = "\"d2\"";
  ASSERT_NE(text.find(d2), std::string::npos);
  text.replace(text.find(d2), d2.size(), "\"\\u0064\\u0032\"");
  ASSERT_TRUE(Apply(text).ok());
  EXPECT_EQ(Dump(r_.store.get()), Dump(o));
  EXPECT_EQ(Batch(r_.store.get()), Batch(o));
}

TEST_P(ReplicaBatches, ANullSetInARequiredColumnIsRefusedAsBeforeNotApplied) {
  ASSERT_TRUE(Apply(Batch(owner_.store.get())).ok());
  Status s = Apply(
      R"({"from":3,"to":4,"commits":[{"seq":4,"from":3,"at":1,"owner":"t","ops":[{"op":"update","table":"t/items","key":["a"],"set":{"n":{"value":null}}}]}]})");
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();
  EXPECT_NE(s.message().find("commits[0].ops[0].set.n"), std::string::npos) << s.message();
  // A key column in a set, and a key of the wrong length: the DOM path's errors too.
  s = Apply(
      R"({"from":3,"to":4,"commits":[{"seq":4,"from":3,"at":1,"owner":"t","ops":[{"op":"update","table":"t/items","key":["a"],"set":{"id":{"value":"b"}}}]}]})");
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();
  EXPECT_NE(s.message().find("commits[0].ops[0].set.id"), std::string::npos) << s.message();
  s = Apply(
      R"({"from":3,"to":4,"commits":[{"seq":4,"from":3,"at":1,"owner":"t","ops":[{"op":"delete","table":"t/items","key":["a","b"]}]}]})");
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();
  EXPECT_NE(s.message().find("commits[0].ops[0].key"), std::string::npos) << s.message();
  EXPECT_EQ(r_.store->head(), 3);
  EXPECT_EQ(Fp(r_.store.get()), Fp(owner_.store.get()));
}

TEST_P(ReplicaBatches, AReplicaTakesNoOwnerWrites) {
  ASSERT_TRUE(Apply(Batch(owner_.store.get())).ok());
  Store* s = r_.store.get();
  EXPECT_EQ(Commit(s, R"([{"op":"put","table":"t/items","row":{"id":"x","n":1}}])").code(),
            Code::kInvalidArgs);
  std::string records;
  EXPECT_EQ(s->Declare(Json::parse(kTable)[0].dump(), &records).code(), Code::kInvalidArgs);
  int tx = s->TxOpen();
  std::string result;
  EXPECT_EQ(s->TxCommit(tx, R"([{"op":"delete","table":"t/items","key":["a"]}])",
                        R"({"owner":"t"})", &result)
                .code(),
            Code::kInvalidArgs);
  EXPECT_EQ(s->head(), 3);
  EXPECT_EQ(Fp(s), Fp(owner_.store.get()));
}

INSTANTIATE_TEST_SUITE_P(Backends, ReplicaBatches, ::testing::ValuesIn(kBackends),
                         [](const auto& info) { return std::string(info.param.label); });

TEST_P(ReplicaBatches, AHostNoteIsKeptApartFromTheBatchesAndSurvivesADivergenceAndAReopen) {
  std::string value = "x";
  ASSERT_TRUE(r_.replica->ReadHostNote("relay.lease", &value).ok());
  EXPECT_EQ(value, "");
  ASSERT_TRUE(r_.replica->WriteHostNote("relay.lease", R"({"epoch":2})").ok());
  ASSERT_TRUE(Apply(Batch(owner_.store.get(), 0, 2)).ok());
  // A diverging batch rolls back; the note, written before, stays; and a
  // diverged replica still writes notes.
  std::string batch = Batch(owner_.store.get(), 2, 1);
  batch.replace(batch.find("\"count\":2"), 9, "\"count\":3");
  EXPECT_EQ(Apply(batch).code(), Code::kSyncDiverged);
  ASSERT_TRUE(r_.replica->RecordDivergence().ok());
  ASSERT_TRUE(r_.replica->WriteHostNote("relay.lease", R"({"epoch":3})").ok());
  ASSERT_TRUE(r_.replica->ReadHostNote("relay.lease", &value).ok());
  EXPECT_EQ(value, R"({"epoch":3})");
  EXPECT_EQ(r_.store->head(), 2);
  if (GetParam().file) {
    r_.replica.reset();
    r_.store.reset();
    ASSERT_TRUE(OpenStoreOn(GetParam(), path_, true, &r_).ok());
    ASSERT_TRUE(r_.replica->ReadHostNote("relay.lease", &value).ok());
    EXPECT_EQ(value, R"({"epoch":3})");
    EXPECT_NE(r_.replica->diverged(), "");  // the replica's own note is apart
  }
  // Names are plain; a host cannot reach the replica's own notes.
  for (const char* bad : {"", "Lease", "a/b", "diverged note", ":role"}) {
    EXPECT_EQ(r_.replica->WriteHostNote(bad, "x").code(), Code::kInvalidArgs) << bad;
    EXPECT_EQ(r_.replica->ReadHostNote(bad, &value).code(), Code::kInvalidArgs) << bad;
  }
  EXPECT_EQ(r_.replica->WriteHostNote(std::string(65, 'a'), "x").code(), Code::kInvalidArgs);
  EXPECT_EQ(r_.replica->WriteHostNote("big", std::string(65537, 'x')).code(), Code::kLimit);
}

TEST(ReplicaFiles, AReplicasFileOpensOnlyAsAReplicaAndAReplicaStartsEmpty) {
  const ReplicaBackend& file = kBackends[2];
  const std::string replica_path = TempPath("role_replica");
  const std::string owner_path = TempPath("role_owner");
  RemoveFiles(replica_path);
  RemoveFiles(owner_path);
  OpenReplica owner;
  ASSERT_TRUE(OpenStoreOn(file, owner_path, false, &owner).ok());
  ASSERT_TRUE(Commit(owner.store.get(), kTable).ok());
  {
    OpenReplica r;
    ASSERT_TRUE(OpenStoreOn(file, replica_path, true, &r).ok());
    std::string result;
    ASSERT_TRUE(r.replica->ApplyBatch(Batch(owner.store.get()), &result).ok());
  }
  // As an owner's store, a replica's file is refused: its commits would fork.
  OpenReplica as_owner;
  Status s = OpenStoreOn(file, replica_path, false, &as_owner);
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();
  EXPECT_NE(s.message().find("openReplica"), std::string::npos) << s.message();
  OpenReplica again;
  ASSERT_TRUE(OpenStoreOn(file, replica_path, true, &again).ok());
  EXPECT_EQ(again.store->head(), 1);
  // An owner's store with commits never becomes a replica.
  owner.store.reset();
  OpenReplica as_replica;
  s = OpenStoreOn(file, owner_path, true, &as_replica);
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();
  OpenReplica reopened;
  ASSERT_TRUE(OpenStoreOn(file, owner_path, false, &reopened).ok());
  EXPECT_EQ(reopened.store->head(), 1);
  again.replica.reset();
  again.store.reset();
  reopened.store.reset();
  RemoveFiles(replica_path);
  RemoveFiles(owner_path);
}

TEST(ReplicaFiles, AReplicaNeedsAStoreOpenedAsOne) {
  OpenReplica owner;
  ASSERT_TRUE(OpenStoreOn(kBackends[0], "", false, &owner).ok());
  std::unique_ptr<Replica> r;
  EXPECT_EQ(Replica::Attach(owner.store.get(), &r).code(), Code::kInvalidArgs);
}

// ---- the driver's side: pullSession's promotion, the split, the pull-back ----

constexpr char kPut[] = R"([{"op":"put","table":"t/items","row":{"id":"z","n":9}}])";

TEST(DriverStores, APromotedReplicaOpensAsAnOwnersStoreAndCommitsAfterItsHead) {
  const ReplicaBackend& file = kBackends[2];
  const std::string owner_path = TempPath("promote_owner");
  const std::string path = TempPath("promote_replica");
  RemoveFiles(owner_path);
  RemoveFiles(path);
  OpenReplica owner;
  ASSERT_TRUE(OpenStoreOn(file, owner_path, false, &owner).ok());
  ASSERT_TRUE(Commit(owner.store.get(), kTable).ok());
  {
    OpenReplica r;
    ASSERT_TRUE(OpenStoreOn(file, path, true, &r).ok());
    std::string result;
    ASSERT_TRUE(r.replica->ApplyBatch(Batch(owner.store.get()), &result).ok());
    Status s = r.store->Promote();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_FALSE(r.store->is_replica());
    EXPECT_EQ(r.store->Promote().code(), Code::kInvalidArgs);
  }
  // Reopened, it is an owner's store (a replica's open is refused) and its
  // next commit is seq 2, recorded after the applied one.
  OpenReplica as_replica;
  EXPECT_EQ(OpenStoreOn(file, path, true, &as_replica).code(), Code::kInvalidArgs);
  OpenReplica promoted;
  ASSERT_TRUE(OpenStoreOn(file, path, false, &promoted).ok());
  EXPECT_EQ(promoted.store->head(), 1);
  ASSERT_TRUE(Commit(promoted.store.get(), kPut).ok());
  EXPECT_EQ(promoted.store->head(), 2);
  EXPECT_NE(Batch(promoted.store.get(), 0).find("\"seq\":2"), std::string::npos);
  promoted.store.reset();
  owner.store.reset();
  RemoveFiles(owner_path);
  RemoveFiles(path);
}

TEST(DriverStores, ASplitStoreKeepsItsNewIdAndOriginAcrossReopening) {
  const ReplicaBackend& file = kBackends[2];
  const std::string path = TempPath("split");
  RemoveFiles(path);
  {
    OpenReplica s;
    ASSERT_TRUE(OpenStoreOn(file, path, false, &s).ok());
    ASSERT_TRUE(Commit(s.store.get(), kTable).ok());
    EXPECT_EQ(s.store->origin(), "");
    EXPECT_EQ(s.store->Split("s-new", "{\"id\":\"replica-test\",\"seq\":2}").code(),
              Code::kInvalidArgs);  // beyond the head
    EXPECT_EQ(s.store->Split("s-new", "{\"id\":1}").code(), Code::kInvalidArgs);
    EXPECT_EQ(s.store->Split("", "{\"id\":\"replica-test\",\"seq\":1}").code(),
              Code::kInvalidArgs);
    EXPECT_EQ(s.store->id(), "replica-test");
    ASSERT_TRUE(s.store->Split("s-new", "{\"id\":\"replica-test\",\"seq\":1}").ok());
    EXPECT_EQ(s.store->id(), "s-new");
  }
  OpenReplica again;
  ASSERT_TRUE(OpenStoreOn(file, path, false, &again).ok());
  EXPECT_EQ(again.store->id(), "s-new");
  EXPECT_EQ(again.store->origin(), "{\"id\":\"replica-test\",\"seq\":1}");
  EXPECT_EQ(again.store->head(), 1);
  again.store.reset();
  RemoveFiles(path);
}

TEST(DriverStores, ADriverPullsItsOwnBatchesBackAndRefusesAGap) {
  OpenReplica owner, lost;
  ASSERT_TRUE(OpenStoreOn(kBackends[0], "", false, &owner).ok());
  ASSERT_TRUE(OpenStoreOn(kBackends[0], "", false, &lost).ok());
  ASSERT_TRUE(Commit(owner.store.get(), kTable).ok());
  ASSERT_TRUE(Commit(owner.store.get(), kPut).ok());
  std::unique_ptr<Replica> r;
  ASSERT_TRUE(Replica::AttachDriver(lost.store.get(), &r).ok());
  std::string result;
  EXPECT_EQ(r->ApplyBatch(Batch(owner.store.get(), 1), &result).code(), Code::kSyncGap);
  ASSERT_TRUE(r->ApplyBatch(Batch(owner.store.get()), &result).ok());
  EXPECT_EQ(lost.store->head(), 2);
  EXPECT_EQ(Batch(lost.store.get()), Batch(owner.store.get()));
  // It stays an owner's store: its next commit is seq 3.
  ASSERT_TRUE(Commit(lost.store.get(), kPut).ok());
  EXPECT_EQ(lost.store->head(), 3);
}

// ---- the fingerprint ----

TEST(Fingerprint, DependsOnTheContentAloneNotOnTheHeadOrTheOutbox) {
  OpenReplica a, b;
  ASSERT_TRUE(OpenStoreOn(kBackends[0], "", false, &a).ok());
  ASSERT_TRUE(OpenStoreOn(kBackends[1], "", false, &b).ok());
  const std::string empty = Fp(a.store.get());
  EXPECT_EQ(empty.size(), 35u);
  EXPECT_EQ(empty.rfind("f1-", 0), 0u);
  ASSERT_TRUE(Commit(a.store.get(), kTable).ok());
  ASSERT_TRUE(Commit(b.store.get(), kTable).ok());
  EXPECT_NE(Fp(a.store.get()), empty);  // a table is content
  // The same rows reached in another number of commits.
  ASSERT_TRUE(Commit(a.store.get(), R"([{"op":"put","table":"t/items","row":{"id":"a","n":1}},
                                       {"op":"put","table":"t/items","row":{"id":"b","n":2}}])")
                  .ok());
  ASSERT_TRUE(
      Commit(b.store.get(), R"([{"op":"put","table":"t/items","row":{"id":"b","n":7}}])").ok());
  ASSERT_TRUE(
      Commit(b.store.get(), R"([{"op":"put","table":"t/items","row":{"id":"a","n":1}}])").ok());
  EXPECT_NE(Fp(a.store.get()), Fp(b.store.get()));
  ASSERT_TRUE(
      Commit(b.store.get(), R"([{"op":"update","table":"t/items","key":["b"],"set":{"n":2}}])")
          .ok());
  EXPECT_EQ(Fp(a.store.get()), Fp(b.store.get()));
  int64_t removed = 0;
  ASSERT_TRUE(b.store->TrimOutbox(4, &removed).ok());
  EXPECT_EQ(Fp(a.store.get()), Fp(b.store.get()));
}

TEST(Fingerprint, ReadsTablesLongerThanOnePage) {
  OpenReplica a, b;
  ASSERT_TRUE(OpenStoreOn(kBackends[0], "", false, &a).ok());
  ASSERT_TRUE(OpenStoreOn(kBackends[1], "", false, &b).ok());
  for (Store* s : {a.store.get(), b.store.get()}) {
    ASSERT_TRUE(Commit(s, kTable).ok());
    std::string ops = "[";
    for (int i = 0; i < 2500; ++i) {
      if (i) ops += ",";
      ops += R"({"op":"put","table":"t/items","row":{"id":"k)" + std::to_string(i) + R"(","n":)" +
             std::to_string(i) + "}}";
    }
    ASSERT_TRUE(Commit(s, ops + "]").ok());
  }
  const std::string fp = Fp(a.store.get());
  EXPECT_EQ(fp, Fp(b.store.get()));
  // The last row counts: change it on one side.
  ASSERT_TRUE(
      Commit(b.store.get(), R"([{"op":"update","table":"t/items","key":["k999"],"set":{"n":0}}])")
          .ok());
  EXPECT_NE(fp, Fp(b.store.get()));
}

}  // namespace
}  // namespace onestore
