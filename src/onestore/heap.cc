#include "onestore/heap.h"

#include "onestore/cold.h"

namespace onestore {

bool (*heap_has_room)(double bytes, double piece) = nullptr;

ONESTORE_COLD bool HeapSteps::Take(double bytes) {
  if (bytes > left_) {
    const double step = bytes > kStep ? bytes : kStep;
    if (!HeapHasRoomFor(factor_ * step, factor_ * step + 33554432.0)) return false;
    left_ = step;
  }
  left_ -= bytes;
  taken_ += bytes;
  return true;
}

}  // namespace onestore
