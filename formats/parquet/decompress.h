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
// default) through libsnappy, GZIP through zlib, ZSTD through libzstd, LZ4_RAW and the deprecated
// LZ4 through liblz4, and BROTLI through libbrotlidec. Of the codecs Parquet names, only LZO
// (which needs Hadoop's native code to write) is refused.
bool CodecSupported(Codec codec);

// "compressed with LZO, which sparktorch does not read (it reads ...)": why pages compressed
// with `codec` (one CodecSupported refuses) cannot be read.
std::string CodecRefusal(Codec codec);

// Decompresses one page's `size` bytes at `data`, compressed with `codec`, into *out (replacing
// what it held), which must then hold `uncompressed_size` bytes. LZ4 pages are read as Arrow's
// parquet-cpp reads them: Hadoop's framing (big-endian decompressed and compressed sizes before
// each block) when the bytes are that, else one raw LZ4 block. Throws InputError for corrupt
// data, data that does not decompress to exactly `uncompressed_size` bytes, or a codec
// CodecSupported refuses; the libraries' bounded APIs never read or write outside the buffers.
void Decompress(Codec codec, const uint8_t* data, size_t size, size_t uncompressed_size,
                std::vector<uint8_t>* out);

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_DECOMPRESS_H_
