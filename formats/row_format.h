#ifndef SPARKTORCH_FORMATS_ROW_FORMAT_H_
#define SPARKTORCH_FORMATS_ROW_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparktorch {

// kParquet is not a line format: core/data/parquet_source reads it, not a RowParser. kFloat32 is
// not one either: its records (formats/float32_records.h) take the place of lines.
enum class RowFormatKind { kCsv, kLibsvm, kVector, kJsonl, kCompact, kParquet, kFloat32 };

// Whether rows carry a label.
//   kRequired: every row has one (training with a label).
//   kNone:     no row has one (--no-label: the target is the input; or prediction input).
//   kOptional: each row may or may not (prediction input); dense formats decide by the number of
//              columns, which needs num_features to be known.
enum class LabelPresence { kRequired, kNone, kOptional };

// Everything a parser needs to know about the rows it reads. Plain data; see the man page for
// the meaning of each field as a flag.
struct RowFormat {
  RowFormatKind kind = RowFormatKind::kCsv;

  // Number of features per row. 0: learn it from the first row (dense formats; sparse rows
  // carry their own size). libsvm rows need it set.
  int64_t num_features = 0;

  LabelPresence label = LabelPresence::kRequired;
  // Column formats (csv, compact): the label is `label_count` consecutive columns starting at
  // `label_col`; a negative label_col counts from the end (-1 = last column). label_count > 1
  // makes a vector label.
  int64_t label_col = 0;
  int64_t label_count = 1;
  // csv: the column holding a row id, taken out of the features. Unset: none.
  std::optional<int64_t> id_col;

  char delimiter = ',';   // csv
  bool header = false;    // csv: the first line of each input is a header (the row source skips it)
  bool zero_based = false;  // libsvm: indices start at 0 instead of 1

  // jsonl: the fields; parquet: the top-level columns (features_field: one or more, comma-
  // separated, joined in order).
  std::string features_field = "features";
  std::string label_field = "label";
  std::string id_field;  // empty: none

  bool allow_nan = false;  // accept nan and inf values instead of rejecting the row
};

// "csv", "libsvm", "vector", "jsonl", "compact", "parquet", "float32". Returns nullopt for an unknown name.
std::optional<RowFormatKind> ParseRowFormatKind(std::string_view name);
const char* RowFormatKindName(RowFormatKind kind);

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_ROW_FORMAT_H_
