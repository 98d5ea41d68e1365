#include "onestore/heap.h"

#include <cstdlib>

#include "onestore/cold.h"

namespace onestore {

bool (*heap_has_room)(double bytes, double piece) = nullptr;

ONESTORE_COLD bool HeapHasBlock(double bytes) {
  // volatile: a compiler may take a malloc that is only freed for one that
  // succeeds, and drop it.
  void* volatile p = std::malloc(static_cast<size_t>(bytes));
  const bool had = p != nullptr;
  std::free(p);
  return had;
}

ONESTORE_COLD bool HeapSteps::Take(double bytes) {
  if (bytes > left_) {
    const double step = bytes > kStep ? bytes : kStep;
    if (!HeapHasRoomFor(factor_ * step, 0) || !HeapHasBlock(factor_ * step + 33554432.0)) return false;
    left_ = step;
  }
  left_ -= bytes;
  taken_ += bytes;
  return true;
}

}  // namespace onestore
