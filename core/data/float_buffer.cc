#include "core/data/float_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "core/data/spill.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// What a spilled buffer stages in memory between writes to its file.
constexpr size_t kStageBytes = size_t{4} << 20;

size_t RoundUp(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

float* MapAnonymous(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return static_cast<float*>(p);
}

}  // namespace

FloatBuffer::~FloatBuffer() {
  Free(data_, bytes_);
  if (fd_ >= 0) {
    close(fd_);
  } else if (budget_ != nullptr) {
    budget_->Give(bytes_);
  }
}

void FloatBuffer::Append(const float* values, size_t n) {
  if (fd_ >= 0) {
    const size_t stage = bytes_ / sizeof(float);
    while (n > 0) {
      const size_t take = std::min(n, stage - staged_);
      std::memcpy(data_ + staged_, values, take * sizeof(float));
      staged_ += take;
      size_ += take;
      values += take;
      n -= take;
      if (staged_ == stage) Flush();
    }
    return;
  }
  if (size_ + n > bytes_ / sizeof(float)) Grow(size_ + n);
  if (fd_ >= 0) return Append(values, n);  // Grow spilled
  if (n > 0) std::memcpy(data_ + size_, values, n * sizeof(float));
  size_ += n;
}

void FloatBuffer::Grow(size_t min_floats) {
  const size_t bytes = std::max(RoundUp(min_floats * sizeof(float)), 2 * bytes_);
  if (budget_ != nullptr && !budget_->Take(bytes - bytes_)) return Spill();
  void* p = data_ == nullptr ? MapAnonymous(bytes) : mremap(data_, bytes_, bytes, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) {
    if (budget_ != nullptr) budget_->Give(bytes - bytes_);
    throw std::bad_alloc();
  }
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint: where the kernel has no huge pages, 4 KiB ones
  data_ = static_cast<float*>(p);
  bytes_ = bytes;
}

void FloatBuffer::Spill() {
  fd_ = budget_->OpenFile();
  if (size_ > 0) budget_->Write(fd_, data_, size_ * sizeof(float));
  Free(data_, bytes_);
  budget_->Give(bytes_);
  data_ = MapAnonymous(kStageBytes);
  bytes_ = kStageBytes;
  staged_ = 0;
}

void FloatBuffer::Flush() {
  budget_->Write(fd_, data_, staged_ * sizeof(float));
  staged_ = 0;
}

float* FloatBuffer::Release(size_t* bytes) {
  if (fd_ >= 0) {
    Flush();
    Free(data_, bytes_);
    data_ = nullptr;
    *bytes = size_ * sizeof(float);
    if (*bytes == 0) {
      close(fd_);
      fd_ = -1;
      bytes_ = 0;
      return nullptr;
    }
    // Writable but private: a write would copy its page, never reach the file.
    void* p = mmap(nullptr, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd_, 0);
    close(fd_);  // the mapping keeps the file until it is unmapped
    fd_ = -1;
    size_ = bytes_ = 0;
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<float*>(p);
  }
  // The budget stays taken: the memory is the caller's now, still anonymous.
  float* data = data_;
  *bytes = bytes_;
  data_ = nullptr;
  size_ = bytes_ = 0;
  return data;
}

void FloatBuffer::Free(float* data, size_t bytes) {
  if (data != nullptr) munmap(data, bytes);
}

}  // namespace sparktorch
