#ifndef SPARKTORCH_CORE_DATA_PARQUET_SOURCE_H_
#define SPARKTORCH_CORE_DATA_PARQUET_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/row.h"
#include "formats/row_format.h"

namespace sparktorch {
namespace parquet {
class ParquetRowReader;
}

// The rows of Parquet inputs (`--format parquet`), for RowSource. An input is a Parquet file or
// a directory of them as Spark writes a DataFrame (the files in it, sorted, but for the hidden
// ones whose names start with '_' or '.': _SUCCESS, .crc files). Standard input cannot be read:
// Parquet's metadata is at the end of a file. Not thread-safe.
class ParquetSource {
 public:
  // Lists the files of `inputs`. With share_world > 1 it reads their footers first: this reader
  // takes the share_rank-th of share_world contiguous ranges of all the files' rows (counted from
  // the footers, so that the shares differ by at most one row). Throws UsageError for stdin and
  // InputError for an input that is missing, empty, or not Parquet.
  ParquetSource(const std::vector<std::string>& inputs, const RowFormat& format, int share_rank,
                int share_world);
  ~ParquetSource();

  // The Parquet files `inputs` stand for, in the order this source reads them. Throws as the
  // constructor does for stdin and for an input it cannot list.
  static std::vector<std::string> Files(const std::vector<std::string>& inputs);

  // Reads the next row into *row. Returns false after the last. Throws RowError for a bad row
  // (where() names it; Next then goes on after it) and InputError for an unreadable file.
  bool Next(Row* row);

  // "FILE: row N" of the row Next last returned or rejected.
  std::string where() const;
  // Features per row, from the format or the first row; 0 before.
  int64_t num_features() const { return num_features_; }

 private:
  struct Part {
    std::string path;
    int64_t first_row;  // this reader's rows of the file: [first_row, end_row)
    int64_t end_row;
  };

  RowFormat format_;
  std::vector<Part> parts_;
  size_t next_part_ = 0;
  std::unique_ptr<parquet::ParquetRowReader> reader_;
  int64_t num_features_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DATA_PARQUET_SOURCE_H_
