#ifndef SPARKTORCH_FORMATS_PARQUET_PARQUET_FILE_H_
#define SPARKTORCH_FORMATS_PARQUET_PARQUET_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/parquet/column_chunk.h"
#include "formats/parquet/metadata.h"

namespace sparktorch {
namespace parquet {

// A leaf of a file's schema: a column as its chunks store it.
struct Leaf {
  std::string path;  // the names from the top-level field down, joined by '.'
  size_t field = 0;  // the index of its top-level field in ParquetFile::fields()
  PhysicalType type = PhysicalType::kDouble;
  int max_def = 0;
  int max_rep = 0;
  bool decimal = false;      // SchemaElement::decimal
  bool is_unsigned = false;  // SchemaElement::is_unsigned
  // The definition level at which each node on the path, the top-level field first, is
  // present (is not null; a repeated node: has at least one element).
  std::vector<int> node_def;
  std::vector<Repetition> node_repetition;
};

// A top-level field (a column of the DataFrame that wrote the file) and its leaves.
struct Field {
  std::string name;
  std::vector<size_t> leaves;  // indices into ParquetFile::leaves(), in schema order
};

// One column chunk of a ParquetFile, read and decoded a page at a time (ParquetFile::OpenColumn).
class ColumnPages {
 public:
  ~ColumnPages();
  ColumnPages(const ColumnPages&) = delete;
  ColumnPages& operator=(const ColumnPages&) = delete;

  // Appends the next data page's entries to *out (ColumnChunkPages::Next); false after the
  // chunk's last. Throws InputError naming the file, the row group and the column.
  bool Next(ColumnValues* out);
  // "PATH: row group G, column a.b: " (ParquetFile::Where).
  const std::string& where() const { return where_; }
  // The rows of its row group.
  int64_t rows() const { return rows_; }

 private:
  friend class ParquetFile;
  struct Parts;
  ColumnPages();

  std::string where_;
  int64_t rows_ = 0;
  std::unique_ptr<Parts> parts_;  // null for an empty chunk
};

// One Apache Parquet file, opened for reading column chunks. Reads the footer when opened and a
// chunk's bytes when asked (pread: the file is never read whole). Not thread-safe.
class ParquetFile {
 public:
  // Opens `path` and reads its footer. Throws InputError naming the path when it cannot be
  // opened or is not a Parquet file this reader understands.
  explicit ParquetFile(const std::string& path);
  ~ParquetFile();
  ParquetFile(const ParquetFile&) = delete;
  ParquetFile& operator=(const ParquetFile&) = delete;

  const std::string& path() const { return path_; }
  const FileMetaData& metadata() const { return metadata_; }
  int64_t num_rows() const { return metadata_.num_rows; }
  const std::vector<Field>& fields() const { return fields_; }
  const std::vector<Leaf>& leaves() const { return leaves_; }
  // The index of the top-level field `name` in fields(), or -1.
  int FindField(const std::string& name) const;

  // Throws InputError naming the file, the row group and the column when, from the footer
  // alone, leaf `leaf`'s chunk in row group `row_group` is compressed or encoded in a way
  // this reader does not read (ReadColumn checks it too).
  void CheckColumn(size_t row_group, size_t leaf) const;

  // Decodes leaf `leaf`'s chunk in row group `row_group` into *out as `kind`. Throws
  // InputError naming the file, the row group and the column.
  void ReadColumn(size_t row_group, size_t leaf, ValueKind kind, ColumnValues* out);
  // The same chunk, to be read and decoded a page at a time (ColumnPages::Next). It reads the
  // file through this ParquetFile, which must outlive it.
  std::unique_ptr<ColumnPages> OpenColumn(size_t row_group, size_t leaf, ValueKind kind);

  // "PATH: row group G, column a.b: ", the start of every message about a column chunk (G counts
  // from 1).
  std::string Where(size_t row_group, size_t leaf) const;

 private:
  void BuildLeaves();
  // Where the chunk's first page starts, checked against the file's size; CheckColumn.
  int64_t ChunkStart(size_t row_group, size_t leaf) const;

  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
  FileMetaData metadata_;
  std::vector<Field> fields_;
  std::vector<Leaf> leaves_;
  std::vector<uint8_t> page_;  // a page's bytes as read from the file, reused
};

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_PARQUET_FILE_H_
