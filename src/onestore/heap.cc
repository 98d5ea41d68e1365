#include "onestore/heap.h"

#include "onestore/cold.h"

#include <cstdlib>

namespace onestore {

bool (*heap_has_room)(double bytes, double piece) = nullptr;

ONESTORE_COLD Status ReadRoom(size_t bytes, double copies, const std::string& what) {
  const double b = static_cast<double>(bytes);
  if (HeapHasRoomFor(copies * b, b)) return Status::OK();
  return Status::Limit((what.empty() ? std::string() : what + ": ") + "a row of " +
                       std::to_string(bytes >> 20) +
                       " MiB: the wasm heap has no room left to read it");
}

ONESTORE_COLD bool HeapCanGrowString(size_t bytes) {
  if (heap_has_room == nullptr) return true;
  // Two buffers grow side by side, as in nlohmann's reader: the token (a
  // string: a block of twice the last, from 32 bytes) and its raw text (a
  // vector of the same chars, each block taken just after the string's).
  void* token = nullptr;
  void* raw = nullptr;
  bool had = true;
  for (size_t block = 32; had; block *= 2) {
    for (void** held : {&token, &raw}) {
      void* next = std::malloc(block);
      if (next == nullptr) {
        had = false;
        break;
      }
      std::free(*held);
      *held = next;
    }
    if (block > bytes) break;
  }
  std::free(token);
  std::free(raw);
  return had;
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
