#ifndef SPARKTORCH_FORMATS_CSV_PARSER_H_
#define SPARKTORCH_FORMATS_CSV_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "formats/row.h"
#include "formats/row_format.h"
#include "formats/row_parser.h"

namespace sparktorch {

// Where the label sits among the columns of a csv or compact row (RowFormat's label, label_col
// and label_count), which column counts a row may have, and the number of features, learnt from
// the first row when the format leaves it 0. Columns are numbered 0-based in the row as written,
// the id column included; a negative label_col counts from the end of each row.
class ColumnLayout {
 public:
  // `format_name` ("csv") and `unit` ("columns", "values") are for messages. `id_col`: the
  // rows' id column (csv's RowFormat::id_col), which counts as a column but is no feature.
  // Throws UsageError for a layout that cannot work: label_count below 1, an optional label
  // without num_features, label or id columns outside rows of a known number of columns, label
  // columns that include the id column.
  ColumnLayout(const RowFormat& format, const char* format_name, const char* unit,
               std::optional<int64_t> id_col);

  // Splits a parsed row. On entry row->features holds the row's numeric columns in order (the
  // id column left out), `columns` counts all of them, the id column included, and
  // `id_column` is where the id column was (0 <= id_column < columns), or -1 without one.
  // Checks the count, then moves the label columns, when the row has them, out of
  // row->features into row->label. Throws RowError (column 0) when the row has the wrong
  // number of columns or its label columns fall outside it or include the id column.
  void Split(int64_t columns, int64_t id_column, Row* row);

  // Whether a row of `columns` columns (the id column included) has its label. Throws RowError
  // (column 0) when no row may have that many columns.
  bool CheckCount(int64_t columns) const;

  int64_t num_features() const { return num_features_; }

 private:
  void CheckIdColumn(std::optional<int64_t> id_col) const;
  [[noreturn]] void ThrowWrongCount(int64_t columns) const;

  int64_t num_features_;
  LabelPresence label_;
  int64_t label_col_;
  int64_t label_count_;
  int64_t id_columns_;  // 1 with an id column, else 0
  const char* unit_;
};

// Rows of delimiter-separated numbers: "5,0,0.25,1". Spaces and tabs around a field are
// ignored (unless one is the delimiter); quoting is not supported. The label is
// ColumnLayout's; the id column (RowFormat::id_col, negative counting from the end) is taken
// as it is written into Row::id.
class CsvParser : public RowParser {
 public:
  // Throws UsageError for a format that cannot work (see ColumnLayout), or a delimiter that
  // could be part of a number, a quote or a line end.
  explicit CsvParser(const RowFormat& format);

  void Parse(std::string_view line, Row* row) override;
  int64_t num_features() const override { return layout_.num_features(); }

 private:
  bool IsBlank(char c) const { return c == blank_a_ || c == blank_b_; }
  const char* FindDelimiter(const char* p, const char* end) const;
  const char* SkipBlanks(const char* begin, const char* end) const;
  const char* TrimEnd(const char* begin, const char* end) const;
  // The slow path: trims the field, then parses it or throws RowError.
  float ParseField(const char* field, const char* field_end, const char* line_begin) const;

  ColumnLayout layout_;
  char delimiter_;
  char blank_a_;  // the characters trimmed around fields: space and tab, less the delimiter
  char blank_b_;
  std::optional<int64_t> id_col_;
  bool allow_nan_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_CSV_PARSER_H_
