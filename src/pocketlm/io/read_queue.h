// ReadQueue: how streamed weights are read while the forward pass computes. A read request (up
// to two byte ranges: a block's values and its scales) is submitted and later waited for; at
// most one is in flight. The engine's InlineReadQueue reads at submit time (devices whose reads
// cannot overlap compute: the PSP's memory stick is CPU-driven); a port may read on another
// thread (src/ports/posix/thread_read_queue.h) so that the next block arrives while this one
// is computed. Every read goes through the given Storage, so a CountingStorage counts them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pocketlm/io/storage.h"

namespace pocketlm {

struct ReadRequest {
  Storage* storage = nullptr;
  int count = 0;  // ranges, at most 2
  std::uint64_t offset[2] = {};
  void* dst[2] = {};
  std::size_t bytes[2] = {};
  std::size_t chunk_bytes = 64 * 1024;  // largest single Storage::read
};

class ReadQueue {
 public:
  virtual ~ReadQueue() = default;
  // Starts `request` (the previous one must have been waited for).
  virtual void submit(const ReadRequest& request) = 0;
  // Waits for the request in flight and returns its status (ok when none is in flight).
  virtual Status wait() = 0;
};

// Reads each range of `r` with read_chunked.
inline Status perform_read(const ReadRequest& r) {
  for (int i = 0; i < r.count; ++i) POCKETLM_TRY(read_chunked(*r.storage, r.offset[i], r.dst[i], r.bytes[i], r.chunk_bytes));
  return Status();
}

class InlineReadQueue final : public ReadQueue {
 public:
  void submit(const ReadRequest& request) override { status_ = perform_read(request); }
  Status wait() override {
    const Status s = status_;
    status_ = Status();
    return s;
  }

 private:
  Status status_;
};

}  // namespace pocketlm
