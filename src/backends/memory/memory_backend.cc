// The memory backend. Committed state: per table an ordered map key -> row
// and one ordered multiset of entries per secondary index (each a pointer to
// its row, ordered by the index's columns, which end with the key's; see
// IndexEntry). A write transaction collects its changes
// in a staging area (per table: key -> new row or deleted, a declared schema,
// outbox records); Commit moves them into the committed maps in a loop that
// cannot fail, Rollback drops them.

#include "backends/memory/memory_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "backends/memory/memory_testing.h"
#include "backends/memory/plan.h"
#include "onestore/cold.h"
#include "onestore/heap.h"
#include "onestore/kept.h"

namespace onestore {

namespace {

using Entry = std::vector<Value>;

// A seek target: rows whose entries start with `values` sort after the probe
// when `after` is false, before it when `after` is true.
struct Probe {
  const Entry* values;
  bool after;
};

// An index entry seen as its values: the indexed columns of a committed row
// (which end with the key columns), read in place.
struct IndexView {
  const Row* row;
  const std::vector<int>* columns;
  size_t size() const { return columns->size(); }
  const Value& operator[](size_t i) const { return (*row)[(*columns)[i]]; }
};

// CompareValues's sign, with two strs and two ints compared in place: an
// index insert compares its row with a dozen others (IndexLess).
inline int CompareCells(const Value& a, const Value& b) {
  if (a.type() == b.type()) {
    if (a.type() == Type::kStr) {
      const std::string& x = a.text();
      const std::string& y = b.text();
      const size_t n = std::min(x.size(), y.size());
      int c = n ? std::memcmp(x.data(), y.data(), n) : 0;
      if (c != 0) return c;
      return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    if (a.type() == Type::kInt) {
      return a.int_value() < b.int_value() ? -1 : (a.int_value() > b.int_value() ? 1 : 0);
    }
  }
  return CompareValues(a, b);
}

// Compares two entries (an Entry or an IndexView) value by value; a shorter
// one that agrees is less.
template <typename A, typename B>
int CompareEntries(const A& a, const B& b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    int c = CompareValues(a[i], b[i]);
    if (c != 0) return c;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// Compares the first p.size() values of `a` with `p` (a shorter `a` that
// agrees is less).
template <typename A>
int ComparePrefix(const A& a, const Entry& p) {
  size_t n = std::min(a.size(), p.size());
  for (size_t i = 0; i < n; ++i) {
    int c = CompareValues(a[i], p[i]);
    if (c != 0) return c;
  }
  return a.size() < p.size() ? -1 : 0;
}

// ValueListLess, plus comparisons with a Probe for seeks.
struct EntryLess {
  using is_transparent = void;
  bool operator()(const Entry& a, const Entry& b) const { return CompareValueLists(a, b) < 0; }
  bool operator()(const Entry& a, const Probe& p) const {
    int c = ComparePrefix(a, *p.values);
    return c < 0 || (c == 0 && p.after);
  }
  bool operator()(const Probe& p, const Entry& a) const {
    int c = ComparePrefix(a, *p.values);
    return c > 0 || (c == 0 && !p.after);
  }
};

// An entry of a secondary index: a pointer to a committed row (in its node
// of the table's RowMap, which does not move while the row is there) and,
// when the index's first column holds a str, that text's bytes in place
// (they live in the row's cell, which does not change while the entry is in
// the index) with its first 24 bytes as three numbers in the entry itself.
// An insert compares its row with about twenty others on its way down the
// tree: most are told apart by the numbers, read from the node at hand,
// without a load of the other row's text (a cache miss, natively) or a call
// of memcmp (musl's byte loop, in wasm). The third number is for texts that
// share a prefix, as paths do: near the leaves an insert's neighbours agree
// on their first 16 bytes ("src/dir3/file123" of "src/dir3/file12345.ts"),
// and with two numbers each of those compares read the other row's text
// (a commit of 25,000 puts: 0.85-0.89x the commit's CPU time, for 8 bytes
// more an entry).
struct IndexEntry {
  const Row* row;
  const char* text;  // null: the first column's cell is not a str
  size_t size;
  // The text's bytes 0-7, 8-15 and 16-23, big-endian, padded with zero bytes: two
  // texts whose numbers differ are in the numbers' order (a text that ends
  // inside them has zeros where the other has bytes, which are then >= 0: a
  // tie up to its end, so the shorter is less, in both orders); two whose
  // numbers are equal are compared by their bytes.
  uint64_t head = 0;
  uint64_t next = 0;
  uint64_t third = 0;
};

// Bytes [from, from + 8) of s, big-endian, zero past its end.
inline uint64_t BigEndianAt(const std::string& s, size_t from) {
  unsigned char b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (from < s.size()) std::memcpy(b, s.data() + from, std::min<size_t>(8, s.size() - from));
  uint64_t v = 0;
  for (unsigned char c : b) v = (v << 8) | c;
  return v;
}

// The entry of row `r` in an index of `columns`.
IndexEntry EntryOf(const Row& r, const std::vector<int>& columns) {
  const Value& v = r[columns[0]];
  if (v.type() != Type::kStr) return IndexEntry{&r, nullptr, 0};
  const std::string& t = v.text();
  return IndexEntry{&r, t.data(), t.size(), BigEndianAt(t, 0), BigEndianAt(t, 8), BigEndianAt(t, 16)};
}

// The order of one secondary index: its entries' rows compared through the
// index's columns. An entry costs a set node, with no copy of the row's
// values.
struct IndexLess {
  using is_transparent = void;
  std::shared_ptr<const std::vector<int>> columns;  // shared: key_comp() copies it
  IndexView View(const Row* r) const { return IndexView{r, columns.get()}; }
  // Both entries have every index column: the insert and erase path. The
  // numbers, which tell most entries apart, are compared inline (in the
  // tree's walk down); the rest out of line.
  bool operator()(const IndexEntry& a, const IndexEntry& b) const {
    if (a.text != nullptr && b.text != nullptr) {
      if (a.head != b.head) return a.head < b.head;
      if (a.next != b.next) return a.next < b.next;
      if (a.third != b.third) return a.third < b.third;
    }
    return Rest(a, b);
  }
  // Two strs get here with equal numbers.
  ONESTORE_NOINLINE bool Rest(const IndexEntry& a, const IndexEntry& b) const {
    size_t from = 0;
    if (a.text != nullptr && b.text != nullptr) {  // two strs: CompareCells's order
      // Equal up to 24 bytes (or to the shorter's end, past which the
      // longer's bytes are zero there): the rest decides, then the length.
      const size_t n = std::min(a.size, b.size);
      int c = n > 24 ? std::memcmp(a.text + 24, b.text + 24, n - 24) : 0;
      if (c == 0 && a.size != b.size) c = a.size < b.size ? -1 : 1;
      if (c != 0) return c < 0;
      from = 1;
    }
    for (size_t i = from; i < columns->size(); ++i) {
      const int c = (*columns)[i];
      int d = CompareCells((*a.row)[c], (*b.row)[c]);
      if (d != 0) return d < 0;
    }
    return false;
  }
  bool operator()(const IndexEntry& a, const Probe& p) const {
    int c = ComparePrefix(View(a.row), *p.values);
    return c < 0 || (c == 0 && p.after);
  }
  bool operator()(const Probe& p, const IndexEntry& a) const {
    int c = ComparePrefix(View(a.row), *p.values);
    return c > 0 || (c == 0 && !p.after);
  }
};

// A key's first value as a number that orders it: a str's first 8 bytes,
// big-endian, zero past its end (IndexEntry's `head`), or an int's bits with
// the sign flipped (keys hold only strs and ints). Two keys whose numbers
// are of one kind and differ are in the numbers' order; others (a tie) are
// compared value by value.
struct KeyHead {
  uint64_t head = 0;
  int kind = 0;  // 1: a str's bytes; 2: an int's bits; 0: neither (no key)
};

// Not inlined, nor is CompareKeys: inlined into each of the RowMap's
// operations they cost 578 more bytes of the gzipped download, for no
// difference a get or a commit showed.
ONESTORE_NOINLINE KeyHead HeadOf(const Key& key) {
  if (key.empty()) return {};
  const Value& v = key[0];
  if (v.type() == Type::kStr) return {BigEndianAt(v.text(), 0), 1};
  if (v.type() == Type::kInt) return {static_cast<uint64_t>(v.int_value()) ^ (uint64_t{1} << 63), 2};
  return {};
}

// A committed row's key in its RowMap node, its head beside it. A get or a
// commit walks down about twenty nodes of a large table: most are told
// apart by the head, read from the node at hand, without a load of the
// key's values (a second cache miss a level: in a memory get of a 100k-row
// table, comparing keys was the larger part of the time).
struct RowKey {
  KeyHead h;
  Key key;
  explicit RowKey(Key k) : h(HeadOf(k)), key(std::move(k)) {}
};

// A key looked up, with its head, and no copy of it.
struct KeyProbe {
  KeyHead h;
  const Key* key;
  explicit KeyProbe(const Key& k) : h(HeadOf(k)), key(&k) {}
};

ONESTORE_NOINLINE int CompareKeys(const KeyHead& ha, const Key& a, const KeyHead& hb, const Key& b) {
  if (ha.kind != 0 && ha.kind == hb.kind && ha.head != hb.head) return ha.head < hb.head ? -1 : 1;
  return CompareValueLists(a, b);
}

// The RowMap's order (ValueListLess's), plus lookups by a KeyProbe and
// seeks by a Probe.
struct RowKeyLess {
  using is_transparent = void;
  bool operator()(const RowKey& a, const RowKey& b) const { return CompareKeys(a.h, a.key, b.h, b.key) < 0; }
  bool operator()(const RowKey& a, const KeyProbe& b) const { return CompareKeys(a.h, a.key, b.h, *b.key) < 0; }
  bool operator()(const KeyProbe& a, const RowKey& b) const { return CompareKeys(a.h, *a.key, b.h, b.key) < 0; }
  bool operator()(const RowKey& a, const Probe& p) const { return EntryLess()(a.key, p); }
  bool operator()(const Probe& p, const RowKey& a) const { return EntryLess()(p, a.key); }
};

using RowMap = std::map<RowKey, Row, RowKeyLess>;
// A multiset, though no two entries are equal (an index's columns end with
// the key's): its insert walks down with one compare a level, where a set's
// asks both ways at each level on its way right.
using EntrySet = std::multiset<IndexEntry, IndexLess>;

EntrySet NewIndexSet(const std::vector<int>& columns) {
  return EntrySet(IndexLess{std::make_shared<const std::vector<int>>(columns)});
}

Entry Project(const std::vector<int>& columns, const Row& row) {
  Entry e;
  e.reserve(columns.size());
  for (int c : columns) e.push_back(row[c]);
  return e;
}

std::string DescribeKey(const Key& key) {
  std::string s = "[";
  for (size_t i = 0; i < key.size(); ++i) {
    if (i) s += ",";
    s += key[i].Describe();
  }
  return s + "]";
}

Status UnknownTable(const std::string& name) {
  return Status::InvalidArgs("unknown table \"" + name +
                             "\" (declare it with a table record first)");
}

// A read's copy of a row whose text passes kReadBytes asks the heap first
// (src/onestore/heap.h): near the wasm heap's cap a copy of a document's
// base of 100 MB aborted the core, every row of the store gone with it.
// False, with *why set, when the heap has no room for the copy. (A row that
// large is mostly one value: its text is asked as one block.)
ONESTORE_NOINLINE bool RoomToRead(const Row& row, Status* why) {
  const size_t text = RowTextBytes(row);
  if (text <= kReadBytes) return true;
  *why = ReadRoom(text, 2.0);
  return why->ok();
}

bool Matches(const Predicate* where, const Row& row) {
  return where == nullptr || EvalPredicate(*where, row) == Tri::kTrue;
}

// A committed table. Its index entries point into `rows`: a row is taken
// out of the indexes before it changes or goes, and put back once it is in
// its node (a std::map move keeps the nodes, so a TableData moves, but is
// never copied).
struct TableData {
  std::shared_ptr<const TableSchema> schema;
  RowMap rows;
  std::vector<EntrySet> indexes;  // parallel to schema->indexes

  TableData() = default;
  TableData(const TableData&) = delete;
  TableData& operator=(const TableData&) = delete;
  TableData(TableData&&) = default;
  TableData& operator=(TableData&&) = default;

  // `row` must be the row in its node of `rows`.
  void AddEntries(const Row& row) {
    for (size_t i = 0; i < indexes.size(); ++i)
      indexes[i].insert(EntryOf(row, schema->indexes[i].columns));
  }
  // Before `row` (in its node) changes or is erased.
  void RemoveEntries(const Row& row) {
    for (size_t i = 0; i < indexes.size(); ++i) {
      auto it = indexes[i].find(EntryOf(row, schema->indexes[i].columns));  // one walk
      if (it != indexes[i].end()) indexes[i].erase(it);
    }
  }
  // Switches to `s`: keeps the indexes whose name and columns are unchanged,
  // builds the new ones, drops the rest.
  ONESTORE_COLD void SetSchema(std::shared_ptr<const TableSchema> s) {
    std::vector<EntrySet> next;
    next.reserve(s->indexes.size());
    for (size_t i = 0; i < s->indexes.size(); ++i) {
      const Index& ix = s->indexes[i];
      bool kept = false;
      for (size_t j = 0; schema && j < schema->indexes.size() && !kept; ++j) {
        if (schema->indexes[j].name == ix.name && schema->indexes[j].columns == ix.columns) {
          next.push_back(std::move(indexes[j]));
          kept = true;
        }
      }
      if (!kept) {
        next.push_back(NewIndexSet(ix.columns));
        EntrySet& set = next.back();
        for (const auto& [key, row] : rows) set.insert(set.end(), EntryOf(row, ix.columns));
      }
    }
    indexes = std::move(next);
    schema = std::move(s);
  }
};

// The changes of the open transaction to one table, by key (nullopt:
// deleted): a sorted vector while keys come in ascending order (a bulk load's
// usual case: an append, no tree node per row), a map once one does not.
class Changes {
 public:
  using Change = std::pair<Key, std::optional<Row>>;

  bool empty() const { return sorted_.empty() && map_.empty(); }

  // The change of `key`, or null.
  const std::optional<Row>* Find(const Key& key) const {
    if (!map_.empty()) {
      auto it = map_.find(key);
      return it == map_.end() ? nullptr : &it->second;
    }
    auto it = LowerBound(key);
    return it != sorted_.end() && CompareValueLists(it->first, key) == 0 ? &it->second : nullptr;
  }

  // Sets the change of `key` (replacing an earlier one).
  void Set(Key key, std::optional<Row> row) {
    if (map_.empty()) {
      if (sorted_.empty() || CompareValueLists(sorted_.back().first, key) < 0) {
        sorted_.emplace_back(std::move(key), std::move(row));
        return;
      }
      auto it = LowerBound(key);
      if (CompareValueLists(it->first, key) == 0) {
        it->second = std::move(row);
        return;
      }
      ToMap();
    }
    map_.insert_or_assign(std::move(key), std::move(row));
  }

  // Calls f(key, row) for each change, in key order.
  template <typename F>
  void ForEach(F f) const {
    for (const Change& c : sorted_) f(c.first, c.second);
    for (const auto& [key, row] : map_) f(key, row);
  }

  // Rewrites each staged row (not its key) with f: an alter's new columns.
  ONESTORE_COLD void RemapRows(const std::function<Row(const Row&)>& f) {
    for (Change& c : sorted_) {
      if (c.second) c.second = f(*c.second);
    }
    for (auto& [key, row] : map_) {
      if (row) row = f(*row);
    }
  }

  // Calls f(key, row) for each change, in key order, with both free to be
  // moved from; then holds none.
  template <typename F>
  void Drain(F f) {
    for (Change& c : sorted_) f(c.first, c.second);
    ClearKeepingRoom(&sorted_, 64);  // its room stays for the next transaction
    // Each change is taken out of the map, so that its key can move.
    while (!map_.empty()) {
      auto node = map_.extract(map_.begin());
      f(node.key(), node.mapped());
    }
  }

 private:
  ONESTORE_COLD void ToMap() {
    for (Change& c : sorted_) map_.emplace_hint(map_.end(), std::move(c.first), std::move(c.second));
    sorted_.clear();
  }
  std::vector<Change>::const_iterator LowerBound(const Key& key) const {
    return std::lower_bound(sorted_.begin(), sorted_.end(), key, [](const Change& c, const Key& k) {
      return CompareValueLists(c.first, k) < 0;
    });
  }
  std::vector<Change>::iterator LowerBound(const Key& key) {
    return std::lower_bound(sorted_.begin(), sorted_.end(), key, [](const Change& c, const Key& k) {
      return CompareValueLists(c.first, k) < 0;
    });
  }

  std::vector<Change> sorted_;                           // ascending keys; empty once map_ is used
  std::map<Key, std::optional<Row>, EntryLess> map_;
};

// The changes of the open transaction to one table.
struct StagedTable {
  std::shared_ptr<const TableSchema> schema;  // a table record's schema, or null
  Changes changes;
  // After an alter: the committed table with its rows rewritten to the new
  // columns, which replaces the committed one at Commit (the changes above
  // are in the new columns too).
  std::unique_ptr<TableData> base;
};

bool PastUpper(const Value& v, const ScanBound& b) {
  if (v.is_null()) return false;
  int c = CompareValues(v, b.value);
  return c > 0 || (c == 0 && !b.inclusive);
}

bool BelowLower(const Value& v, const ScanBound& b) {
  if (v.is_null()) return true;
  int c = CompareValues(v, b.value);
  return c < 0 || (c == 0 && !b.inclusive);
}

// Walks `c` (the rows map or one index set) as `plan` says, starting strictly
// after `seek` (a whole entry, in walk direction) when given. entry_of(it)
// gives an element's entry (an Entry or an IndexView), row_of(it) its row.
// Calls visit(row) for each row in range until it returns false. Counts
// visits.
template <typename Container, typename EntryOf, typename RowOf, typename Visit>
void WalkRange(const Container& c, const ScanPlan& plan, const Entry* seek, EntryOf entry_of,
               RowOf row_of, Visit visit, int64_t* visited) {
  const size_t k = plan.eq_prefix.size();
  const bool bounded = plan.lower.has_value() || plan.upper.has_value();
  auto less = [&](auto a, auto b) { return CompareEntries(entry_of(a), entry_of(b)) < 0; };
  auto in_prefix = [&](const auto& e) { return ComparePrefix(e, plan.eq_prefix) == 0; };
  if (!plan.reverse) {
    Entry start = plan.eq_prefix;
    bool after = false;
    if (plan.lower) {
      start.push_back(plan.lower->value);
      after = !plan.lower->inclusive;
    } else if (bounded) {
      start.push_back(Value());  // a bound excludes nulls, which sort first
      after = true;
    }
    auto it = c.lower_bound(Probe{&start, after});
    if (seek != nullptr) {
      auto s = c.lower_bound(Probe{seek, true});
      if (s == c.end() || (it != c.end() && less(it, s))) it = s;
    }
    for (; it != c.end(); ++it) {
      const auto& e = entry_of(it);
      if (!in_prefix(e)) break;
      if (plan.upper && PastUpper(e[k], *plan.upper)) break;
      ++*visited;
      if (!visit(row_of(it))) return;
    }
  } else {
    Entry end = plan.eq_prefix;
    bool after = true;
    if (plan.upper) {
      end.push_back(plan.upper->value);
      after = plan.upper->inclusive;
    }
    auto it = c.lower_bound(Probe{&end, after});  // the first entry past the range
    if (seek != nullptr) {
      auto s = c.lower_bound(Probe{seek, false});
      if (s != c.end() && (it == c.end() || less(s, it))) it = s;
    }
    while (it != c.begin()) {
      --it;
      const auto& e = entry_of(it);
      if (!in_prefix(e)) break;
      if (plan.lower && BelowLower(e[k], *plan.lower)) break;
      if (bounded && e[k].is_null()) break;
      ++*visited;
      if (!visit(row_of(it))) return;
    }
  }
}

class MemoryBackend : public Backend {
 public:
  Status Open(const std::string& new_id, BackendState* state) override;
  Status Begin() override;
  Status Apply(Op* op, const TableSchema* previous) override;
  Status AppendOutbox(int64_t seq, const std::string& record) override;
  Status AppendOutboxShared(int64_t seq, const std::shared_ptr<const std::string>& record) override;
  Status Commit() override;
  void Rollback() override;
  Status Get(const TableSchema& t, const Key& key, std::optional<Row>* row) override;
  Status Page(const Query& q, const std::vector<Value>* after, int64_t limit,
              std::vector<Row>* rows, PageBytes* bytes = nullptr) override;
  Status Count(const TableSchema& t, const Predicate* where, int64_t* count) override;
  Status Scan(const Query& q, const std::function<bool(const Row&)>& visit) override;
  Status MaxIntKey(const TableSchema& t, int64_t* max) override;
  Status ReadOutbox(int64_t after, int64_t limit, std::vector<OutboxEntry>* out) override;
  Status TrimOutbox(int64_t up_to, int64_t* removed) override;
  Status ReadNote(const std::string& key, std::string* value) override;
  Status WriteNote(const std::string& key, const std::string& value) override;
  Status Close() override;

  MemoryScanStats* stats() { return &stats_; }

 private:
  Status CheckOpen() const {
    return closed_ ? Status::Closed("the memory store is closed") : Status::OK();
  }
  Status CheckTx(const char* call) const {
    return !closed_ && in_tx_ ? Status::OK() : NotInTx(call);
  }
  // CheckTx's refusal, out of the write path.
  ONESTORE_COLD Status NotInTx(const char* call) const {
    ONESTORE_RETURN_IF_ERROR(CheckOpen());
    return Status::InvalidArgs(std::string(call) + " outside a write transaction");
  }
  Status Committed(const std::string& name, const TableData** out) const {
    auto it = tables_.find(name);
    if (it == tables_.end()) return UnknownTable(name);
    *out = &it->second;
    return Status::OK();
  }
  // Walks committed table `d` with `plan`; see WalkRange.
  void Walk(const TableData& d, const ScanPlan& plan, const Entry* seek,
            const std::function<bool(const Row&)>& visit);

  // The schema a write in the open transaction sees (staged, else committed),
  // or null when the table does not exist.
  const TableSchema* CurrentSchema(const std::string& name) const;
  // The row a write in the open transaction sees, or null.
  const Row* MergedRow(const std::string& name, const Key& key) const;
  // Every row the open transaction sees that matches `where`, with its key.
  // The rows of `name` that `where` takes, staged changes included, copied
  // into *out; `limit` when the copies would not fit in the heap (`room`
  // counts them, for the caller to count what it makes of them too).
  Status MergedMatches(const std::string& name, const TableSchema& t, const Predicate* where,
                       HeapSteps* room, std::vector<std::pair<Key, Row>>* out);

  Status ApplyTable(const Op& op);
  Status ApplyAlter(const Op& op);
  // The committed table a write in the open transaction sees (an altered
  // copy, else the committed one), or null.
  const TableData* BaseOf(const std::string& name) const;
  Status CheckRow(const TableSchema& t, const Row& row, const char* what) const;
  // Stages put `op` of table `t` into `changes` (its table's).
  Status StagePut(Op* op, const TableSchema& t, Changes* changes);

  bool closed_ = false;
  bool in_tx_ = false;
  std::string id_;
  int64_t head_ = 0;
  std::map<std::string, TableData, std::less<>> tables_;
  // Records are shared with the store that wrote them (its LastOps reads the
  // last one): held, not copied.
  std::map<int64_t, std::shared_ptr<const std::string>> outbox_;

  // Kept, drained, after a commit of writes to one table (Commit).
  std::map<std::string, StagedTable, std::less<>> staged_;
  // Each record's node moves into outbox_ at Commit.
  std::map<int64_t, std::shared_ptr<const std::string>> staged_outbox_;
  // The staged table of the last put's table, while the transaction is open:
  // a run of puts to one table looks it up by name once. The schema is held
  // (not only its address), so no other schema can come to have its address.
  std::shared_ptr<const TableSchema> run_table_;
  StagedTable* run_staged_ = nullptr;
  std::map<std::string, std::string, std::less<>> notes_;
  std::map<std::string, std::string, std::less<>> staged_notes_;

  MemoryScanStats stats_;
};

void MemoryBackend::Walk(const TableData& d, const ScanPlan& plan, const Entry* seek,
                         const std::function<bool(const Row&)>& visit) {
  stats_.last_plan = plan.Describe(*d.schema);
  if (plan.index < 0) {
    WalkRange(
        d.rows, plan, seek, [](RowMap::const_iterator it) -> const Entry& { return it->first.key; },
        [](RowMap::const_iterator it) -> const Row& { return it->second; }, visit,
        &stats_.rows_visited);
  } else {
    const EntrySet& set = d.indexes[plan.index];
    const IndexLess less = set.key_comp();  // holds the columns for the walk
    WalkRange(
        set, plan, seek, [&](EntrySet::const_iterator it) { return less.View(it->row); },
        [](EntrySet::const_iterator it) -> const Row& { return *it->row; }, visit,
        &stats_.rows_visited);
  }
}

ONESTORE_COLD Status MemoryBackend::Open(const std::string& new_id, BackendState* state) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (id_.empty()) id_ = new_id;
  state->id = id_;
  state->head = head_;
  state->tables.clear();
  for (const auto& [name, d] : tables_) state->tables.push_back(d.schema->ToJson());
  return Status::OK();
}

Status MemoryBackend::Begin() {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (in_tx_) return Status::InvalidArgs("Begin: a write transaction is already open");
  in_tx_ = true;
  return Status::OK();
}

const TableData* MemoryBackend::BaseOf(const std::string& name) const {
  auto st = staged_.find(name);
  if (st != staged_.end() && st->second.base) return st->second.base.get();
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : &it->second;
}

const TableSchema* MemoryBackend::CurrentSchema(const std::string& name) const {
  auto st = staged_.find(name);
  if (st != staged_.end() && st->second.schema) return st->second.schema.get();
  const TableData* d = BaseOf(name);
  return d == nullptr ? nullptr : d->schema.get();
}

const Row* MemoryBackend::MergedRow(const std::string& name, const Key& key) const {
  auto st = staged_.find(name);
  if (st != staged_.end()) {
    if (const std::optional<Row>* c = st->second.changes.Find(key)) return *c ? &**c : nullptr;
  }
  const TableData* d = BaseOf(name);
  if (d == nullptr) return nullptr;
  auto r = d->rows.find(KeyProbe(key));
  return r == d->rows.end() ? nullptr : &r->second;
}

ONESTORE_COLD Status BulkNoRoom(const std::string& table, const HeapSteps& room) {
  return Status::Limit("a bulk write to table \"" + table +
                       "\": the rows it changes need more of the wasm heap than is left (at " +
                       std::to_string(static_cast<int64_t>(room.taken()) >> 20) +
                       " MiB); nothing was changed: change fewer rows a transaction");
}

Status MemoryBackend::MergedMatches(const std::string& name, const TableSchema& t,
                                    const Predicate* where, HeapSteps* room,
                                    std::vector<std::pair<Key, Row>>* out) {
  auto st_it = staged_.find(name);
  const StagedTable* st = st_it == staged_.end() ? nullptr : &st_it->second;
  bool full = false;
  if (const TableData* base = BaseOf(name)) {
    const TableData& d = *base;
    ScanPlan plan = PlanScan(*d.schema, where, nullptr);
    Walk(d, plan, nullptr, [&](const Row& row) {
      if (!Matches(where, row)) return true;
      Key key = Project(t.key, row);
      if (st == nullptr || st->changes.Find(key) == nullptr) {
        if (!room->Take(RowHeapBytes(row))) {
          full = true;
          return false;
        }
        out->emplace_back(std::move(key), row);
      }
      return true;
    });
  }
  if (st != nullptr && !full) {
    st->changes.ForEach([&](const Key& key, const std::optional<Row>& row) {
      if (full || !row || !Matches(where, *row)) return;
      if (!room->Take(RowHeapBytes(*row))) {
        full = true;
        return;
      }
      out->emplace_back(key, *row);
    });
  }
  return full ? BulkNoRoom(name, *room) : Status::OK();
}

Status MemoryBackend::CheckRow(const TableSchema& t, const Row& row, const char* what) const {
  if (row.size() != t.columns.size()) {
    return Status::InvalidArgs(std::string(what) + ": a row of table \"" + t.name + "\" needs " +
                               std::to_string(t.columns.size()) + " values, got " +
                               std::to_string(row.size()));
  }
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i].is_null() && !t.columns[i].optional) {
      return Status::InvalidArgs(std::string(what) + ": column \"" + t.columns[i].name +
                                 "\" of table \"" + t.name + "\" is not optional, got null");
    }
  }
  return Status::OK();
}

