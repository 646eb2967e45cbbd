#ifndef SPARKTORCH_FORMATS_PARQUET_DECOMPRESS_H_
#define SPARKTORCH_FORMATS_PARQUET_DECOMPRESS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/parquet/metadata.h"

namespace sparktorch {
namespace parquet {

// Whether sparktorch reads pages compressed with `codec`: UNCOMPRESSED, SNAPPY (Spark's
// default), GZIP, and ZSTD where it was built with libzstd (SPARKTORCH_HAVE_ZSTD).
bool CodecSupported(Codec codec);

// "compressed with LZ4, which sparktorch does not read (it reads ...)": why pages compressed
// with `codec` (one CodecSupported refuses) cannot be read.
std::string CodecRefusal(Codec codec);

// Decompresses one page's `size` bytes at `data`, compressed with `codec`, into *out (replacing
// what it held), which must then hold `uncompressed_size` bytes. Throws InputError for corrupt
// data or a codec CodecSupported refuses.
void Decompress(Codec codec, const uint8_t* data, size_t size, size_t uncompressed_size,
                std::vector<uint8_t>* out);

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_DECOMPRESS_H_
