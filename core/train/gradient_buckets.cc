#include "core/train/gradient_buckets.h"

#include <algorithm>
#include <utility>

namespace sparktorch {

GradientBuckets::GradientBuckets(Communicator& comm, torch::Tensor grads,
                                 const std::vector<int64_t>& sizes, c10::ScalarType wire,
                                 int64_t bucket_elements)
    : shared_(std::make_shared<Shared>()), bucket_of_(sizes.size()), ready_(sizes.size()) {
  Shared& s = *shared_;
  s.comm = &comm;
  s.grads = std::move(grads);
  s.wire = wire;
  std::vector<int64_t> offsets(sizes.size() + 1, 0);
  for (size_t i = 0; i < sizes.size(); ++i) offsets[i + 1] = offsets[i] + sizes[i];
  s.rows_at = offsets.back();
  TORCH_CHECK(s.grads.numel() == s.rows_at + 1, "GradientBuckets: the buffer's size");
  // From the last parameter back; in float32 the rows element rides in bucket 0.
  Bucket bucket;
  bucket.end = wire == at::kFloat ? s.rows_at + 1 : s.rows_at;
  for (size_t i = sizes.size(); i-- > 0;) {
    bucket.begin = offsets[i];
    ++bucket.parameters;
    bucket_of_[i] = s.buckets.size();
    if (bucket.end - bucket.begin >= bucket_elements || i == 0) {
      s.buckets.push_back(std::move(bucket));
      bucket = Bucket();
      bucket.end = offsets[i];
    }
  }
  if (s.buckets.empty() && wire == at::kFloat) {  // no parameters: the rows alone
    bucket.begin = s.rows_at;
    s.buckets.push_back(std::move(bucket));
  }
  for (Bucket& b : s.buckets) {
    if (wire != at::kFloat) b.sum16 = std::make_unique<Allreduce16>(comm, wire);
  }
  thread_ = std::thread([shared = shared_] { Run(shared); });
}

GradientBuckets::~GradientBuckets() {
  bool busy = false;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stop = true;
    busy = shared_->in_collective;
  }
  shared_->cv.notify_all();
  if (busy) {
    thread_.detach();  // waits on peers of a failed step; it returns into Shared only
  } else {
    thread_.join();
  }
}

void GradientBuckets::Begin() {
  std::fill(ready_.begin(), ready_.end(), false);
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    for (Bucket& b : shared_->buckets) b.waiting = b.parameters;
    shared_->next = 0;
    shared_->step = true;
  }
  shared_->cv.notify_all();
}

void GradientBuckets::Ready(size_t i) {
  TORCH_CHECK(!ready_[i], "GradientBuckets: parameter ", i, " is ready twice in a step");
  ready_[i] = true;
  bool start = false;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    start = --shared_->buckets[bucket_of_[i]].waiting == 0;
  }
  if (start) shared_->cv.notify_all();
}

void GradientBuckets::Finish() {
  std::unique_lock<std::mutex> lock(shared_->mu);
  shared_->cv.wait(lock, [&] { return !shared_->step; });
  if (shared_->error) std::rethrow_exception(shared_->error);
}

void GradientBuckets::Run(const std::shared_ptr<Shared>& shared) {
  Shared& s = *shared;
  std::unique_lock<std::mutex> lock(s.mu);
  for (;;) {
    s.cv.wait(lock, [&] {
      return s.stop ||
             (s.step && (s.next == s.buckets.size() || s.buckets[s.next].waiting == 0));
    });
    if (s.stop) return;
    const bool rows_left = s.next == s.buckets.size();
    s.in_collective = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      if (rows_left) {
        // 16 bits: the rows, exactly, after the last bucket.
        if (s.wire != at::kFloat) s.comm->AllreduceSum(s.grads.data_ptr<float>() + s.rows_at, 1);
      } else {
        Bucket& b = s.buckets[s.next];
        if (b.sum16) {
          b.sum16->Sum(s.grads.narrow(0, b.begin, b.end - b.begin));
        } else {
          s.comm->AllreduceSum(s.grads.data_ptr<float>() + b.begin,
                               static_cast<size_t>(b.end - b.begin));
        }
      }
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    s.in_collective = false;
    if (error) {
      s.error = error;
      s.step = false;
    } else if (rows_left) {
      s.step = false;
    } else {
      ++s.next;
    }
    if (!s.step) s.cv.notify_all();
  }
}

}  // namespace sparktorch
