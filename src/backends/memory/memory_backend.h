// The memory backend: rows in ordered maps, one ordered set per index, so a
// query walks an index and does not scan the table. A commit is staged (its
// changes collected apart from the committed rows) and swapped in at the
// end, so a failed op leaves nothing behind.
#ifndef ONESTORE_BACKENDS_MEMORY_MEMORY_BACKEND_H_
#define ONESTORE_BACKENDS_MEMORY_MEMORY_BACKEND_H_

#include <memory>

#include "backends/backend.h"

namespace onestore {

std::unique_ptr<Backend> NewMemoryBackend();

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_MEMORY_MEMORY_BACKEND_H_
