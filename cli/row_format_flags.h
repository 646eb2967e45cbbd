#ifndef SPARKTORCH_CLI_ROW_FORMAT_FLAGS_H_
#define SPARKTORCH_CLI_ROW_FORMAT_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/jobs/row_options.h"

namespace sparktorch {

// The flags that say where rows come from and how to read them, shared by train and predict.
struct RowFormatFlags {
  std::vector<std::string> inputs;
  std::string format, label_col, delimiter, features_field, label_field, id_field, input_shape;
  int64_t num_features = 0, id_col = 0;
  // The defaults are RowOptions' own (core/jobs/row_options.h).
  OnBadRow on_bad_row = RowOptions().on_bad_row;
  size_t max_line_bytes = RowOptions().max_line_bytes;
  bool no_label = false, header = false, zero_based = false, allow_nan = false;

  // Options as registered, to tell which were given.
  CLI::Option *format_opt, *label_col_opt, *delimiter_opt, *features_field_opt, *label_field_opt,
      *id_field_opt, *num_features_opt, *id_col_opt, *no_label_opt, *header_opt, *zero_based_opt,
      *allow_nan_opt;
};

// Registers the row flags on `command`; values land in *flags, which must outlive parsing.
void AddRowFormatFlags(CLI::App* command, RowFormatFlags* flags);

// The rows as the flags give them; what was not given stays unset.
RowOptions ToRowOptions(const RowFormatFlags& flags);

}  // namespace sparktorch

#endif  // SPARKTORCH_CLI_ROW_FORMAT_FLAGS_H_
