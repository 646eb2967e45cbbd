#include "formats/parquet/decompress.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <climits>

#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

// *out resized to `size` bytes, and where the codec may write them: never null, as an empty
// vector's data() may be, so that no library is handed a null output for an empty page.
uint8_t* Output(std::vector<uint8_t>* out, size_t size) {
  out->resize(size);
  static uint8_t scratch;
  return size == 0 ? &scratch : out->data();
}

[[noreturn]] void Corrupt(const char* codec, const std::string& why) {
  throw InputError(std::string("corrupt ") + codec + " page (" + why + ")");
}

std::string SizeMismatch(size_t got, size_t expected) {
  return std::to_string(got) + " of " + std::to_string(expected) + " bytes";
}

void Inflate(const uint8_t* data, size_t size, size_t uncompressed_size,
             std::vector<uint8_t>* out) {
  if (size > UINT_MAX || uncompressed_size > UINT_MAX) Corrupt("GZIP", "a page over 4 GiB");
  z_stream z{};
  // 32 + MAX_WBITS: a gzip or a zlib header, recognised by its bytes (writers differ).
  if (inflateInit2(&z, 32 + MAX_WBITS) != Z_OK) throw InputError("cannot start zlib");
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = Output(out, uncompressed_size);
  z.avail_out = static_cast<uInt>(uncompressed_size);
  int status = inflate(&z, Z_FINISH);
  // Concatenated gzip members are one gzip stream (RFC 1952, as gunzip and Arrow read them):
  // after a member's end, the next starts where it stopped.
  while (status == Z_STREAM_END && z.avail_in > 0 && z.avail_out > 0) {
    if (inflateReset(&z) != Z_OK) break;
    status = inflate(&z, Z_FINISH);
  }
  size_t produced = uncompressed_size - z.avail_out;
  inflateEnd(&z);
  if (status != Z_STREAM_END || produced != uncompressed_size) {
    Corrupt("GZIP", "zlib status " + std::to_string(status) + ", " +
                        SizeMismatch(produced, uncompressed_size));
  }
}

// A raw Snappy block (Snappy's format_description.txt), which starts with its uncompressed length.
void SnappyUncompress(const uint8_t* data, size_t size, size_t uncompressed_size,
                      std::vector<uint8_t>* out) {
  const auto* in = reinterpret_cast<const char*>(data);
  size_t length = 0;
  if (snappy_uncompressed_length(in, size, &length) != SNAPPY_OK) {
    Corrupt("SNAPPY", "no uncompressed length");
  }
  if (length != uncompressed_size) Corrupt("SNAPPY", SizeMismatch(length, uncompressed_size));
  size_t produced = uncompressed_size;
  if (snappy_uncompress(in, size, reinterpret_cast<char*>(Output(out, uncompressed_size)),
                        &produced) != SNAPPY_OK ||
      produced != uncompressed_size) {
    Corrupt("SNAPPY", "libsnappy refused the block");
  }
}

// One raw LZ4 block (no frame) into `capacity` bytes at `dst`: the bytes it made, or -1 when it
// is corrupt or does not fit. LZ4_decompress_safe never reads or writes past the sizes it is given.
int Lz4Block(const uint8_t* data, size_t size, uint8_t* dst, size_t capacity) {
  if (size > LZ4_MAX_INPUT_SIZE || capacity > INT_MAX) return -1;
  return LZ4_decompress_safe(reinterpret_cast<const char*>(data), reinterpret_cast<char*>(dst),
                             static_cast<int>(size), static_cast<int>(capacity));
}

void Lz4RawUncompress(const uint8_t* data, size_t size, size_t uncompressed_size,
                      std::vector<uint8_t>* out) {
  const int got = Lz4Block(data, size, Output(out, uncompressed_size), uncompressed_size);
  if (got < 0) Corrupt("LZ4_RAW", "liblz4 refused the block");
  if (static_cast<size_t>(got) != uncompressed_size) {
    Corrupt("LZ4_RAW", SizeMismatch(static_cast<size_t>(got), uncompressed_size));
  }
}

