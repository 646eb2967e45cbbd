#include "formats/parquet/decompress.h"

#include <zlib.h>
#ifdef SPARKTORCH_HAVE_ZSTD
#include <zstd.h>
#endif

#include "formats/error.h"
#include "formats/parquet/snappy.h"

namespace sparktorch {
namespace parquet {
namespace {

void Inflate(const uint8_t* data, size_t size, size_t uncompressed_size,
             std::vector<uint8_t>* out) {
  out->resize(uncompressed_size);
  z_stream z{};
  // 32 + MAX_WBITS: a gzip or a zlib header, recognised by its bytes (writers differ).
  if (inflateInit2(&z, 32 + MAX_WBITS) != Z_OK) throw InputError("cannot start zlib");
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out->data();
  z.avail_out = static_cast<uInt>(uncompressed_size);
  int status = inflate(&z, Z_FINISH);
  size_t produced = uncompressed_size - z.avail_out;
  inflateEnd(&z);
  if (status != Z_STREAM_END || produced != uncompressed_size) {
    throw InputError("corrupt GZIP page (zlib status " + std::to_string(status) + ", " +
                     std::to_string(produced) + " of " + std::to_string(uncompressed_size) +
                     " bytes)");
  }
}

}  // namespace

bool CodecSupported(Codec codec) {
#ifdef SPARKTORCH_HAVE_ZSTD
  if (codec == Codec::kZstd) return true;
#endif
  return codec == Codec::kUncompressed || codec == Codec::kSnappy || codec == Codec::kGzip;
}

std::string CodecRefusal(Codec codec) {
#ifdef SPARKTORCH_HAVE_ZSTD
  const char* codecs = "SNAPPY, GZIP, ZSTD and UNCOMPRESSED: Spark's "
                       "spark.sql.parquet.compression.codec";
#else
  const char* codecs = "SNAPPY, GZIP and UNCOMPRESSED: Spark's "
                       "spark.sql.parquet.compression.codec; ZSTD in a build with libzstd";
#endif
  return "compressed with " + CodecName(codec) + ", which sparktorch does not read (it reads " +
         codecs + ")";
}

void Decompress(Codec codec, const uint8_t* data, size_t size, size_t uncompressed_size,
                std::vector<uint8_t>* out) {
  switch (codec) {
    case Codec::kUncompressed:
      if (size != uncompressed_size) throw InputError("an uncompressed page of the wrong size");
      out->assign(data, data + size);
      return;
    case Codec::kSnappy:
      SnappyDecompress(data, size, uncompressed_size, out);
      return;
    case Codec::kGzip:
      Inflate(data, size, uncompressed_size, out);
      return;
#ifdef SPARKTORCH_HAVE_ZSTD
    case Codec::kZstd: {
      // The page header's size bounds the output: a frame that says or makes more is corrupt.
      out->resize(uncompressed_size);
      const size_t got = ZSTD_decompress(out->data(), uncompressed_size, data, size);
      if (ZSTD_isError(got) || got != uncompressed_size) {
        throw InputError(std::string("corrupt ZSTD page (") +
                         (ZSTD_isError(got) ? ZSTD_getErrorName(got)
                                            : std::to_string(got) + " of " +
                                                  std::to_string(uncompressed_size) + " bytes") +
                         ")");
      }
      return;
    }
#endif
    default:
      throw InputError("pages " + CodecRefusal(codec));
  }
}

}  // namespace parquet
}  // namespace sparktorch
