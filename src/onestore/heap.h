// The host's room for what the core allocates (docs/reliability.md, "A full
// wasm heap"). The wasm heap stops at 2 GB, and an allocation that fails
// there aborts the whole module (C++ without exceptions), a memory store's
// rows with it; the wasm bindings check a call's room before it starts
// (wasm/bindings.cc, RoomFor). Work whose size the call's arguments do not
// show (a document's new base, the whole value written again) asks here.
#ifndef ONESTORE_ONESTORE_HEAP_H_
#define ONESTORE_ONESTORE_HEAP_H_

namespace onestore {

// Whether the host can give `bytes` more with its reserve to spare. Set by
// the wasm bindings; null natively, where there is no such cap.
extern bool (*heap_has_room)(double bytes);

inline bool HeapHasRoomFor(double bytes) {
  return heap_has_room == nullptr || heap_has_room(bytes);
}

}  // namespace onestore

#endif  // ONESTORE_ONESTORE_HEAP_H_
