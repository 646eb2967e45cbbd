#ifndef SPARKTORCH_FORMATS_PARQUET_METADATA_H_
#define SPARKTORCH_FORMATS_PARQUET_METADATA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sparktorch {
namespace parquet {

// The parts of Apache Parquet's metadata (parquet.thrift) that sparktorch reads; field names
// follow the specification. Everything else in a file is skipped.

enum class PhysicalType : int32_t {
  kBoolean = 0, kInt32 = 1, kInt64 = 2, kInt96 = 3, kFloat = 4, kDouble = 5, kByteArray = 6,
  kFixedLenByteArray = 7,
};
enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };
enum class Codec : int32_t {
  kUncompressed = 0, kSnappy = 1, kGzip = 2, kLzo = 3, kBrotli = 4, kLz4 = 5, kZstd = 6, kLz4Raw = 7,
};
enum class Encoding : int32_t {
  kPlain = 0, kPlainDictionary = 2, kRle = 3, kBitPacked = 4, kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6, kDeltaByteArray = 7, kRleDictionary = 8, kByteStreamSplit = 9,
};
enum class PageType : int32_t { kData = 0, kIndex = 1, kDictionary = 2, kDataV2 = 3 };

struct SchemaElement {
  std::optional<PhysicalType> type;  // set for leaves only
  Repetition repetition = Repetition::kRequired;
  std::string name;
  int32_t num_children = 0;
  // A DECIMAL (ConvertedType 5, or the LogicalType union's DECIMAL): an integer that is not the
  // number it stands for, so sparktorch refuses it.
  bool decimal = false;
  // An unsigned integer (ConvertedType UINT_8 to UINT_64, or the LogicalType union's INTEGER with
  // isSigned false): an INT32 or INT64 whose bits are read as unsigned, as its writer meant.
  bool is_unsigned = false;
};

struct ColumnChunk {
  PhysicalType type = PhysicalType::kInt32;
  std::vector<std::string> path;
  // Every encoding the chunk's pages use, their levels' too (parquet-mr also lists BIT_PACKED
  // for levels it does not write).
  std::vector<Encoding> encodings;
  Codec codec = Codec::kUncompressed;
  int64_t num_values = 0;
  int64_t data_page_offset = 0;
  std::optional<int64_t> dictionary_page_offset;
  int64_t total_compressed_size = 0;
};

struct RowGroup {
  std::vector<ColumnChunk> columns;  // one per leaf of the schema, in schema order
  int64_t num_rows = 0;
};

struct FileMetaData {
  std::vector<SchemaElement> schema;  // depth first; schema[0] is the root
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::string created_by;
};

struct PageHeader {
  PageType type = PageType::kData;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  // DATA_PAGE, DICTIONARY_PAGE and DATA_PAGE_V2 headers, flattened.
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  // DATA_PAGE_V2 only: the levels' byte lengths (stored uncompressed, before the values) and
  // whether the values are compressed.
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
};

// Parses a file's footer (the Thrift bytes before its length and "PAR1"). Throws InputError
// (without a file name: the caller adds it) for corrupt metadata.
FileMetaData ParseFileMetaData(const uint8_t* data, size_t size);

// Parses the page header at `data`; sets *header_size to its length. Throws InputError.
PageHeader ParsePageHeader(const uint8_t* data, size_t size, size_t* header_size);

// "SNAPPY", "PLAIN_DICTIONARY", "INT64", ...: the specification's names, for messages ("physical
// type 9" for a number that names none).
std::string CodecName(Codec codec);
std::string EncodingName(Encoding encoding);
std::string TypeName(PhysicalType type);

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_METADATA_H_
