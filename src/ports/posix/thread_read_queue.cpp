#include "ports/posix/thread_read_queue.h"

#include "pocketlm/base/format.h"

namespace pocketlm {

ThreadReadQueue::ThreadReadQueue() : thread_([this] { loop(); }) {}

ThreadReadQueue::~ThreadReadQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ThreadReadQueue::submit(const ReadRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    request_ = request;
    pending_ = true;
    busy_ = true;
  }
  changed_.notify_all();
}

Status ThreadReadQueue::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !pending_; });
  if (!busy_) return Status();
  busy_ = false;
  if (code_ == StatusCode::kOk) return Status();
  // Made again on this thread: the read thread's message slots are its own (base/status.h).
  return Status::error(code_, "%s", message_);
}

void ThreadReadQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return pending_ || stop_; });
    if (stop_) return;
    const ReadRequest request = request_;
    lock.unlock();
    // The storage is used by this thread alone while the request is in flight: the session
    // waits for it before any read of its own.
    const Status st = perform_read(request);
    lock.lock();
    code_ = st.code();
    if (!st.ok()) format_to(message_, sizeof message_, "%s", st.message());
    pending_ = false;
    changed_.notify_all();
  }
}

}  // namespace pocketlm