uint32_t LoadBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Parquet's deprecated LZ4 codec, read as Arrow's parquet-cpp reads it (Lz4HadoopCodec): first
// as Hadoop's Lz4Codec frames it, a sequence of frames of a big-endian 4-byte decompressed size,
// a 4-byte compressed size and a raw block, which must fill the page exactly; and when the bytes
// are not that, as one raw LZ4 block, which older parquet-cpp wrote.
bool HadoopLz4Uncompress(const uint8_t* data, size_t size, uint8_t* dst, size_t capacity) {
  constexpr size_t kPrefixSize = 8;
  while (size >= kPrefixSize) {
    const size_t frame_uncompressed = LoadBigEndian32(data);
    const size_t frame_compressed = LoadBigEndian32(data + 4);
    data += kPrefixSize;
    size -= kPrefixSize;
    if (frame_compressed > size || frame_uncompressed > capacity) return false;
    const int got = Lz4Block(data, frame_compressed, dst, capacity);
    if (got < 0 || static_cast<size_t>(got) != frame_uncompressed) return false;
    data += frame_compressed;
    size -= frame_compressed;
    dst += frame_uncompressed;
    capacity -= frame_uncompressed;
  }
  return size == 0 && capacity == 0;
}

void Lz4Uncompress(const uint8_t* data, size_t size, size_t uncompressed_size,
                   std::vector<uint8_t>* out) {
  uint8_t* dst = Output(out, uncompressed_size);
  if (HadoopLz4Uncompress(data, size, dst, uncompressed_size)) return;
  const int got = Lz4Block(data, size, dst, uncompressed_size);
  if (got < 0) Corrupt("LZ4", "neither Hadoop's LZ4 frames nor a raw LZ4 block");
  if (static_cast<size_t>(got) != uncompressed_size) {
    Corrupt("LZ4", SizeMismatch(static_cast<size_t>(got), uncompressed_size));
  }
}

void BrotliUncompress(const uint8_t* data, size_t size, size_t uncompressed_size,
                      std::vector<uint8_t>* out) {
  size_t produced = uncompressed_size;
  // Output that would pass uncompressed_size is an error, not an overrun.
  if (BrotliDecoderDecompress(size, data, &produced, Output(out, uncompressed_size)) !=
      BROTLI_DECODER_RESULT_SUCCESS) {
    Corrupt("BROTLI", "libbrotlidec refused the stream, or it holds more than " +
                          std::to_string(uncompressed_size) + " bytes");
  }
  if (produced != uncompressed_size) Corrupt("BROTLI", SizeMismatch(produced, uncompressed_size));
}

void ZstdUncompress(const uint8_t* data, size_t size, size_t uncompressed_size,
                    std::vector<uint8_t>* out) {
  // The page header's size bounds the output: a frame that says or makes more is corrupt.
  const size_t got = ZSTD_decompress(Output(out, uncompressed_size), uncompressed_size, data, size);
  if (ZSTD_isError(got)) Corrupt("ZSTD", ZSTD_getErrorName(got));
  if (got != uncompressed_size) Corrupt("ZSTD", SizeMismatch(got, uncompressed_size));
}

}  // namespace

bool CodecSupported(Codec codec) {
  switch (codec) {
    case Codec::kUncompressed:
    case Codec::kSnappy:
    case Codec::kGzip:
    case Codec::kBrotli:
    case Codec::kLz4:
    case Codec::kZstd:
    case Codec::kLz4Raw:
      return true;
    default:
      return false;
  }
}

std::string CodecRefusal(Codec codec) {
  return "compressed with " + CodecName(codec) +
         ", which sparktorch does not read (it reads UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4, LZ4_RAW "
         "and BROTLI: any of Spark's spark.sql.parquet.compression.codec but lzo)";
}

void Decompress(Codec codec, const uint8_t* data, size_t size, size_t uncompressed_size,
                std::vector<uint8_t>* out) {
  switch (codec) {
    case Codec::kUncompressed:
      if (size != uncompressed_size) throw InputError("an uncompressed page of the wrong size");
      out->assign(data, data + size);
      return;
    case Codec::kSnappy:
      return SnappyUncompress(data, size, uncompressed_size, out);
    case Codec::kGzip:
      return Inflate(data, size, uncompressed_size, out);
    case Codec::kBrotli:
      return BrotliUncompress(data, size, uncompressed_size, out);
    case Codec::kLz4:
      return Lz4Uncompress(data, size, uncompressed_size, out);
    case Codec::kZstd:
      return ZstdUncompress(data, size, uncompressed_size, out);
    case Codec::kLz4Raw:
      return Lz4RawUncompress(data, size, uncompressed_size, out);
    default:
      throw InputError("pages " + CodecRefusal(codec));
  }
}

}  // namespace parquet
}  // namespace sparktorch
