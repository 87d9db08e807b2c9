// ThreadPool: the host's Parallel, with std::thread workers created once per session.
// Dispatch allocates nothing: a job is published through atomics; workers spin briefly
// between jobs (a token's forward pass issues ~50 of them, too many for a sleep/wake each)
// and sleep on a condition variable when idle for longer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "pocketlm/base/parallel.h"

namespace pocketlm {

class ThreadPool final : public Parallel {
 public:
  // Starts `threads - 1` workers (the caller of run() is the last one). threads >= 1.
  explicit ThreadPool(int threads);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int workers() const override { return static_cast<int>(threads_.size()) + 1; }
  void run(int n, void (*fn)(void* ctx, int i), void* ctx) override;

 private:
  void worker_loop();
  // Takes and runs tasks of job `generation` until none is left.
  void work(std::uint32_t generation);

  std::vector<std::thread> threads_;
  // The current job, written by run() before the ticket announces it.
  void (*fn_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  // generation (24 bits) | task count (20) | next task index (20). A task is taken by a
  // compare-exchange of the whole word, so a worker that wakes late can never take a task
  // of another job: run() need not wait for idle workers to check in.
  std::atomic<std::uint64_t> ticket_{0};
  std::atomic<int> done_{0};  // tasks of the current job finished
  std::uint32_t generation_ = 0;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace pocketlm
