#include "onestore/heap.h"

#include "onestore/cold.h"

namespace onestore {

bool (*heap_has_room)(double bytes, double piece) = nullptr;

ONESTORE_COLD Status ReadRoom(size_t bytes, double copies, const std::string& what) {
  const double b = static_cast<double>(bytes);
  if (HeapHasRoomFor(copies * b, b)) return Status::OK();
  return Status::Limit((what.empty() ? std::string() : what + ": ") + "a row of " +
                       std::to_string(bytes >> 20) +
                       " MiB: the wasm heap has no room left to read it");
}

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
