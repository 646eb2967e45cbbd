#include "formats/parquet/rle_hybrid.h"

#include <algorithm>
#include <cstring>

#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

template <typename Out>
void Decode(const uint8_t* p, const uint8_t* end, int bit_width, size_t n, uint32_t max_value,
            Out* out) {
  if (bit_width < 0 || bit_width > 32) {
    throw InputError("RLE/bit-packed values of " + std::to_string(bit_width) + " bits");
  }
  const uint64_t mask = bit_width == 32 ? 0xffffffffu : (uint64_t{1} << bit_width) - 1;
  const size_t value_bytes = static_cast<size_t>(bit_width + 7) / 8;
  size_t done = 0;
  while (done < n) {
    uint64_t header = 0;
    for (int shift = 0;; shift += 7) {
      if (p >= end || shift > 35) throw InputError("truncated RLE/bit-packed run");
      header |= static_cast<uint64_t>(*p & 0x7f) << shift;
      if ((*p++ & 0x80) == 0) break;
    }
    if (header & 1) {  // bit-packed: (header >> 1) groups of 8 values, least significant bit first
      size_t count = (header >> 1) * 8;
      size_t bytes = (header >> 1) * static_cast<size_t>(bit_width);
      if (static_cast<size_t>(end - p) < bytes) {
        // The last group may be cut short of its padding; the values needed must be there.
        bytes = static_cast<size_t>(end - p);
        count = std::min(count, bytes * 8 / std::max(bit_width, 1));
        if (done + count < n) throw InputError("truncated bit-packed run");
      }
      size_t take = std::min(count, n - done);
      uint32_t largest = 0;
      size_t i = 0;
      if (bit_width <= 8) {
        // A group of 8 values is bit_width bytes: one load gives the 8 (levels, booleans and
        // dictionaries of up to 256 values, the common widths, go here).
        const size_t w = static_cast<size_t>(bit_width);
        for (; i + 8 <= take && i / 8 * w + 8 <= bytes; i += 8) {
          uint64_t word;
          std::memcpy(&word, p + i / 8 * w, 8);
          for (size_t j = 0; j < 8; ++j) {
            const uint32_t v = static_cast<uint32_t>((word >> (j * w)) & mask);
            largest = std::max(largest, v);
            out[done + i + j] = static_cast<Out>(v);
          }
        }
      }
      for (; i < take; ++i) {
        size_t bit = i * static_cast<size_t>(bit_width);
        uint64_t word = 0;
        if (bytes - bit / 8 >= 8) {
          std::memcpy(&word, p + bit / 8, 8);  // a value of up to 32 bits, shifted by up to 7
        } else {
          std::memcpy(&word, p + bit / 8, bytes - bit / 8);
        }
        uint32_t v = static_cast<uint32_t>((word >> (bit % 8)) & mask);
        largest = std::max(largest, v);
        out[done + i] = static_cast<Out>(v);
      }
      if (largest > max_value) throw InputError("a level or dictionary index out of range");
      done += take;
      p += bytes;
    } else {  // run: (header >> 1) repeats of one value
      size_t count = header >> 1;
      if (static_cast<size_t>(end - p) < value_bytes) throw InputError("truncated RLE run");
      uint32_t v = 0;
      for (size_t i = 0; i < value_bytes; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
      p += value_bytes;
      if (v > max_value) throw InputError("a level or dictionary index out of range");
      size_t take = std::min(count, n - done);
      std::fill(out + done, out + done + take, static_cast<Out>(v));
      done += take;
    }
  }
}

}  // namespace

int BitWidth(uint32_t max_value) {
  int bits = 0;
  while (max_value > 0) {
    ++bits;
    max_value >>= 1;
  }
  return bits;
}

void DecodeRleHybrid(const uint8_t* p, const uint8_t* end, int bit_width, size_t n,
                     uint32_t max_value, uint8_t* out) {
  Decode(p, end, bit_width, n, max_value, out);
}

void DecodeRleHybrid(const uint8_t* p, const uint8_t* end, int bit_width, size_t n,
                     uint32_t max_value, uint32_t* out) {
  Decode(p, end, bit_width, n, max_value, out);
}

}  // namespace parquet
}  // namespace sparktorch