ONESTORE_COLD Status MemoryBackend::ApplyTable(const Op& op) {
  const TableSchema& decl = *op.table;
  const TableSchema* current = CurrentSchema(decl.name);
  if (current != nullptr) {
    bool same = current->key == decl.key && current->columns.size() == decl.columns.size();
    for (size_t i = 0; same && i < decl.columns.size(); ++i) {
      const Column& a = current->columns[i];
      const Column& b = decl.columns[i];
      same = a.name == b.name && a.type == b.type && a.optional == b.optional;
    }
    if (!same) {
      return Status::InvalidArgs("table \"" + decl.name +
                                 "\": the declared columns or key differ from the stored ones; "
                                 "a column change needs a migration");
    }
  }
  staged_[decl.name].schema = op.table;
  return Status::OK();
}

// Rewrites the rows the transaction sees into the new columns: memory rows
// are arrays, so an alter copies them (a sqlite table is altered in place).
ONESTORE_COLD Status MemoryBackend::ApplyAlter(const Op& op) {
  const TableSchema& after = *op.table;
  const SchemaChange& ch = *op.change;
  const TableSchema* current = CurrentSchema(after.name);
  if (current == nullptr) return UnknownTable(after.name);
  if (current->columns.size() != ch.before->columns.size()) {
    return Status::InvalidArgs("alter of table \"" + after.name +
                               "\": the stored columns are not the ones the alter was made for");
  }
  auto remap = [&](const Row& row) {
    Row next;
    next.reserve(after.columns.size());
    for (size_t i = 0; i < after.columns.size(); ++i) {
      if (ch.source[i] >= 0) {
        next.push_back(row[ch.source[i]]);
      } else {
        const Column& c = after.columns[i];
        Value v = c.has_default ? c.def : Value();
        if (c.type == Type::kNum && v.type() == Type::kInt) {
          v = Value::Num(static_cast<double>(v.int_value()));
        }
        next.push_back(std::move(v));
      }
    }
    return next;
  };
  auto shared = std::make_shared<const TableSchema>(after);
  auto base = std::make_unique<TableData>();
  if (const TableData* old = BaseOf(after.name)) {
    for (const auto& [key, row] : old->rows) {
      Row next = remap(row);
      Key k = Project(after.key, next);
      base->rows.emplace(RowKey(std::move(k)), std::move(next));
    }
  }
  base->SetSchema(shared);
  StagedTable& st = staged_[after.name];
  st.changes.RemapRows(remap);
  st.base = std::move(base);
  st.schema = shared;
  return Status::OK();
}

