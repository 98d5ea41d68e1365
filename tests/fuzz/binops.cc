// Fuzz target: the binary ops batch every commit of the JS package crosses
// as (wasm/ABI.md, "Binary ops"; js/ops-buffer.js writes it,
// src/writes/fast_puts.cc ParseBinaryOps and CountBinaryOps read it), on a
// memory store and a sqlite :memory: store with the same tables (str, int,
// num, bool, json, vector and optional columns; str, int and composite keys)
// and a few rows.
//
// Input: two bytes, a split point k (little-endian; 0 or past the end: no
// split), then the batch. Invariants:
// - no sanitizer report: the parser reads the batch from a buffer of exactly
//   its size, so a read one byte past a length is ASan's;
// - ParseBinaryOps, into an empty list and into a list with an op staged
//   before: a refusal is a write refusal code with a message and leaves the
//   list exactly as it was; an acceptance appends the same ops to both, and
//   an empty list is reserved once, exactly (CountBinaryOps agrees with the
//   parse);
// - the batch read again by an independent decoder (below) and every record
//   turned into the wire JSON the JS package would have sent (a put's values
//   rendered as the JSON encoder writes them) and read by ParseOp: the same
//   ops (same Op::AppendJson text), or the same refusal (code and message)
//   at the same op; a batch the decoder finds malformed is refused as
//   malformed, and only then;
// - the accepted ops written as the commit path writes them (AppendOpsJson)
//   and read back by the JSON ops parser give byte-identical JSON;
// - committed on both stores: both accept or both refuse alike; accepted,
//   one more seq and equal content; refused, head and content unchanged;
//   and the wire JSON committed on a third (memory) store gives the same
//   answer, the same refusal or the same content;
// - staged in two pieces, the batch's first k bytes then the magic byte and
//   the rest (a tx.get between two puts): when both pieces parse, their ops
//   are the whole batch's; on the stores, TxStage of the first piece and
//   TxCommit of the second agree on both backends and a refusal changes
//   nothing; after everything, both stores still commit and read.
#include <cstring>
#include <optional>

#include "fuzz_common.h"
#include "values/json_text.h"
#include "writes/binary_ops.h"
#include "writes/writes.h"

