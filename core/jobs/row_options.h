#ifndef SPARKTORCH_CORE_JOBS_ROW_OPTIONS_H_
#define SPARKTORCH_CORE_JOBS_ROW_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/enum_names.h"

namespace sparktorch {

// --on-bad-row: fail on the first bad row, or skip (and count) bad rows.
enum class OnBadRow { kFail, kSkip };
inline constexpr Named<OnBadRow> kOnBadRowNames[] = {{OnBadRow::kFail, "fail"},
                                                      {OnBadRow::kSkip, "skip"}};

// The rows of `train`, `predict` and `inspect` as their Rows flags give them, unparsed (the man
// page gives each flag's meaning). What is unset comes from the model's manifest, the data or
// the format's defaults; core/jobs/row_plan.h turns it into the reader's options.
struct RowOptions {
  std::vector<std::string> inputs;  // files, globs or directories; empty: stdin
  std::optional<std::string> format;  // csv, libsvm, vector, jsonl, compact, parquet
  std::optional<int64_t> num_features;
  std::optional<std::string> label_col;  // "N", or "N:M" for several label columns
  bool no_label = false;
  std::optional<int64_t> id_col;
  std::optional<std::string> delimiter;  // one character, or "tab"
  std::optional<bool> header, zero_based, allow_nan;
  std::optional<std::string> features_field, label_field, id_field;
  std::string input_shape;  // "1,28,28"; empty: the model's, else from the rows
  OnBadRow on_bad_row = OnBadRow::kFail;
  size_t max_line_bytes = 64 << 20;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_ROW_OPTIONS_H_