Status MemoryBackend::Apply(Op* op, const TableSchema* /*previous*/) {
  ONESTORE_RETURN_IF_ERROR(CheckTx("Apply"));
  if (op == nullptr || op->table == nullptr)
    return Status::InvalidArgs("Apply: an op without a table");
  if (op->kind == OpKind::kTable || op->kind == OpKind::kIndex) return ApplyTable(*op);
  if (op->kind == OpKind::kAlter) return ApplyAlter(*op);

  const TableSchema& t = *op->table;
  const std::string& name = t.name;
  if (op->kind == OpKind::kPut && op->table == run_table_) {  // the run's next put
    ONESTORE_RETURN_IF_ERROR(CheckRow(t, op->row, "put"));
    return StagePut(op, t, &run_staged_->changes);
  }
  // A table with staged changes exists (an entry is made only by a declare
  // or by a write to an existing table): no second look for a bulk's puts.
  auto staged = staged_.find(name);
  if (staged == staged_.end() && CurrentSchema(name) == nullptr) return UnknownTable(name);
  const Predicate* where = op->where ? &*op->where : nullptr;

  if ((op->kind == OpKind::kUpdate || op->kind == OpKind::kDelete) &&
      op->key.size() != t.key.size()) {
    return Status::InvalidArgs("table \"" + name + "\": the key " + DescribeKey(op->key) + " has " +
                               std::to_string(op->key.size()) + " values for " +
                               std::to_string(t.key.size()) + " key columns");
  }

  switch (op->kind) {
    case OpKind::kPut: {
      ONESTORE_RETURN_IF_ERROR(CheckRow(t, op->row, "put"));
      StagedTable& st = staged != staged_.end() ? staged->second : staged_[name];
      run_table_ = op->table;
      run_staged_ = &st;
      return StagePut(op, t, &st.changes);
    }
    case OpKind::kUpdate: {
      const Row* row = MergedRow(name, op->key);
      if (row == nullptr) {
        return Status::NotFound("update: table \"" + name + "\" has no row with key " +
                                DescribeKey(op->key));
      }
      Row next = *row;
      ONESTORE_RETURN_IF_ERROR(ApplySet(op->set, t, &next));
      ONESTORE_RETURN_IF_ERROR(CheckRow(t, next, "update"));
      if (CompareValueLists(Project(t.key, next), op->key) != 0) {
        return Status::InvalidArgs("update: a set cannot change the key of table \"" + name + "\"");
      }
      staged_[name].changes.Set(op->key, std::move(next));
      op->count = 1;  // the commit's answer: rows affected by a key op
      return Status::OK();
    }
    case OpKind::kDelete: {
      const bool found = MergedRow(name, op->key) != nullptr;
      if (found) staged_[name].changes.Set(op->key, std::nullopt);
      op->count = found ? 1 : 0;
      return Status::OK();
    }
    case OpKind::kUpdateWhere: {
      std::vector<std::pair<Key, Row>> hits;
      HeapSteps room(2);
      ONESTORE_RETURN_IF_ERROR(MergedMatches(name, t, where, &room, &hits));
      for (auto& [key, row] : hits) {  // every row first: a failure stages nothing
        const double before = RowHeapBytes(row);
        ONESTORE_RETURN_IF_ERROR(ApplySet(op->set, t, &row));
        const double after = RowHeapBytes(row);
        if (after > before && !room.Take(after - before)) return BulkNoRoom(name, room);
        ONESTORE_RETURN_IF_ERROR(CheckRow(t, row, "updateWhere"));
        if (CompareValueLists(Project(t.key, row), key) != 0) {
          return Status::InvalidArgs("updateWhere: a set cannot change the key of table \"" + name +
                                     "\"");
        }
      }
      StagedTable& st = staged_[name];
      for (auto& [key, row] : hits) st.changes.Set(std::move(key), std::move(row));
      op->count = static_cast<int64_t>(hits.size());
      return Status::OK();
    }
    case OpKind::kDeleteWhere: {
      std::vector<std::pair<Key, Row>> hits;
      HeapSteps room(2);
      ONESTORE_RETURN_IF_ERROR(MergedMatches(name, t, where, &room, &hits));
      StagedTable& st = staged_[name];
      for (auto& [key, row] : hits) st.changes.Set(std::move(key), std::nullopt);
      op->count = static_cast<int64_t>(hits.size());
      return Status::OK();
    }
    case OpKind::kDocument:  // expanded into puts by the commit step
    case OpKind::kRestore:   // a marker: the commit step skips it
    case OpKind::kTable:
    case OpKind::kAlter:
    case OpKind::kIndex:
      break;
  }
  return Status::InvalidArgs("Apply: unknown op kind");
}

