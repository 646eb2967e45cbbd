#ifndef SPARKTORCH_FORMATS_JSONL_PARSER_H_
#define SPARKTORCH_FORMATS_JSONL_PARSER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "formats/row.h"
#include "formats/row_format.h"
#include "formats/row_parser.h"

namespace sparktorch {

// One JSON object per line, as Spark's df.toJSON() writes it. The features field is an array
// of numbers or a Spark ML vector: {"type":1,"values":[...]} (dense) or
// {"type":0,"size":N,"indices":[...],"values":[...]} (sparse). The label field is a number, an
// array of numbers or a vector; absent or null means no label (an error when it is required).
// The id field, when the format names one, is a string or an integer, kept as text.
class JsonlParser : public RowParser {
 public:
  // Throws UsageError when the format leaves the features field, or a needed label field,
  // unnamed.
  explicit JsonlParser(const RowFormat& format);

  void Parse(std::string_view line, Row* row) override;
  int64_t num_features() const override { return num_features_; }

 private:
  int64_t num_features_;
  LabelPresence label_;
  std::string features_field_;
  std::string label_field_;
  std::string id_field_;
  bool allow_nan_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_JSONL_PARSER_H_
