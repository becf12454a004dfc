#include "base/heap_policy.hpp"

#include <malloc.h>

namespace al {

void keep_freed_memory_in_heap() {
  // Fixed values also switch off glibc's moving thresholds (mallopt(3)).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

}  // namespace al
