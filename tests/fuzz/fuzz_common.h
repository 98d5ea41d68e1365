// What every fuzz target in tests/fuzz/ shares: the entry point, the checks
// of the invariants, and stores to drive (docs/reliability.md, "Sanitized
// fuzzing").
//
// Each target is one file tests/fuzz/<name>.cc that defines its body with
// ONESTORE_FUZZ_TARGET(name). Built two ways:
// - the fuzz build (scripts/fuzz.sh: clang, -fsanitize=fuzzer,address,
//   undefined, -fno-exceptions like the wasm core), where the body is
//   LLVMFuzzerTestOneInput of its own binary build/fuzz/fuzz_<name>;
// - the ordinary native build, where the bodies are linked into
//   onestore_tests and tests/cpp/fuzz_corpus_test.cc replays every file of
//   tests/fuzz/corpus/<name>/ through them (no sanitizers there, but the
//   same invariants, so a finding stays a ctest regression too).
//
// A broken invariant prints what broke and aborts: libFuzzer (or ctest)
// reports the input.
//
// Inputs are text; targets that need several texts take them as lines
// (split at '\n'; JSON text never needs a raw newline).
#ifndef ONESTORE_TESTS_FUZZ_FUZZ_COMMON_H_
#define ONESTORE_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commit/store.h"
#include "onestore/status.h"
#include "sync/fingerprint.h"
#include "values/value.h"

namespace onestore {
namespace fuzz {

using TargetFn = int (*)(const uint8_t*, size_t);

// name -> body, for the corpus replay in ctest.
inline std::map<std::string, TargetFn>& Targets() {
  static std::map<std::string, TargetFn> targets;
  return targets;
}
struct Register {
  Register(const char* name, TargetFn fn) { Targets()[name] = fn; }
};

#ifdef ONESTORE_FUZZ_BUILD
#define ONESTORE_FUZZ_TARGET(name)                                               \
  static int FuzzBody_##name(const uint8_t* data, size_t size);                  \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {      \
    return FuzzBody_##name(data, size);                                          \
  }                                                                              \
  static int FuzzBody_##name(const uint8_t* data, size_t size)
#else
#define ONESTORE_FUZZ_TARGET(name)                                               \
  static int FuzzBody_##name(const uint8_t* data, size_t size);                  \
  static ::onestore::fuzz::Register fuzz_register_##name(#name, FuzzBody_##name); \
  static int FuzzBody_##name(const uint8_t* data, size_t size)
#endif

[[noreturn]] inline void Fail(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n", file, line, what.c_str());
  std::fflush(stderr);
  std::abort();
}

#define FUZZ_CHECK(cond, what)                                             \
  do {                                                                     \
    if (!(cond)) ::onestore::fuzz::Fail(__FILE__, __LINE__, (what));      \
  } while (0)

// The input's lines; the last one may be empty.
inline std::vector<std::string> Lines(const uint8_t* data, size_t size, size_t at_most) {
  std::vector<std::string> out;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (out.size() + 1 < at_most) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) break;
    out.emplace_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  out.emplace_back(text);
  return out;
}

// A refusal of outside input: one of `allowed`, with a message.
inline void CheckRefusal(const Status& st, const std::vector<Code>& allowed,
                         const std::string& call) {
  FUZZ_CHECK(!st.ok(), call + ": expected a refusal");
  bool known = false;
  for (Code c : allowed) known = known || st.code() == c;
  FUZZ_CHECK(known, call + ": refused with an unexpected code: " + st.ToString());
  FUZZ_CHECK(!st.message().empty(), call + ": refused without a message");
}

inline std::unique_ptr<Store> OpenMemory() {
  OpenOptions o;
  o.backend = "memory";
  o.id = "fuzz";
  std::unique_ptr<Store> s;
  Status st = Store::Open(o, &s);
  FUZZ_CHECK(st.ok(), "memory open: " + st.ToString());
  return s;
}

