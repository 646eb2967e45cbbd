#include "core/jobs/row_plan.h"

#include <charconv>

#include "formats/error.h"
#include "formats/row_format.h"

namespace sparktorch {
namespace {

int64_t ParseInt(const std::string& text, const std::string& flag) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw UsageError(flag + ": expected an integer, got \"" + text + "\"");
  }
  return value;
}

}  // namespace

RowFormatOverrides FormatOverrides(const RowOptions& r) {
  RowFormatOverrides o;
  if (r.format) o.kind = ParseRowFormatKind(*r.format);
  if (r.num_features) o.num_features = *r.num_features;
  if (r.no_label) o.label = LabelPresence::kNone;
  if (r.label_col) {
    if (r.no_label) throw UsageError("--label-col and --no-label contradict each other");
    const std::string& text = *r.label_col;
    size_t colon = text.find(':');
    if (colon == std::string::npos) {
      o.label_col = ParseInt(text, "--label-col");
      o.label_count = 1;
    } else {
      int64_t first = ParseInt(text.substr(0, colon), "--label-col");
      int64_t last = ParseInt(text.substr(colon + 1), "--label-col");
      if ((first < 0) != (last < 0) || last < first) {
        throw UsageError("--label-col " + text +
                         ": expected N:M with N <= M, both from the start or both from the end");
      }
      o.label_col = first;
      o.label_count = last - first + 1;
    }
  }
  if (r.id_col) o.id_col = *r.id_col;
  if (r.delimiter) {
    const std::string& given = *r.delimiter;
    std::string d = given == "tab" || given == "\\t" ? "\t" : given;
    if (d.size() != 1) throw UsageError("--delimiter must be one character, got \"" + given + "\"");
    o.delimiter = d[0];
  }
  if (r.header) o.header = *r.header;
  if (r.zero_based) o.zero_based = *r.zero_based;
  if (r.features_field) o.features_field = *r.features_field;
  if (r.label_field) o.label_field = *r.label_field;
  if (r.id_field) o.id_field = *r.id_field;
  if (r.allow_nan) o.allow_nan = *r.allow_nan;
  return o;
}

BadRowPolicy BadRowPolicyOf(const RowOptions& rows) {
  return rows.on_bad_row == OnBadRow::kSkip ? BadRowPolicy::kSkip : BadRowPolicy::kFail;
}

RowSourceOptions ReaderOptions(const RowOptions& rows) {
  RowSourceOptions options;
  options.format = ApplyOverrides(RowFormat(), FormatOverrides(rows));
  options.on_bad_row = BadRowPolicyOf(rows);
  options.max_line_bytes = rows.max_line_bytes;
  return options;
}

std::vector<int64_t> ParseShape(const std::string& text, const char* flag) {
  std::vector<int64_t> shape;
  if (text.empty()) return shape;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t d = ParseInt(part, flag);
    if (d < 1) throw UsageError(std::string(flag) + ": dimensions must be positive, got " + text);
    shape.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return shape;
}

}  // namespace sparktorch
