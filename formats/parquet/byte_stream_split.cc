#include "formats/parquet/byte_stream_split.h"

#include <string>

#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

// The loops with the width a constant, which the compiler unrolls.
template <size_t kWidth>
void GatherFixed(const uint8_t* data, size_t stride, size_t first, size_t n, uint8_t* out) {
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < kWidth; ++k) out[i * kWidth + k] = data[k * stride + first + i];
  }
}

}  // namespace

ByteStreamSplit::ByteStreamSplit(const uint8_t* data, size_t size, size_t width)
    : data_(data), width_(width), stride_(width == 0 ? 0 : size / width) {
  if (width == 0 || size % width != 0) {
    throw InputError("BYTE_STREAM_SPLIT data of " + std::to_string(size) +
                     " bytes, not a multiple of its values' " + std::to_string(width));
  }
}

void ByteStreamSplit::Gather(size_t first, size_t n, uint8_t* out) const {
  switch (width_) {
    case 4:
      GatherFixed<4>(data_, stride_, first, n, out);
      return;
    case 8:
      GatherFixed<8>(data_, stride_, first, n, out);
      return;
    default:
      for (size_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < width_; ++k) out[i * width_ + k] = data_[k * stride_ + first + i];
      }
  }
}

}  // namespace parquet
}  // namespace sparktorch