inline std::unique_ptr<Store> OpenSqliteMemory() {
  OpenOptions o;
  o.backend = "sqlite";
  o.path = ":memory:";
  o.id = "fuzz";
  std::unique_ptr<Store> s;
  Status st = Store::Open(o, &s);
  FUZZ_CHECK(st.ok(), "sqlite :memory: open: " + st.ToString());
  return s;
}

inline std::string Fp(Store* s) {
  std::string fp;
  Status st = Fingerprint(s, &fp);
  FUZZ_CHECK(st.ok(), "fingerprint: " + st.ToString());
  return fp;
}

constexpr char kMeta[] = R"({"owner":"fuzz","at":1})";

// A store's visible state: head and fingerprint.
struct State {
  int64_t head;
  std::string fp;
  bool operator==(const State& o) const { return head == o.head && fp == o.fp; }
  std::string ToString() const { return "head " + std::to_string(head) + " " + fp; }
};
inline State StateOf(Store* s) { return {s->head(), Fp(s)}; }

// After refusals, a store still commits (an empty commit takes the next
// seq) and reads (a page of each table). Nothing here depends on a table of
// its own, which an input could have declared otherwise.
inline void CheckStillWorks(Store* s, const std::string& who) {
  if (!s->is_replica()) {
    const int64_t head = s->head();
    std::string result;
    Status st = s->Commit("[]", kMeta, &result);
    FUZZ_CHECK(st.ok(), who + ": an empty commit after a refusal: " + st.ToString());
    FUZZ_CHECK(s->head() == head + 1, who + ": the commit did not take one seq");
  }
  for (const auto& t : s->Tables()) {
    std::string page;
    Status st = s->Page(t->name, "{}", 5, "", &page);
    FUZZ_CHECK(st.ok(), who + ": a page of " + t->name + " after a refusal: " + st.ToString());
  }
}

// The codes a refused write of outside ops may have.
inline const std::vector<Code>& WriteRefusals() {
  static const std::vector<Code> codes = {Code::kInvalidArgs, Code::kNotFound,
                                          Code::kSchemaNewer, Code::kLimit};
  return codes;
}

// A memory store and a sqlite :memory: store that must stay equal.
struct Pair {
  std::unique_ptr<Store> mem = OpenMemory();
  std::unique_ptr<Store> sql = OpenSqliteMemory();

  // Commits `ops` on both: both accept (and then hold equal content) or
  // both refuse with one write refusal code, nothing changed.
  Status Commit(const std::string& ops, const std::string& meta = kMeta) {
    State before = StateOf(mem.get());
    std::string r1, r2;
    Status s1 = mem->Commit(ops, meta, &r1);
    Status s2 = sql->Commit(ops, meta, &r2);
    FUZZ_CHECK(s1.code() == s2.code(),
               "memory and sqlite disagree on a commit: " + s1.ToString() + " vs " + s2.ToString());
    if (s1.ok()) {
      FUZZ_CHECK(mem->head() == before.head + 1, "an accepted commit did not take one seq");
      FUZZ_CHECK(r1 == r2, "memory and sqlite answer a commit differently: " + r1 + " vs " + r2);
      FUZZ_CHECK(Fp(mem.get()) == Fp(sql.get()), "memory and sqlite differ after a commit");
      return s1;
    }
    CheckRefusal(s1, WriteRefusals(), "commit");
    FUZZ_CHECK(StateOf(mem.get()) == before, "a refused commit changed memory: " + s1.ToString());
    FUZZ_CHECK(StateOf(sql.get()) == before, "a refused commit changed sqlite: " + s2.ToString());
    return s1;
  }

  void CheckStillWork() {
    CheckStillWorks(mem.get(), "memory");
    CheckStillWorks(sql.get(), "sqlite");
  }
};

// The codes a refused read of outside input may have.
inline const std::vector<Code>& ReadRefusals() {
  static const std::vector<Code> codes = {Code::kInvalidArgs, Code::kInvalidCursor,
                                          Code::kNotFound, Code::kLimit};
  return codes;
}

inline std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

}  // namespace fuzz
}  // namespace onestore

#endif  // ONESTORE_TESTS_FUZZ_FUZZ_COMMON_H_
