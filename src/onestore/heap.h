// The host's room for what the core allocates (docs/reliability.md, "A full
// wasm heap"). The wasm heap stops at 2 GB, and an allocation that fails
// there aborts the whole module (C++ without exceptions), a memory store's
// rows with it; the wasm bindings check a call's room before it starts
// (wasm/bindings.cc, RoomFor). Work whose size the call's arguments do not
// show (a document's new base, the whole value written again; a snapshot's
// copy; a restore's rows) asks here.
#ifndef ONESTORE_ONESTORE_HEAP_H_
#define ONESTORE_ONESTORE_HEAP_H_

#include <cstddef>
#include <string>

#include "onestore/status.h"

namespace onestore {

// The longest text a call can hand to JS as a string (V8: 2^29 - 24
// characters; a byte of UTF-8 is at most one character).
constexpr size_t kMaxJsStringBytes = (size_t{1} << 29) - 24;

// Whether the host can give `bytes` more with its reserve to spare, `piece`
// of them in one block (a large row's or a value's text is one piece; 0:
// no block asked): near the cap the free bytes may lie in holes smaller
// than a piece. Set by the wasm bindings; null natively, where there is no
// such cap.
extern bool (*heap_has_room)(double bytes, double piece);

inline bool HeapHasRoomFor(double bytes, double piece) {
  return heap_has_room == nullptr || heap_has_room(bytes, piece);
}

// Whether a JSON reader's token can grow one byte at a time to `bytes`:
// its blocks (the token's and its raw text's, twice the last each time)
// are asked for in the order the reader asks for them, each held while the
// next is had, and given back. Near the heap's cap the free room may lie in holes that a
// string growing by doubling splits until its last block finds none, where
// one check of the total said yes. Always true natively (no cap).
bool HeapCanGrowString(size_t bytes);

// The room of a read that copies a row of `bytes` of text (one above the
// 32 MiB kept for reads; callers ask above kReadBytes, 8 MiB): OK when the
// heap has `copies` times it, the first copy as one block; else `limit`,
// "a row of 90 MiB: the wasm heap has no room left to read it", after
// `what` when given. The memory backend's reads, a sqlite connection's
// cells and a Durable Object's answer ask it before they copy.
Status ReadRoom(size_t bytes, double copies, const std::string& what = std::string());

// The room of work that copies rows one at a time and keeps them (a
// snapshot's copy, a restore's rows): ahead of the rows it asks for room
// for `factor` times a step of 4 MiB of them (or of one larger row), as
// one block with the 32 MiB kept for reads beside it (a copy's next page
// is read before its rows ask), once a step, not once a row.
class HeapSteps {
 public:
  explicit HeapSteps(double factor) : factor_(factor) {}

  // Whether `bytes` more fit; false (nothing taken) when the heap has no
  // room for them.
  bool Take(double bytes);
  // The bytes taken so far.
  double taken() const { return taken_; }

 private:
  static constexpr double kStep = 4194304.0;  // 4 MiB
  const double factor_;
  double left_ = 0;
  double taken_ = 0;
};

}  // namespace onestore

#endif  // ONESTORE_ONESTORE_HEAP_H_
