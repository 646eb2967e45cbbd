#ifndef SPARKTORCH_FORMATS_ROW_FORMAT_OVERRIDES_H_
#define SPARKTORCH_FORMATS_ROW_FORMAT_OVERRIDES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "formats/row_format.h"

namespace sparktorch {

// The row-format settings given on a command line, each unset when not given, so that they can
// be laid over a base: the defaults when training, a model's manifest when predicting.
struct RowFormatOverrides {
  std::optional<RowFormatKind> kind;
  std::optional<int64_t> num_features;
  std::optional<LabelPresence> label;
  std::optional<int64_t> label_col;
  std::optional<int64_t> label_count;
  std::optional<int64_t> id_col;
  std::optional<char> delimiter;
  std::optional<bool> header;
  std::optional<bool> zero_based;
  std::optional<std::string> features_field;
  std::optional<std::string> label_field;
  std::optional<std::string> id_field;
  std::optional<bool> allow_nan;
};

// `base` with every set field of `overrides` replacing its own.
RowFormat ApplyOverrides(RowFormat base, const RowFormatOverrides& overrides);

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_ROW_FORMAT_OVERRIDES_H_
