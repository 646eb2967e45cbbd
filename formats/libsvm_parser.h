#ifndef SPARKTORCH_FORMATS_LIBSVM_PARSER_H_
#define SPARKTORCH_FORMATS_LIBSVM_PARSER_H_

#include <cstdint>
#include <string_view>

#include "formats/row.h"
#include "formats/row_format.h"
#include "formats/row_parser.h"

namespace sparktorch {

// libsvm rows: "LABEL INDEX:VALUE INDEX:VALUE ... [# comment]", separated by spaces or tabs.
// Indices are 1-based (0-based with RowFormat::zero_based) and strictly ascending; features not
// listed are 0. The label is one number; with an optional label, the first token is the label
// when it has no ':'.
class LibsvmParser : public RowParser {
 public:
  // Throws UsageError when format.num_features is not set: libsvm rows do not say it.
  explicit LibsvmParser(const RowFormat& format);

  void Parse(std::string_view line, Row* row) override;
  int64_t num_features() const override { return num_features_; }

 private:
  int64_t num_features_;
  LabelPresence label_;
  int64_t first_index_;  // 0 or 1
  bool allow_nan_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_LIBSVM_PARSER_H_
