#ifndef SPARKTORCH_FORMATS_PARQUET_DECOMPRESS_H_
#define SPARKTORCH_FORMATS_PARQUET_DECOMPRESS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/parquet/metadata.h"

namespace sparktorch {
namespace parquet {

// Whether sparktorch reads pages compressed with `codec`: UNCOMPRESSED, SNAPPY (Spark's
// default) and GZIP.
bool CodecSupported(Codec codec);

// Decompresses one page's `size` bytes at `data`, compressed with `codec`, into *out (replacing
// what it held), which must then hold `uncompressed_size` bytes. Throws InputError for corrupt
// data or a codec CodecSupported refuses.
void Decompress(Codec codec, const uint8_t* data, size_t size, size_t uncompressed_size,
                std::vector<uint8_t>* out);

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_DECOMPRESS_H_
