#include "formats/parquet/delta_binary_packed.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

// Blocks larger than this (parquet-mr and Arrow write 128 values) are a corrupt header; Arrow's
// reader holds the size in 32 bits too.
constexpr uint64_t kMaxBlockSize = uint64_t{1} << 32;

}  // namespace

DeltaBinaryPackedDecoder::DeltaBinaryPackedDecoder(const uint8_t* p, const uint8_t* end, int bits)
    : p_(p), end_(end), bits_(bits) {
  block_size_ = ReadUleb();
  miniblocks_ = ReadUleb();
  total_ = ReadUleb();
  last_ = static_cast<uint64_t>(ReadZigZag());
  if (block_size_ == 0 || block_size_ % 128 != 0 || block_size_ > kMaxBlockSize) {
    throw InputError("DELTA_BINARY_PACKED blocks of " + std::to_string(block_size_) +
                     " values (not a multiple of 128)");
  }
  if (miniblocks_ == 0 || block_size_ % miniblocks_ != 0 || block_size_ / miniblocks_ % 32 != 0) {
    throw InputError("DELTA_BINARY_PACKED blocks of " + std::to_string(block_size_) +
                     " values in " + std::to_string(miniblocks_) +
                     " miniblocks (not a multiple of 32 values each)");
  }
  miniblock_size_ = block_size_ / miniblocks_;
  left_ = total_;
  // The first delta starts a block.
  miniblock_ = miniblocks_ - 1;
  in_miniblock_ = miniblock_size_;
}

uint64_t DeltaBinaryPackedDecoder::ReadUleb() {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    if (p_ >= end_) throw InputError("truncated DELTA_BINARY_PACKED header");
    if (shift > 63) throw InputError("a DELTA_BINARY_PACKED integer longer than 64 bits");
    v |= static_cast<uint64_t>(*p_ & 0x7f) << shift;
    if ((*p_++ & 0x80) == 0) return v;
  }
}

int64_t DeltaBinaryPackedDecoder::ReadZigZag() {
  uint64_t u = ReadUleb();
  return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}

void DeltaBinaryPackedDecoder::StartBlock() {
  min_delta_ = static_cast<uint64_t>(ReadZigZag());
  if (static_cast<uint64_t>(end_ - p_) < miniblocks_) {
    throw InputError("truncated DELTA_BINARY_PACKED block");
  }
  widths_ = p_;
  p_ += miniblocks_;
  miniblock_ = 0;
}

template <typename T>
void DeltaBinaryPackedDecoder::Decode(size_t n, T* out) {
  if (n > left_) {
    throw InputError("DELTA_BINARY_PACKED data of " + std::to_string(total_) +
                     " values, fewer than its page's");
  }
  size_t i = 0;
  if (n > 0 && first_pending_) {
    out[i++] = static_cast<T>(last_);
    first_pending_ = false;
  }
  while (i < n) {
    if (in_miniblock_ == miniblock_size_) {
      // The next miniblock. Those of a last block that no value needs are absent, and their
      // bit widths may be anything, so a width is checked only when its miniblock is read.
      if (miniblock_ + 1 >= miniblocks_) {
        StartBlock();
      } else {
        ++miniblock_;
      }
      width_ = widths_[miniblock_];
      if (width_ > bits_) {
        throw InputError("DELTA_BINARY_PACKED deltas of " + std::to_string(width_) +
                         " bits in " + std::to_string(bits_) + "-bit values");
      }
      // A full miniblock's bytes; the last one may be cut short of its padding.
      const uint64_t full = miniblock_size_ * static_cast<uint64_t>(width_) / 8;
      packed_ = p_;
      packed_bytes_ = static_cast<size_t>(std::min<uint64_t>(full, end_ - p_));
      p_ += packed_bytes_;
      in_miniblock_ = 0;
    }
    const size_t take = static_cast<size_t>(std::min<uint64_t>(n - i, miniblock_size_ - in_miniblock_));
    const uint64_t w = static_cast<uint64_t>(width_);
    if ((in_miniblock_ + take) * w > uint64_t{8} * packed_bytes_) {
      throw InputError("truncated DELTA_BINARY_PACKED miniblock");
    }
    uint64_t value = last_;
    if (w == 0) {
      for (size_t k = 0; k < take; ++k) {
        value += min_delta_;
        out[i + k] = static_cast<T>(value);
      }
    } else {
      const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
      uint64_t bit = in_miniblock_ * w;
      for (size_t k = 0; k < take; ++k, bit += w) {
        const size_t byte = static_cast<size_t>(bit / 8);
        const unsigned shift = static_cast<unsigned>(bit % 8);
        uint64_t word = 0;
        if (packed_bytes_ - byte >= 8) {
          std::memcpy(&word, packed_ + byte, 8);
          word >>= shift;
          // A value of more than 57 bits may reach into a ninth byte, which the check above
          // says is there.
          if (shift + w > 64) word |= static_cast<uint64_t>(packed_[byte + 8]) << (64 - shift);
        } else {
          std::memcpy(&word, packed_ + byte, packed_bytes_ - byte);
          word >>= shift;
        }
        value += min_delta_ + (word & mask);
        out[i + k] = static_cast<T>(value);
      }
    }
    last_ = value;
    in_miniblock_ += take;
    i += take;
  }
  left_ -= n;
}

void DeltaBinaryPackedDecoder::Next(size_t n, int32_t* out) {
  if (bits_ != 32) throw InputError("64-bit DELTA_BINARY_PACKED values read as 32-bit");
  // Wrapping in 64 bits and keeping the low 32 is the 32-bit wrapping sum.
  Decode(n, out);
}

void DeltaBinaryPackedDecoder::Next(size_t n, int64_t* out) {
  if (bits_ != 64) throw InputError("32-bit DELTA_BINARY_PACKED values read as 64-bit");
  Decode(n, out);
}

}  // namespace parquet
}  // namespace sparktorch