Status MemoryBackend::StagePut(Op* op, const TableSchema& t, Changes* changes) {
  Row row = op->row_spent ? std::move(op->row) : op->row;
  for (size_t i = 0; i < row.size(); ++i) {  // a REAL column stores an int as a double
    if (t.columns[i].type == Type::kNum && row[i].type() == Type::kInt) {
      row[i] = Value::Num(static_cast<double>(row[i].int_value()));
    }
  }
  Key key = Project(t.key, row);
  changes->Set(std::move(key), std::move(row));
  return Status::OK();
}

Status MemoryBackend::AppendOutbox(int64_t seq, const std::string& record) {
  return AppendOutboxShared(seq, std::make_shared<const std::string>(record));
}

Status MemoryBackend::AppendOutboxShared(int64_t seq,
                                         const std::shared_ptr<const std::string>& record) {
  ONESTORE_RETURN_IF_ERROR(CheckTx("AppendOutbox"));
  staged_outbox_[seq] = record;
  return Status::OK();
}

Status MemoryBackend::Commit() {
  ONESTORE_RETURN_IF_ERROR(CheckTx("Commit"));
  // Every check happened in Apply: from here on nothing can fail.
  for (auto& [name, st] : staged_) {
    if (st.base) tables_[name] = std::move(*st.base);
    TableData& d = tables_[name];
    if (st.schema) d.SetSchema(st.schema);
    // Each change's key moves into the committed row's node.
    st.changes.Drain([&](Key& key, std::optional<Row>& row) {
      // Keys past the last row (a bulk load of ascending keys) need no walk
      // down the tree; others one walk, for the lookup and the insert alike.
      auto it = d.rows.end();
      bool found = false;
      RowKey k(std::move(key));  // its head made once, for the walk and the node
      if (!d.rows.empty() && !d.rows.key_comp()(d.rows.rbegin()->first, k)) {
        it = d.rows.lower_bound(k);
        found = it != d.rows.end() && !d.rows.key_comp()(k, it->first);
      }
      if (found) d.RemoveEntries(it->second);
      if (row) {
        if (found) {
          it->second = std::move(*row);
        } else {
          it = d.rows.emplace_hint(it, std::move(k), std::move(*row));
        }
        d.AddEntries(it->second);
      } else if (found) {
        d.rows.erase(it);
      }
    });
  }
  while (!staged_outbox_.empty()) {  // each node moves: no new one
    auto node = staged_outbox_.extract(staged_outbox_.begin());
    head_ = node.key();
    auto put = outbox_.insert(std::move(node));
    if (!put.inserted) put.position->second = std::move(put.node.mapped());
  }
  for (auto& [key, value] : staged_notes_) notes_[key] = std::move(value);
  // The entry of a commit's one table of writes (no declare, no alter)
  // stays, drained: the next transaction's writes to it allocate neither
  // its node nor its name (issue 13, the fifteenth step). Such an entry
  // reads as the committed table everywhere.
  const bool keep = staged_.size() == 1 && !staged_.begin()->second.schema &&
                    !staged_.begin()->second.base;
  if (!keep) staged_.clear();
  staged_notes_.clear();
  run_table_.reset();
  run_staged_ = nullptr;
  in_tx_ = false;
  return Status::OK();
}

