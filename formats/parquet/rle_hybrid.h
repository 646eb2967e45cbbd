#ifndef SPARKTORCH_FORMATS_PARQUET_RLE_HYBRID_H_
#define SPARKTORCH_FORMATS_PARQUET_RLE_HYBRID_H_

#include <cstddef>
#include <cstdint>

namespace sparktorch {
namespace parquet {

// The number of bits that hold values from 0 to `max_value`: 0 for 0, 1 for 1, 2 for 2 and 3.
int BitWidth(uint32_t max_value);

// Decodes the first `n` values of the RLE/bit-packed hybrid encoding (the Parquet
// specification's Encodings.md, "RLE") of `bit_width`-bit values (0 to 32) at [p, end), without
// a length prefix, into out[0..n). Levels, dictionary indices and RLE booleans use it. Returns
// normally once n values are decoded, whatever follows them; throws InputError when the data ends
// first or a value exceeds `max_value`. Reads nothing outside [p, end).
void DecodeRleHybrid(const uint8_t* p, const uint8_t* end, int bit_width, size_t n,
                     uint32_t max_value, uint8_t* out);
void DecodeRleHybrid(const uint8_t* p, const uint8_t* end, int bit_width, size_t n,
                     uint32_t max_value, uint32_t* out);

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_RLE_HYBRID_H_
