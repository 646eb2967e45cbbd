#ifndef SPARKTORCH_FORMATS_PARQUET_SNAPPY_H_
#define SPARKTORCH_FORMATS_PARQUET_SNAPPY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sparktorch {
namespace parquet {

// Decompresses one raw Snappy block (Snappy's format_description.txt: the uncompressed length
// as a varint, then literals and back-references), as Parquet's SNAPPY codec stores each page,
// into *out (replacing what it held). Throws InputError for a corrupt block or one whose length
// is not `expected_size`.
void SnappyDecompress(const uint8_t* data, size_t size, size_t expected_size,
                      std::vector<uint8_t>* out);

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_SNAPPY_H_
