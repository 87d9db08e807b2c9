// ThreadReadQueue: the host's ReadQueue, reading on a thread of its own so that the next block
// of streamed weights arrives while the kernels compute this one (the host profile's reads
// overlap compute; the PSP's do not and use the engine's InlineReadQueue). One request in
// flight at a time; nothing is allocated per request.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "pocketlm/io/read_queue.h"

namespace pocketlm {

class ThreadReadQueue final : public ReadQueue {
 public:
  ThreadReadQueue();
  ~ThreadReadQueue() override;
  ThreadReadQueue(const ThreadReadQueue&) = delete;
  ThreadReadQueue& operator=(const ThreadReadQueue&) = delete;

  void submit(const ReadRequest& request) override;
  Status wait() override;

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  ReadRequest request_;
  // The last read's result, as code and text: a Status made on the read thread names a message
  // slot of that thread (base/status.h), so wait() makes it again on the session's.
  StatusCode code_ = StatusCode::kOk;
  char message_[Status::kMaxMessage] = {};
  bool pending_ = false;  // submitted, not yet read
  bool busy_ = false;     // submitted, not yet waited for
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace pocketlm