namespace onestore {
namespace fuzz {
namespace {

constexpr char kTables[] =
    R"([{"op":"table","table":"t/items","version":1,"columns":{"id":{"type":"str"},)"
    R"("n":{"type":"int","default":0},"x":{"type":"num","optional":true},)"
    R"("b":{"type":"bool","optional":true},"j":{"type":"json","optional":true},)"
    R"("s":{"type":"str","optional":true},"v":{"type":"vector","dims":2,"optional":true}},)"
    R"("key":["id"],"indexes":{"byN":["n","id"]}},)"
    R"({"op":"table","table":"t/nums","version":1,"columns":{"k":{"type":"int"},)"
    R"("s":{"type":"str"},"x":{"type":"num","default":1.5},"f":{"type":"bool","default":false}},)"
    R"("key":["k"],"indexes":{"byS":["s"]}},)"
    R"({"op":"table","table":"t/pairs","version":1,"columns":{"g":{"type":"str"},)"
    R"("n":{"type":"int"},"val":{"type":"json","optional":true},"note":{"type":"str","default":""}},)"
    R"("key":["g","n"]}])";
constexpr char kRows[] =
    R"([{"op":"put","table":"t/items","row":{"id":"a","n":1,"x":0.5,"b":true,"j":{"k":[1]},"s":"é"}},)"
    R"({"op":"put","table":"t/items","row":{"id":"b","n":-7}},)"
    R"({"op":"put","table":"t/nums","row":{"k":1,"s":"one"}},)"
    R"({"op":"put","table":"t/nums","row":{"k":-2,"s":"minus two","x":-2.5,"f":true}},)"
    R"({"op":"put","table":"t/pairs","row":{"g":"g","n":1,"val":[1,"x"]}}])";
// The op staged before the batch, in the parse checks.
constexpr char kStaged[] = R"([{"op":"delete","table":"t/items","key":["zz"]}])";

void Setup(Pair* p) {
  FUZZ_CHECK(p->Commit(kTables).ok(), "the tables");
  FUZZ_CHECK(p->Commit(kRows).ok(), "the rows");
}

std::string OpsText(const std::vector<Op>& ops, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < ops.size(); ++i) {
    ops[i].AppendJson(&out);
    out.push_back('\n');
  }
  return out;
}

Catalog CatalogOf(Store* s) {
  Catalog catalog;
  for (const auto& t : s->Tables()) catalog.Put(t);
  return catalog;
}

// A copy of bytes in a buffer of exactly their size, for the parser to read
// (past its end is ASan's redzone; a std::string's terminator and spare
// capacity, or an input's next bytes, would hide such a read).
class Exact {
 public:
  explicit Exact(std::string_view s) : bytes_(new char[s.size()]), size_(s.size()) {
    if (size_) std::memcpy(bytes_.get(), s.data(), size_);
  }
  std::string_view view() const { return {bytes_.get(), size_}; }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_;
};

constexpr char kMalformed[] = "ops: the binary batch is malformed at byte ";

// An independent reading of the batch's framing (wasm/ABI.md), written from
// the format's description rather than from the parser: its records as the
// wire JSON text of one op each, or nullopt when the batch is malformed.
struct Decoded {
  std::vector<std::string> ops;  // one wire JSON op a P or J record
  bool malformed = false;
};

class Decoder {
 public:
  explicit Decoder(std::string_view s) : s_(s) {}
  bool End() const { return i_ == s_.size(); }
  bool Byte(unsigned char* c) {
    if (i_ >= s_.size()) return false;
    *c = static_cast<unsigned char>(s_[i_++]);
    return true;
  }
  bool Varint(uint64_t* out) {
    uint64_t v = 0;
    for (int k = 0; k < 10; ++k) {
      unsigned char c;
      if (!Byte(&c)) return false;
      const int shift = 7 * k;
      if (shift < 64) v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) {
        *out = v;
        return true;
      }
    }
    return false;  // more than 10 bytes
  }
  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > s_.size() - i_) return false;
    *out = s_.substr(i_, n);
    i_ += n;
    return true;
  }
  // One value as the JS package's JSON encoder would write it.
  bool Value(std::string* out) {
    unsigned char tag;
    if (!Byte(&tag)) return false;
    uint64_t u;
    std::string_view text;
    switch (tag) {
      case 0: out->append("null"); return true;
      case 1: out->append("false"); return true;
      case 2: out->append("true"); return true;
      case 3:
      case 7:
        if (!Varint(&u)) return false;
        if (tag == 7) out->push_back('-');
        out->append(std::to_string(u));
        return true;
      case 4:
        if (!Bytes(&text)) return false;
        AppendJsonString(text, out);
        return true;
      case 5:
      case 6:
        if (!Bytes(&text)) return false;
        out->append(text);
        return true;
      default:
        return false;
    }
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

Decoded Decode(std::string_view batch) {
  Decoded d;
  Decoder r(batch);
  unsigned char c;
  if (!r.Byte(&c) || c != kBinaryOpsMagic) {
    d.malformed = true;
    return d;
  }
  bool have_shape = false;
  std::string head;  // {"op":"put","table":t,"row":{
  std::vector<std::string> names;
  while (!r.End()) {
    r.Byte(&c);
    std::string_view text;
    if (c == 'S') {
      uint64_t n;
      if (!r.Bytes(&text) || !r.Varint(&n) || n > batch.size()) {
        d.malformed = true;
        return d;
      }
      head = "{\"op\":\"put\",\"table\":";
      AppendJsonString(text, &head);
      head.append(",\"row\":{");
      names.assign(n, std::string());
      for (auto& name : names) {
        if (!r.Bytes(&text)) {
          d.malformed = true;
          return d;
        }
        AppendJsonString(text, &name);
      }
      have_shape = true;
    } else if (c == 'P' && have_shape) {
      std::string op = head;
      for (size_t k = 0; k < names.size(); ++k) {
        if (k) op.push_back(',');
        op += names[k];
        op.push_back(':');
        if (!r.Value(&op)) {
          d.malformed = true;
          return d;
        }
      }
      op.append("}}");
      d.ops.push_back(std::move(op));
    } else if (c == 'J' && r.Bytes(&text)) {
      d.ops.emplace_back(text);
    } else {
      d.malformed = true;
      return d;
    }
  }
  return d;
}

// The parse checks; the accepted ops, or nullopt.
std::optional<std::vector<Op>> CheckParse(Store* s, std::string_view batch) {
  const Catalog catalog = CatalogOf(s);
  // Into an empty list.
  std::vector<Op> ops;
  Status st;
  {
    TableResolver tables(&catalog);
    st = ParseBinaryOps(batch, &tables, &ops);
  }
  // Into a list with an op staged before it.
  std::vector<Op> staged;
  {
    TableResolver tables(&catalog);
    Json j;
    FUZZ_CHECK(ParseJsonText(kStaged, "ops", &j).ok() && ParseOps(j, &tables, &staged).ok(),
               "the staged op");
  }
  const std::string staged_before = OpsText(staged);
  Status st2;
  {
    TableResolver tables(&catalog);
    st2 = ParseBinaryOps(batch, &tables, &staged);
  }
  FUZZ_CHECK(st.code() == st2.code() && st.message() == st2.message(),
             "the batch parses differently after a staged op: " + st.ToString() + " vs " +
                 st2.ToString());
  FUZZ_CHECK(OpsText(staged, 0).compare(0, staged_before.size(), staged_before) == 0,
             "the parse changed an op staged before the batch");

  // The independent decoder and the DOM path, op by op.
  const Decoded d = Decode(batch);
  std::vector<Op> dom;
  Status dom_st;
  {
    TableResolver tables(&catalog);
    for (size_t i = 0; i < d.ops.size() && dom_st.ok(); ++i) {
      Json j;
      dom_st = ParseJsonText(d.ops[i], "ops", &j, kMaxJsonDepth - 1);
      if (!dom_st.ok()) break;
      Op op;
      dom_st = ParseOp(j, &tables, "ops[" + std::to_string(i) + "]", &op);
      if (dom_st.ok()) dom.push_back(std::move(op));
    }
  }

  if (!st.ok()) {
    CheckRefusal(st, WriteRefusals(), "ParseBinaryOps");
    FUZZ_CHECK(ops.empty(), "a refused parse left ops in an empty list");
    FUZZ_CHECK(OpsText(staged) == staged_before, "a refused parse changed the staged list");
    if (dom_st.ok()) {
      // Every op the decoder read was taken: the refusal is the framing's.
      FUZZ_CHECK(d.malformed, "ParseBinaryOps refused a batch whose every op the DOM path takes: " +
                                  st.ToString());
      FUZZ_CHECK(st.code() == Code::kInvalidArgs && st.message().rfind(kMalformed, 0) == 0,
                 "a malformed batch refused otherwise: " + st.ToString());
    } else {
      FUZZ_CHECK(st.code() == dom_st.code() && st.message() == dom_st.message(),
                 "ParseBinaryOps and the DOM path refuse differently: " + st.ToString() + " vs " +
                     dom_st.ToString());
    }
    return std::nullopt;
  }
  FUZZ_CHECK(!d.malformed, "ParseBinaryOps took a batch the decoder finds malformed");
  FUZZ_CHECK(dom_st.ok(), "ParseBinaryOps took a batch whose wire JSON the DOM path refuses: " +
                              dom_st.ToString());
  const std::string text = OpsText(ops);
  FUZZ_CHECK(text == OpsText(dom),
             "the batch and its wire JSON give different ops:\nbinary: " + text +
                 "\nwire:   " + OpsText(dom));
  FUZZ_CHECK(ops.capacity() == ops.size(),
             "an empty list was not reserved exactly (CountBinaryOps and the parse disagree): " +
                 std::to_string(ops.capacity()) + " for " + std::to_string(ops.size()));
  FUZZ_CHECK(staged.size() == 1 + ops.size() && OpsText(staged, 1) == text,
             "the batch parses differently after a staged op");

  // The ops as the commit path writes them, read back by the JSON parser.
  std::string json;
  AppendOpsJson(ops, &json);
  std::string each = "[";
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i) each.push_back(',');
    ops[i].AppendJson(&each);
  }
  each.push_back(']');
  FUZZ_CHECK(json == each, "AppendOpsJson and Op::AppendJson differ:\n" + json + "\n" + each);
  Json j;
  Status rs = ParseJsonText(json, "ops", &j);
  FUZZ_CHECK(rs.ok(), "the accepted ops' JSON does not parse: " + rs.ToString() + "\n" + json);
  std::vector<Op> again;
  TableResolver tables(&catalog);
  rs = ParseOps(j, &tables, &again);
  FUZZ_CHECK(rs.ok(), "the accepted ops' JSON is refused: " + rs.ToString() + "\n" + json);
  std::string json2;
  AppendOpsJson(again, &json2);
  FUZZ_CHECK(json == json2, "the accepted ops' JSON reads back otherwise:\n" + json + "\n" + json2);
  return ops;
}