void MemoryBackend::Rollback() {
  staged_.clear();
  staged_outbox_.clear();
  staged_notes_.clear();
  run_table_.reset();
  run_staged_ = nullptr;
  in_tx_ = false;
}

Status MemoryBackend::Get(const TableSchema& t, const Key& key, std::optional<Row>* row) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  const TableData* d = nullptr;
  ONESTORE_RETURN_IF_ERROR(Committed(t.name, &d));
  auto it = d->rows.find(KeyProbe(key));
  if (it == d->rows.end()) {
    row->reset();
    return Status::OK();
  }
  Status why;
  if (RoomToRead(it->second, &why)) *row = it->second;
  return why;
}

Status MemoryBackend::Page(const Query& q, const std::vector<Value>* after, int64_t limit,
                           std::vector<Row>* rows, PageBytes* bytes) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  rows->clear();
  if (q.table == nullptr) return Status::InvalidArgs("page: a query without a table");
  const TableData* d = nullptr;
  ONESTORE_RETURN_IF_ERROR(Committed(q.table->name, &d));
  if (after != nullptr && after->size() != q.order.size()) {
    return Status::InvalidCursor("page: the cursor holds " + std::to_string(after->size()) +
                                 " values, the query orders by " + std::to_string(q.order.size()));
  }
  if (limit == 0) return Status::OK();
  const size_t max_rows = limit < 0 ? SIZE_MAX : static_cast<size_t>(limit);
  const Predicate* where = q.where ? &*q.where : nullptr;
  ScanPlan plan = PlanScan(*d->schema, where, &q.order);
  auto wanted = [&](const Row& row) {
    return Matches(where, row) && (after == nullptr || q.CompareToPosition(row, *after) > 0);
  };
  // Adds a wanted row to the page; false, with the page cut, once the rows
  // already hold kReadBytes, or with `room` set when a row above
  // kReadBytes does not fit in the heap.
  size_t used = 0;
  Status room;  // a row too large for the heap's room: the page fails
  auto take = [&](const Row& row) {
    const size_t text = RowTextBytes(row);
    if (bytes != nullptr) {
      if (used >= kReadBytes) {
        bytes->cut = true;
        return false;
      }
      used += text;
    }
    if (text > kReadBytes && !RoomToRead(row, &room)) return false;
    rows->push_back(row);
    return true;
  };

  if (!plan.sort) {
    // Seek straight to the cursor: the walk is in q's order, so the rows
    // after it are the entries after the cursor's entry. Only when the
    // cursor agrees with the eq-fixed columns (a cursor of this query does).
    Entry seek;
    bool use_seek = after != nullptr;
    for (size_t i = 0; use_seek && i < plan.columns.size(); ++i) {
      int c = plan.columns[i];
      const Value* fixed = nullptr;
      for (const auto& [fc, fv] : plan.fixed) {
        if (fc == c) fixed = &fv;
      }
      const Value* pos = nullptr;
      for (size_t j = 0; j < q.order.size(); ++j) {
        if (q.order[j].column == c) pos = &(*after)[j];
      }
      if (fixed != nullptr && pos != nullptr && CompareValues(*fixed, *pos) != 0) use_seek = false;
      if (pos == nullptr && fixed == nullptr) use_seek = false;
      if (use_seek) seek.push_back(pos != nullptr ? *pos : *fixed);
    }
    Walk(*d, plan, use_seek ? &seek : nullptr, [&](const Row& row) {
      return (!wanted(row) || take(row)) && rows->size() < max_rows;
    });
    return room;
  }

  auto by_order = [&](const Row* a, const Row* b) { return q.CompareRows(*a, *b) < 0; };
  if (plan.ordered_terms > 0) {
    // The walk gives the first ordered_terms terms: sort each group of rows
    // that agree on them, and stop after the group that fills the page.
    std::vector<int> group_columns;
    for (const OrderTerm& term : q.order) {
      bool fixed = false;
      for (const auto& [fc, fv] : plan.fixed) fixed |= fc == term.column;
      if (fixed) continue;
      if (static_cast<int>(group_columns.size()) == plan.ordered_terms) break;
      group_columns.push_back(term.column);
    }
    auto same_group = [&](const Row& a, const Row& b) {
      for (int c : group_columns) {
        if (CompareValues(a[c], b[c]) != 0) return false;
      }
      return true;
    };
    std::vector<const Row*> group;
    auto flush = [&]() {
      std::sort(group.begin(), group.end(), by_order);
      for (const Row* r : group) {
        if (rows->size() >= max_rows || !take(*r)) break;
      }
      group.clear();
    };
    Walk(*d, plan, nullptr, [&](const Row& row) {
      if (!group.empty() && !same_group(*group.front(), row)) {
        flush();
        if (rows->size() >= max_rows || (bytes != nullptr && bytes->cut) || !room.ok()) return false;
      }
      if (wanted(row)) group.push_back(&row);
      return true;
    });
    if (rows->size() < max_rows && (bytes == nullptr || !bytes->cut) && room.ok()) flush();
    return room;
  }

  std::vector<const Row*> hits;
  Walk(*d, plan, nullptr, [&](const Row& row) {
    if (wanted(row)) hits.push_back(&row);
    return true;
  });
  size_t n = std::min(max_rows, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + n, hits.end(), by_order);
  rows->reserve(n);
  for (size_t i = 0; i < n && take(*hits[i]); ++i) {
  }
  return room;
}

