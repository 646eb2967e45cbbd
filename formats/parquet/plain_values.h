#ifndef SPARKTORCH_FORMATS_PARQUET_PLAIN_VALUES_H_
#define SPARKTORCH_FORMATS_PARQUET_PLAIN_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/parquet/column_chunk.h"
#include "formats/parquet/metadata.h"

namespace sparktorch {
namespace parquet {

// The bytes of one PLAIN value of `type`: 4 (INT32, FLOAT), 8 (INT64, DOUBLE), or 0 for the
// types without a fixed width that sparktorch reads (BOOLEAN is bits; the others it refuses).
size_t PlainSize(PhysicalType type);

// Where decoded values go, by ValueKind. The caller owns the vectors.
struct ValueSink {
  std::vector<float>* numbers;
  std::vector<int32_t>* integers;
  std::vector<std::string>* texts;
};

// Appends `n` PLAIN values of `layout.type` at [p, end) to the sink of `layout.kind`: as float32
// numbers, exact 32-bit integers (INT32 only) or text (strings; integers in decimal), integers
// as unsigned where `layout.is_unsigned`. The other encodings decode into PLAIN's layout and end
// here too. Throws InputError when the data is shorter than n values or the type cannot be read
// as the kind.
void DecodePlain(const uint8_t* p, const uint8_t* end, const LeafLayout& layout, size_t n,
                 const ValueSink& sink);

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_PLAIN_VALUES_H_
