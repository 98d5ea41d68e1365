// Test hooks of the memory backend: what its last reads did. Not part of the
// Backend interface; tests use it to show that a query walked an index.
#ifndef ONESTORE_BACKENDS_MEMORY_MEMORY_TESTING_H_
#define ONESTORE_BACKENDS_MEMORY_MEMORY_TESTING_H_

#include <cstdint>
#include <string>

#include "backends/backend.h"

namespace onestore {

struct MemoryScanStats {
  int64_t rows_visited = 0;  // rows walked (before filtering) since the last reset
  std::string last_plan;     // ScanPlan::Describe() of the last Page, Count or bulk write
};

// The stats of `backend`, which must come from NewMemoryBackend(). Reset by
// assigning MemoryScanStats{}.
MemoryScanStats* MemoryStats(Backend* backend);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_MEMORY_MEMORY_TESTING_H_
