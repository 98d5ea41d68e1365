// Stores for the C++ tests of the core's whole-store features (snapshots,
// archives, restores): open one, commit wire ops to it, read its
// fingerprint, name a fresh file for it. Each fails the calling test (with
// the core's message) when the core refuses.
#ifndef ONESTORE_TESTS_CPP_STORE_FIXTURES_H_
#define ONESTORE_TESTS_CPP_STORE_FIXTURES_H_

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "commit/store.h"
#include "sync/fingerprint.h"

namespace onestore {
namespace test {

// A store of `backend` ("memory", "sqlite") at `path` ("" for memory,
// ":memory:" or a file for sqlite), with session id `id` (a new one when
// empty); a replica when `replica`. Null (and the test failed) if refused.
inline std::unique_ptr<Store> OpenTestStore(const std::string& backend, const std::string& path,
                                            const std::string& id = "", bool replica = false) {
  OpenOptions o;
  o.backend = backend;
  o.path = path;
  o.id = id;
  o.replica = replica;
  std::unique_ptr<Store> s;
  Status st = Store::Open(o, &s);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

// Commits `ops` (a wire JSON array) as an owner's commit with no context.
inline void CommitOps(Store* s, const std::string& ops) {
  std::string result;
  Status st = s->Commit(ops, "{}", &result);
  ASSERT_TRUE(st.ok()) << st.message();
}

// The store's content fingerprint (store.fingerprint's digest).
inline std::string FingerprintOf(Store* s) {
  std::string fp;
  Status st = Fingerprint(s, &fp);
  EXPECT_TRUE(st.ok()) << st.message();
  return fp;
}

// A path in the test's temp directory, "onestore_<prefix>_<name>.sqlite",
// with no file (nor journal, nor WAL) left there by an earlier run.
inline std::string FreshStorePath(const std::string& prefix, const std::string& name) {
  std::string p = ::testing::TempDir() + "onestore_" + prefix + "_" + name + ".sqlite";
  for (const char* suffix : {"", "-journal", "-wal"}) std::remove((p + suffix).c_str());
  return p;
}

}  // namespace test
}  // namespace onestore

#endif  // ONESTORE_TESTS_CPP_STORE_FIXTURES_H_
