#include "core/data/float_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace sparktorch {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

FloatBuffer::~FloatBuffer() { Free(data_, bytes_); }

void FloatBuffer::Append(const float* values, size_t n) {
  if (size_ + n > bytes_ / sizeof(float)) Grow(size_ + n);
  if (n > 0) std::memcpy(data_ + size_, values, n * sizeof(float));
  size_ += n;
}

void FloatBuffer::Grow(size_t min_floats) {
  const size_t bytes = std::max(RoundUp(min_floats * sizeof(float)), 2 * bytes_);
  void* p = data_ == nullptr
                ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                : mremap(data_, bytes_, bytes, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint: where the kernel has no huge pages, 4 KiB ones
  data_ = static_cast<float*>(p);
  bytes_ = bytes;
}

float* FloatBuffer::Release(size_t* bytes) {
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
