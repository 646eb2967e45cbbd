#ifndef SPARKTORCH_FORMATS_VECTOR_PARSER_H_
#define SPARKTORCH_FORMATS_VECTOR_PARSER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "formats/row.h"
#include "formats/row_format.h"
#include "formats/row_parser.h"

namespace sparktorch {

// Spark ML vectors as PySpark's str() and Scala's toString print them: dense "[0.0,1.5,-2.0]"
// and sparse "(784,[3,10],[0.5,0.25])" (size, ascending 0-based indices, values). A line is
// "LABEL,VECTOR" or "LABEL VECTOR", optionally in parentheses as LabeledPoint prints it:
// "(1.0,[0.0,1.5])". LABEL is a number or a vector, dense or sparse ("(2,[0],[1.0]),[0.5,1.0]":
// a sparse label is densified to its size). Without a label the line is just VECTOR; with an
// optional label, a line that is just a vector (a sparse one included) has none.
class VectorParser : public RowParser {
 public:
  explicit VectorParser(const RowFormat& format);

  void Parse(std::string_view line, Row* row) override;
  int64_t num_features() const override { return num_features_; }

 private:
  int64_t num_features_;
  LabelPresence label_;
  bool allow_nan_;
  std::vector<int64_t> indices_;  // a sparse vector's, kept for its capacity
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_VECTOR_PARSER_H_
