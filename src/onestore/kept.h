// Buffers kept from one commit to the next with their room, so that a
// commit of one put allocates only what the store keeps (issue 13, the
// fifteenth step; tests/cpp/allocs counts it).
#ifndef ONESTORE_ONESTORE_KEPT_H_
#define ONESTORE_ONESTORE_KEPT_H_

#include <cstddef>

// ONESTORE_KEPT: the storage of a buffer a function keeps from one call to
// the next, one per thread natively. The wasm core runs on one thread,
// where a thread_local would only cost the registration of its destructor.
#if defined(__wasm__)
#define ONESTORE_KEPT static
#else
#define ONESTORE_KEPT static thread_local
#endif

namespace onestore {

// Empties a kept container: its room stays for the next commit, unless it
// grew past `max_capacity` elements (a bulk's), which is let go.
template <typename C>
void ClearKeepingRoom(C* c, size_t max_capacity) {
  c->clear();
  if (c->capacity() > max_capacity) C().swap(*c);
}

}  // namespace onestore

#endif  // ONESTORE_ONESTORE_KEPT_H_