Status MemoryBackend::Count(const TableSchema& t, const Predicate* where, int64_t* count) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  const TableData* d = nullptr;
  ONESTORE_RETURN_IF_ERROR(Committed(t.name, &d));
  if (where == nullptr) {
    *count = static_cast<int64_t>(d->rows.size());
    return Status::OK();
  }
  int64_t n = 0;
  Walk(*d, PlanScan(*d->schema, where, nullptr), nullptr, [&](const Row& row) {
    n += Matches(where, row);
    return true;
  });
  *count = n;
  return Status::OK();
}

Status MemoryBackend::Scan(const Query& q, const std::function<bool(const Row&)>& visit) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (q.table == nullptr) return Status::InvalidArgs("scan: a query without a table");
  const TableData* d = nullptr;
  ONESTORE_RETURN_IF_ERROR(Committed(q.table->name, &d));
  const Predicate* where = q.where ? &*q.where : nullptr;
  Walk(*d, PlanScan(*d->schema, where, nullptr), nullptr,
       [&](const Row& row) { return !Matches(where, row) || visit(row); });
  return Status::OK();
}

Status MemoryBackend::MaxIntKey(const TableSchema& t, int64_t* max) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  const TableData* d = nullptr;
  ONESTORE_RETURN_IF_ERROR(Committed(t.name, &d));
  if (!d->schema->HasIntKey()) {
    return Status::InvalidArgs("table \"" + t.name + "\" does not have a single int key column");
  }
  *max = d->rows.empty() ? 0 : d->rows.rbegin()->first.key[0].int_value();
  return Status::OK();
}

