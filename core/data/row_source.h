#ifndef SPARKTORCH_CORE_DATA_ROW_SOURCE_H_
#define SPARKTORCH_CORE_DATA_ROW_SOURCE_H_

#include <cstdint>
#include <climits>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/data/parquet_source.h"
#include "formats/error.h"
#include "formats/float32_records.h"
#include "formats/line_reader.h"
#include "formats/row.h"
#include "formats/row_format.h"
#include "formats/row_parser.h"

namespace sparktorch {

enum class BadRowPolicy { kFail, kSkip };

struct RowSourceOptions {
  RowFormat format;
  BadRowPolicy on_bad_row = BadRowPolicy::kFail;
  size_t max_line_bytes = 64 << 20;
  // This reader's share of the inputs, for ranks that were all given the same files: with at
  // least as many files as ranks, every share_world-th file from the share_rank-th; with fewer,
  // the share_rank-th of share_world contiguous line ranges over all the inputs' data lines.
  // Parquet inputs: the share_rank-th of share_world contiguous ranges of all their rows.
  // Stdin is never shared.
  int share_rank = 0;
  int share_world = 1;
  // Not empty: a line equal to it (float32 records: a group end record) ends a group of rows (Next returns false with group_ended()
  // true, and reading goes on at the next call); messages number lines from the group's
  // first; stdin is read as its bytes arrive.
  std::string group_end;
};

// A check of a parsed row beyond its syntax, such as a label in range for the loss. Returns an
// empty string for a good row, else what is wrong ("label 10 out of range 0..9 for ...").
using RowCheck = std::function<std::string(const Row&)>;

// Reads rows from a list of inputs (files or stdin) in order, with one parser (Parquet files:
// with a ParquetSource), applying the bad-row policy. Under kFail a bad row throws InputError
// "SOURCE:LINE[:COLUMN]: what is wrong" ("FILE: row N: what is wrong" for Parquet, "SOURCE:
// record N: what is wrong" for float32 records); under
// kSkip it is counted, the first few are logged, and reading goes on. Not thread-safe.
class RowSource {
 public:
  // `inputs` as returned by ExpandInputPaths. Throws UsageError when the format cannot work.
  RowSource(std::vector<std::string> inputs, RowSourceOptions options, RowCheck check = nullptr);
  ~RowSource();

  // Reads the next good row into *row. Returns false at the end of the last input, or at the
  // end of a group (group_ended()).
  bool Next(Row* row);
  // Whether the last Next returned false at a group_end line rather than at the end.
  bool group_ended() const { return group_ended_; }

  int64_t rows_read() const { return rows_read_; }
  int64_t rows_skipped() const { return rows_skipped_; }
  // Features per row: from the format, or learnt from the first row; 0 before any row.
  int64_t num_features() const {
    return parquet_ ? parquet_->num_features() : parser_->num_features();
  }

 private:
  bool OpenNextInput();
  // Applies the share options: drops other ranks' files, or sets the line range.
  void TakeShare();
  // Throws under kFail; counts and logs under kSkip. `where` names the row ("FILE:LINE:").
  void Reject(const std::string& where, const std::string& what,
              RowSetting setting = RowSetting::kNone);
  // Where the line reader is: "NAME:LINE:" and "COLUMN:" when column > 0.
  std::string LineWhere(size_t column) const;
  bool NextParquet(Row* row);
  // The next line (or float32 record) into *line; false at the end of the inputs, of this
  // reader's share, or of a group (group_ended_ set).
  bool NextLine(std::string_view* line);
  // Parses *line into *row and checks it; false (counted or thrown) for a bad row.
  bool ParseLine(std::string_view line, Row* row);
  // Data lines (or records) in `path`, for TakeShare.
  int64_t CountDataLines(const std::string& path) const;

  std::vector<std::string> inputs_;
  size_t next_input_ = 0;
  RowSourceOptions options_;
  RowCheck check_;
  std::unique_ptr<RowParser> parser_;
  std::unique_ptr<LineReader> reader_;
  std::unique_ptr<Float32RecordReader> records_;  // --format float32, instead of reader_
  std::unique_ptr<ParquetSource> parquet_;  // --format parquet, instead of parser_ and reader_
  int64_t rows_read_ = 0;
  int64_t rows_skipped_ = 0;
  bool group_ended_ = false;
  size_t group_line_base_ = 0;  // the line number of the last group's end line
  // Data lines (not headers) seen so far across the inputs, and this reader's range of them.
  int64_t line_index_ = 0;
  int64_t first_line_ = 0;
  int64_t end_line_ = INT64_MAX;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DATA_ROW_SOURCE_H_
