#ifndef SPARKTORCH_TESTS_FORMATS_ROW_PARSER_TESTING_H_
#define SPARKTORCH_TESTS_FORMATS_ROW_PARSER_TESTING_H_

// What the row parser tests share: parsing one line, and a parser's complaint as text.

#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"
#include "formats/row.h"
#include "formats/row_parser.h"

namespace sparktorch {

using Floats = std::vector<float>;

// The row a fresh parser for `format` makes of `line`; throws what the parser throws.
inline Row ParseOne(const RowFormat& format, std::string_view line) {
  Row row;
  MakeRowParser(format)->Parse(line, &row);
  return row;
}

// "COLUMN: message" of the RowError that `line` raises, or "no error".
inline std::string ErrorOf(RowParser* parser, std::string_view line) {
  Row row;
  try {
    parser->Parse(line, &row);
  } catch (const RowError& e) {
    return std::to_string(e.column()) + ": " + e.what();
  }
  return "no error";
}

inline std::string ErrorOf(const RowFormat& format, std::string_view line) {
  return ErrorOf(MakeRowParser(format).get(), line);
}

}  // namespace sparktorch

#endif  // SPARKTORCH_TESTS_FORMATS_ROW_PARSER_TESTING_H_
