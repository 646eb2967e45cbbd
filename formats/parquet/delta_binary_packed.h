#ifndef SPARKTORCH_FORMATS_PARQUET_DELTA_BINARY_PACKED_H_
#define SPARKTORCH_FORMATS_PARQUET_DELTA_BINARY_PACKED_H_

#include <cstddef>
#include <cstdint>

namespace sparktorch {
namespace parquet {

// A decoder of the DELTA_BINARY_PACKED encoding (the Parquet specification's Encodings.md) of
// INT32 or INT64 values: a header (block size, miniblocks per block, value count, first value),
// then blocks of deltas, each a minimum delta and miniblocks of bit-packed deltas from it. The
// arithmetic wraps at the values' width, as the specification says writers may rely on.
// It reads the bytes at [p, end), which the caller keeps alive; it allocates nothing, so a
// corrupt header costs no memory. Not thread-safe.
class DeltaBinaryPackedDecoder {
 public:
  // Reads the header at [p, end) of values `bits` (32 or 64) wide. Throws InputError for a
  // header that is truncated or that the specification forbids (a block size not a multiple of
  // 128, miniblocks not a multiple of 32 values).
  DeltaBinaryPackedDecoder(const uint8_t* p, const uint8_t* end, int bits);

  // The values the header says the data holds.
  uint64_t total() const { return total_; }

  // Decodes the next `n` values into out[0..n) (a 32-bit decoder's as int32_t, a 64-bit
  // decoder's as int64_t). Throws InputError when fewer than n values are left, the data ends
  // first, or a miniblock's bit width exceeds the values'.
  void Next(size_t n, int32_t* out);
  void Next(size_t n, int64_t* out);

 private:
  template <typename T>
  void Decode(size_t n, T* out);
  uint64_t ReadUleb();
  int64_t ReadZigZag();
  // Starts the next block: its minimum delta and its miniblocks' bit widths.
  void StartBlock();

  const uint8_t* p_;
  const uint8_t* end_;
  int bits_;
  uint64_t block_size_ = 0;
  uint64_t miniblocks_ = 0;
  uint64_t miniblock_size_ = 0;
  uint64_t total_ = 0;
  uint64_t left_ = 0;         // values not yet decoded, the first included
  bool first_pending_ = true;
  uint64_t last_ = 0;         // the last value decoded (wrapping at bits_ when 32)
  uint64_t min_delta_ = 0;
  const uint8_t* widths_ = nullptr;  // the current block's bit widths
  uint64_t miniblock_ = 0;    // the current miniblock, in its block
  uint64_t in_miniblock_ = 0; // deltas decoded from it
  int width_ = 0;             // its bit width
  const uint8_t* packed_ = nullptr;  // its bit-packed deltas
  size_t packed_bytes_ = 0;          // their bytes present (the last may be cut short)
};

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_DELTA_BINARY_PACKED_H_
