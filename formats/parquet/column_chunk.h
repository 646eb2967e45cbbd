#ifndef SPARKTORCH_FORMATS_PARQUET_COLUMN_CHUNK_H_
#define SPARKTORCH_FORMATS_PARQUET_COLUMN_CHUNK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/parquet/metadata.h"

namespace sparktorch {
namespace parquet {

// What a reader keeps of a leaf's values: numbers (as float32, the precision sparktorch
// trains in), exact 32-bit integers (a vector's sizes and indices), or text (strings, and
// integers written in decimal, for row ids).
enum class ValueKind { kNumber, kInteger, kText };

// One column chunk of a leaf, decoded: a definition and a repetition level per entry (Dremel's
// encoding of nulls and lists; see the Parquet specification) and the values of the entries
// whose definition level is the leaf's maximum.
struct ColumnValues {
  std::vector<uint8_t> def;  // empty when the leaf's max_def is 0: every entry has a value
  std::vector<uint8_t> rep;  // empty when the leaf's max_rep is 0: one entry per row
  std::vector<float> numbers;      // ValueKind::kNumber
  std::vector<int32_t> integers;   // ValueKind::kInteger
  std::vector<std::string> texts;  // ValueKind::kText
  int64_t entries = 0;
};

// How to decode one leaf's chunk.
struct LeafLayout {
  PhysicalType type = PhysicalType::kDouble;
  int max_def = 0;  // at most 255 and max_rep likewise (sparktorch's bound; real files: < 10)
  int max_rep = 0;
  ValueKind kind = ValueKind::kNumber;
  bool is_unsigned = false;  // INT32 and INT64 values are unsigned (UINT_32, UINT_64)
};

// Whether DecodeColumnChunk reads values of physical type `type` encoded as `encoding`: PLAIN
// and dictionary encodings (PLAIN_DICTIONARY, RLE_DICTIONARY) of every type, DELTA_BINARY_PACKED
// of INT32 and INT64, BYTE_STREAM_SPLIT of INT32, INT64, FLOAT and DOUBLE, RLE of BOOLEAN. (Which
// types it reads at all is DecodePlain's: not INT96 or FIXED_LEN_BYTE_ARRAY.) Levels are RLE.
bool ValueEncodingSupported(Encoding encoding, PhysicalType type);

// "encoded as DELTA_BYTE_ARRAY, which sparktorch does not read for BYTE_ARRAY values (it reads
// ...)": why values ValueEncodingSupported refuses cannot be read.
std::string EncodingRefusal(Encoding encoding, PhysicalType type);

// A column chunk's bytes (its pages, from its first page header), a range at a time, so that a
// decoder holds one page of them, not the chunk (a Spark-written chunk can be 100 MB).
class ChunkBytes {
 public:
  virtual ~ChunkBytes() = default;
  virtual size_t size() const = 0;
  // The `n` bytes at `offset` (offset + n <= size()), valid until the next call.
  virtual const uint8_t* Read(size_t offset, size_t n) = 0;
};

class ChunkDecoder;

// Decodes a column chunk a data page at a time (a dictionary page on the way), so that a reader
// holds a page of its values, not the chunk's: what ParquetRowReader does.
class ColumnChunkPages {
 public:
  // `bytes` and `meta` must outlive it.
  ColumnChunkPages(ChunkBytes* bytes, const ColumnChunk& meta, const LeafLayout& layout);
  ~ColumnChunkPages();
  ColumnChunkPages(const ColumnChunkPages&) = delete;
  ColumnChunkPages& operator=(const ColumnChunkPages&) = delete;

  // Appends the next data page's entries to *out (adding to out->entries). False, appending
  // nothing, once the pages have held the values the chunk says it has. Throws InputError, as
  // DecodeColumnChunk does, for what it cannot read.
  bool Next(ColumnValues* out);

 private:
  ChunkBytes* bytes_;
  const ColumnChunk& meta_;
  std::unique_ptr<ChunkDecoder> decoder_;
  size_t at_ = 0;         // the next page header's offset in the chunk
  int64_t decoded_ = 0;   // the entries of the data pages so far
};

// Decodes the column chunk `meta` whose bytes (its pages, from its first page header) are
// `bytes`, into *out (replacing what it held, reserving the values the chunk says it has). Reads the values
// ValueEncodingSupported allows in DATA_PAGE and DATA_PAGE_V2 pages, compressed as
// CodecSupported allows. Throws InputError, without a file name (the caller adds it), for what
// it cannot read: another encoding, an INT96 or fixed-length value, corrupt pages. Its memory
// is bounded by the chunk's values (a page's, at most 2^26) whatever the bytes say.
void DecodeColumnChunk(ChunkBytes& bytes, const ColumnChunk& meta, const LeafLayout& layout,
                       ColumnValues* out);
// The same, of the `size` bytes at `chunk`.
void DecodeColumnChunk(const uint8_t* chunk, size_t size, const ColumnChunk& meta,
                       const LeafLayout& layout, ColumnValues* out);

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_COLUMN_CHUNK_H_
