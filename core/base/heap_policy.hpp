#pragma once
// How this process's heap treats the memory a computation frees (glibc malloc).

namespace al {

// Blocks up to 32 MiB come from the heap, not from fresh mmap pages each, and the heap keeps up
// to 64 MiB it no longer uses instead of handing it back to the kernel. A trace's scratch (packed
// panels, per-head blocks) and a backward pass's gradients are freed and allocated again at every
// edit; with glibc's own policy, whose thresholds move with what the process happened to free
// first, they came back as fresh pages in some processes and not in others: FullTrace at
// L = 512 faulted 0 or 143 times a trace (5.95 against 8.42 ms) depending on the lengths run
// before it (issue 16, forty-fifth pass). attention-lab's main() and attention_bench's set it
// first thing, so the window, the command line and the benchmarks all run with it. Idempotent.
void keep_freed_memory_in_heap();

}  // namespace al
