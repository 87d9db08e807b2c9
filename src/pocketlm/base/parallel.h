// Parallel: how the engine runs independent tasks at once (matmul row blocks, attention
// heads). The host build supplies a thread pool (ports/posix/thread_pool.h); a port supplies its
// own (PSP threads, FreeRTOS tasks on the ESP32-S3's second core). Tasks never allocate, and
// every task computes whole rows or heads, so results are identical for any worker count.
#pragma once

namespace pocketlm {

class Parallel {
 public:
  virtual ~Parallel() = default;
  // Workers that run tasks, the calling thread included (>= 1).
  virtual int workers() const = 0;
  // Runs fn(ctx, i) for every i in [0, n) and returns when all have finished.
  virtual void run(int n, void (*fn)(void* ctx, int i), void* ctx) = 0;
};

}  // namespace pocketlm
