#ifndef SPARKTORCH_FORMATS_PARQUET_BYTE_STREAM_SPLIT_H_
#define SPARKTORCH_FORMATS_PARQUET_BYTE_STREAM_SPLIT_H_

#include <cstddef>
#include <cstdint>

namespace sparktorch {
namespace parquet {

// Values in the BYTE_STREAM_SPLIT encoding (the Parquet specification's Encodings.md): the
// values' first bytes, then their second bytes, and so on, `width` streams of `stride` bytes,
// `stride` being the number of values encoded.
class ByteStreamSplit {
 public:
  // The `size` bytes at `data` (which the caller keeps alive) as values `width` bytes wide.
  // Throws InputError when `size` is not a multiple of `width`.
  ByteStreamSplit(const uint8_t* data, size_t size, size_t width);

  // The number of values encoded.
  size_t count() const { return stride_; }

  // Writes values [first, first + n) to out[0..n * width) in PLAIN's layout (each value's bytes
  // together, little-endian). REQUIRES: first + n <= count().
  void Gather(size_t first, size_t n, uint8_t* out) const;

 private:
  const uint8_t* data_;
  size_t width_;
  size_t stride_;
};

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_BYTE_STREAM_SPLIT_H_