Status MemoryBackend::ReadOutbox(int64_t after, int64_t limit, std::vector<OutboxEntry>* out) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  out->clear();
  size_t used = 0;
  for (auto it = outbox_.upper_bound(after); it != outbox_.end() && used < kReadBytes &&
                                             (limit < 0 || static_cast<int64_t>(out->size()) < limit);
       ++it) {
    out->push_back(OutboxEntry{it->first, *it->second});
    used += it->second->size();
  }
  return Status::OK();
}

ONESTORE_COLD Status MemoryBackend::TrimOutbox(int64_t up_to, int64_t* removed) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  auto end = outbox_.upper_bound(up_to);
  *removed = static_cast<int64_t>(std::distance(outbox_.begin(), end));
  outbox_.erase(outbox_.begin(), end);
  return Status::OK();
}

Status MemoryBackend::ReadNote(const std::string& key, std::string* value) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  auto it = notes_.find(key);
  *value = it == notes_.end() ? std::string() : it->second;
  return Status::OK();
}

Status MemoryBackend::WriteNote(const std::string& key, const std::string& value) {
  ONESTORE_RETURN_IF_ERROR(CheckTx("WriteNote"));
  staged_notes_[key] = value;
  return Status::OK();
}

ONESTORE_COLD Status MemoryBackend::Close() {
  Rollback();
  tables_.clear();
  outbox_.clear();
  closed_ = true;
  return Status::OK();
}

}  // namespace

std::unique_ptr<Backend> NewMemoryBackend() { return std::make_unique<MemoryBackend>(); }

MemoryScanStats* MemoryStats(Backend* backend) {
  return static_cast<MemoryBackend*>(backend)->stats();
}

}  // namespace onestore