// Both pieces of a split batch, staged into one list: when both parse, the
// whole batch's ops.
void CheckPieces(Store* s, std::string_view first, std::string_view second,
                 const std::optional<std::vector<Op>>& whole) {
  const Catalog catalog = CatalogOf(s);
  TableResolver tables(&catalog);
  std::vector<Op> ops;
  Status st = ParseBinaryOps(first, &tables, &ops);
  if (!st.ok()) {
    FUZZ_CHECK(ops.empty(), "a refused piece left ops");
    return;
  }
  const std::string before = OpsText(ops);
  const size_t n = ops.size();
  for (const Op& op : ops) {
    if (op.declares()) tables.Declare(op.table);  // as Store::StageInto does
  }
  st = ParseBinaryOps(second, &tables, &ops);
  if (!st.ok()) {
    FUZZ_CHECK(ops.size() == n && OpsText(ops) == before, "a refused piece changed the staged list");
    return;
  }
  FUZZ_CHECK(whole.has_value(), "both pieces parse but the whole batch does not");
  FUZZ_CHECK(OpsText(ops) == OpsText(*whole), "the pieces give other ops than the whole batch");
}

// TxStage(first) then TxCommit(second) on both stores.
void CheckTx(Pair* p, const std::string& first, const std::string& second) {
  State before = StateOf(p->mem.get());
  const int t1 = p->mem->TxOpen(), t2 = p->sql->TxOpen();
  Status s1 = p->mem->TxStage(t1, first);
  Status s2 = p->sql->TxStage(t2, first);
  FUZZ_CHECK(s1.code() == s2.code(), "memory and sqlite stage differently: " + s1.ToString() + " vs " + s2.ToString());
  if (!s1.ok()) CheckRefusal(s1, WriteRefusals(), "TxStage");
  FUZZ_CHECK(StateOf(p->mem.get()) == before && StateOf(p->sql.get()) == before,
             "staging changed a store");
  std::string r1, r2;
  s1 = p->mem->TxCommit(t1, second, kMeta, &r1);
  s2 = p->sql->TxCommit(t2, second, kMeta, &r2);
  FUZZ_CHECK(s1.code() == s2.code(), "memory and sqlite commit a tx differently: " + s1.ToString() + " vs " + s2.ToString());
  if (s1.ok()) {
    FUZZ_CHECK(p->mem->head() == before.head + 1, "an accepted tx did not take one seq");
    FUZZ_CHECK(r1 == r2, "memory and sqlite answer a tx differently: " + r1 + " vs " + r2);
    FUZZ_CHECK(Fp(p->mem.get()) == Fp(p->sql.get()), "memory and sqlite differ after a tx");
    return;
  }
  CheckRefusal(s1, WriteRefusals(), "TxCommit");
  FUZZ_CHECK(StateOf(p->mem.get()) == before, "a refused tx changed memory: " + s1.ToString());
  FUZZ_CHECK(StateOf(p->sql.get()) == before, "a refused tx changed sqlite: " + s2.ToString());
}

}  // namespace

