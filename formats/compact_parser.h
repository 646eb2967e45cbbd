#ifndef SPARKTORCH_FORMATS_COMPACT_PARSER_H_
#define SPARKTORCH_FORMATS_COMPACT_PARSER_H_

#include <cstdint>
#include <string_view>

#include "formats/csv_parser.h"
#include "formats/row.h"
#include "formats/row_format.h"
#include "formats/row_parser.h"

namespace sparktorch {

// The compact row format: "[ID<TAB>]BASE64", where BASE64 is standard padded base64 of the
// row's values as little-endian IEEE-754 float32, label columns included where label_col and
// label_count say, exactly as csv columns. Python writes a line with the standard library:
//   base64.b64encode(struct.pack('<%df' % len(values), *values)).decode()
// Values are decoded straight into the row, never parsed as text.
class CompactParser : public RowParser {
 public:
  // Throws UsageError for a layout that cannot work (see ColumnLayout; id_col is not used:
  // the id is the text before the tab).
  explicit CompactParser(const RowFormat& format);

  void Parse(std::string_view line, Row* row) override;
  int64_t num_features() const override { return layout_.num_features(); }

 private:
  ColumnLayout layout_;
  bool allow_nan_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_COMPACT_PARSER_H_
