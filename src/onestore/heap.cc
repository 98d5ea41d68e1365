#include "onestore/heap.h"

namespace onestore {

bool (*heap_has_room)(double bytes) = nullptr;

}  // namespace onestore