ONESTORE_FUZZ_TARGET(binops) {
  if (size < 3) return 0;
  const size_t k = data[0] | (size_t{data[1]} << 8);
  const std::string batch(reinterpret_cast<const char*>(data) + 2, size - 2);
  Pair p;
  Setup(&p);

  // 1 and 2: the parse, the decoder, the JSON form; parsed from a buffer of
  // exactly the batch's size (a std::string's terminator and spare capacity
  // would hide a read past its end from ASan).
  const auto ops = CheckParse(p.mem.get(), Exact(batch).view());
  const bool split = k > 0 && k < batch.size();
  std::string first, second;
  if (split) {
    first = batch.substr(0, k);
    second = std::string(1, static_cast<char>(kBinaryOpsMagic)) + batch.substr(k);
    CheckPieces(p.mem.get(), Exact(first).view(), Exact(second).view(), ops);
  }

  // 3: the commit on both stores, and its wire JSON on a third.
  const State before = StateOf(p.mem.get());
  std::string r1;
  Status st = p.mem->Commit(batch, kMeta, &r1);
  {
    // Pair::Commit's checks, on the store already committed.
    std::string r2;
    Status s2 = p.sql->Commit(batch, kMeta, &r2);
    FUZZ_CHECK(st.code() == s2.code(), "memory and sqlite disagree on a batch: " + st.ToString() + " vs " + s2.ToString());
    if (st.ok()) {
      FUZZ_CHECK(p.mem->head() == before.head + 1, "an accepted batch did not take one seq");
      FUZZ_CHECK(r1 == r2, "memory and sqlite answer a batch differently: " + r1 + " vs " + r2);
      FUZZ_CHECK(Fp(p.mem.get()) == Fp(p.sql.get()), "memory and sqlite differ after a batch");
    } else {
      CheckRefusal(st, WriteRefusals(), "commit");
      FUZZ_CHECK(StateOf(p.mem.get()) == before, "a refused batch changed memory: " + st.ToString());
      FUZZ_CHECK(StateOf(p.sql.get()) == before, "a refused batch changed sqlite: " + s2.ToString());
    }
  }
  FUZZ_CHECK(!st.ok() || ops.has_value(), "a batch ParseBinaryOps refuses was committed");
  const Decoded d = Decode(batch);
  if (!d.malformed) {
    std::string wire = "[";
    for (size_t i = 0; i < d.ops.size(); ++i) {
      if (i) wire.push_back(',');
      wire += d.ops[i];
    }
    wire.push_back(']');
    // Only when each op's text is one JSON value alone (a number or json
    // text record may hold anything): then the array reads as the records.
    bool faithful = true;
    for (const std::string& op : d.ops) {
      Json j;
      bool too_deep = false;
      faithful = faithful && TryParseJsonText(op, kMaxJsonDepth - 1, &j, &too_deep);
    }
    if (faithful) {
      auto third = OpenMemory();
      std::string r;
      FUZZ_CHECK(third->Commit(kTables, kMeta, &r).ok() && third->Commit(kRows, kMeta, &r).ok(),
                 "the third store's setup");
      std::string r3;
      Status s3 = third->Commit(wire, kMeta, &r3);
      FUZZ_CHECK(st.code() == s3.code() && st.message() == s3.message(),
                 "the batch and its wire JSON commit differently: " + st.ToString() + " vs " +
                     s3.ToString() + "\n" + wire);
      if (st.ok()) {
        FUZZ_CHECK(r1 == r3, "the batch and its wire JSON answer differently: " + r1 + " vs " + r3);
        FUZZ_CHECK(Fp(third.get()) == Fp(p.mem.get()),
                   "the batch and its wire JSON leave different content");
      }
    }
  }

  // 4: in two pieces.
  if (split) CheckTx(&p, first, second);
  p.CheckStillWork();
  return 0;
}

}  // namespace fuzz
}  // namespace onestore
