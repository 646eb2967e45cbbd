#ifndef SPARKTORCH_FORMATS_ROW_PARSER_H_
#define SPARKTORCH_FORMATS_ROW_PARSER_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "formats/row.h"
#include "formats/row_format.h"

namespace sparktorch {

// Turns one line of text into a Row. One parser per input stream; not thread-safe.
class RowParser {
 public:
  virtual ~RowParser() = default;

  // Parses `line` (without its newline) into *row, replacing what it held and reusing its
  // capacity. Throws RowError naming what was expected and what was found, for example
  // "expected 784 features, got 12" or, with a column, "expected a number, got \"abc\"".
  // NaN and Inf values are rejected unless the format allows them.
  virtual void Parse(std::string_view line, Row* row) = 0;

  // The number of features per row: the format's, or learnt from the first row; 0 until known.
  virtual int64_t num_features() const = 0;
};

// Returns the parser for `format.kind`. Throws UsageError for a format that cannot work (a
// libsvm format without num_features, a label range that overlaps the id column).
std::unique_ptr<RowParser> MakeRowParser(const RowFormat& format);

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_ROW_PARSER_H_
