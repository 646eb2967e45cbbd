#ifndef SPARKTORCH_FORMATS_PARQUET_PARQUET_ROWS_H_
#define SPARKTORCH_FORMATS_PARQUET_PARQUET_ROWS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/parquet/column_chunk.h"
#include "formats/parquet/parquet_file.h"
#include "formats/row.h"
#include "formats/row_format.h"

namespace sparktorch {
namespace parquet {

struct SelectedColumn;  // a top-level column the reader reads, with its leaves' cursors

// Reads Rows from one Parquet file, as sparktorch-formats(7), PARQUET, says: the
// features from the top-level columns `format.features_field` names (comma-separated: a Spark
// ML vector, an array of numbers or a number each, joined in order), the label from
// `format.label_field` (a number, an array or a vector), the id from `format.id_field` (a string
// or an integer). Decodes a page of each column it reads at a time (ParquetFile::OpenColumn),
// not a row group's columns. Not thread-safe.
class ParquetRowReader {
 public:
  // Opens `path` to read its rows [first_row, end_row) (0-based, in the file's order; end_row
  // past the end means to the end). `num_features`: the features a row must have, 0 to learn
  // it from the first row. Throws InputError for a file it cannot read, and for columns that
  // are missing or of a kind it cannot use (naming them and the file's columns).
  ParquetRowReader(const std::string& path, const RowFormat& format, int64_t num_features,
                   int64_t first_row = 0, int64_t end_row = INT64_MAX);
  ~ParquetRowReader();

  // Reads the next row into *row. Returns false after the last. Throws RowError for a bad row
  // (a null cell, the wrong number of features, a NaN without allow_nan), after which Next
  // goes on with the row after it; InputError for a corrupt file.
  bool Next(Row* row);

  // Throws InputError when a row group's chunk of a column it reads is compressed or encoded
  // in a way this reader does not read, as the footer says (no page is read).
  void CheckColumns() const;

  // A column it reads: `role` "features", "label" or "id"; `kind` "vector" (a Spark ML
  // vector), "array", "number" or "text".
  struct Column {
    std::string role, name, kind;
  };
  // The columns it reads: the features' in order, then the label's and the id's when read.
  std::vector<Column> columns() const;

  // The 1-based number, in the file, of the row Next last returned or rejected.
  int64_t row_number() const { return row_ + 1; }
  // Features per row: the caller's, or learnt from the first row; 0 before.
  int64_t num_features() const { return num_features_; }
  const std::string& path() const { return file_.path(); }
  const ParquetFile& file() const { return file_; }

  // What a selected column is for: the rows' features, their label or their id.
  enum class ColumnRole { kFeatures, kLabel, kId };

 private:
  std::unique_ptr<SelectedColumn> Select(const std::string& name, ColumnRole role);
  void LoadRowGroup(size_t group);
  // Moves every selected column past one row, into its cursors' scratch when `keep`.
  void TakeRow(bool keep);

  ParquetFile file_;
  RowFormat format_;
  int64_t num_features_;
  std::vector<std::unique_ptr<SelectedColumn>> features_;
  std::unique_ptr<SelectedColumn> label_;
  std::unique_ptr<SelectedColumn> id_;
  int64_t row_ = -1;        // the file's row last taken
  int64_t end_row_;
  size_t group_ = 0;        // the row group loaded
  int64_t group_end_ = 0;   // the file's row after the loaded group's last; 0 before any
  bool loaded_ = false;
};

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_PARQUET_ROWS_H_
