#include "cli/row_format_flags.h"

#include "cli/commands.h"

namespace sparktorch {

void AddRowFormatFlags(CLI::App* c, RowFormatFlags* f) {
  c->add_option("--input,-i", f->inputs,
                "Input files or globs (gzip read transparently; parquet: files or directories); default: stdin")
      ->group("Rows");
  f->format_opt = c->add_option("--format", f->format,
                                "Row format: csv (default), libsvm, vector, jsonl, compact, parquet, float32")
                      ->check(CLI::IsMember(
                          {"csv", "libsvm", "vector", "jsonl", "compact", "parquet", "float32"}))
                      ->group("Rows");
  f->num_features_opt =
      c->add_option("--num-features", f->num_features, "Features per row (default: from the data)")
          ->check(CLI::PositiveNumber)
          ->group("Rows");
  c->add_option("--input-shape", f->input_shape,
                "Shape of one row for the model, e.g. 1,28,28 (default: flat)")
      ->group("Rows");
  f->label_col_opt = c->add_option("--label-col", f->label_col,
                                   "Label column N, or N:M (inclusive) for a vector label; "
                                   "negative counts from the end (default 0)")
                         ->group("Rows");
  f->no_label_opt =
      c->add_flag("--no-label", f->no_label, "Rows have no label (training: the target is the input)")
          ->group("Rows");
  f->id_col_opt = c->add_option("--id-col", f->id_col, "csv: column holding a row id")->group("Rows");
  f->delimiter_opt =
      c->add_option("--delimiter", f->delimiter, "csv: field separator (default ','; 'tab' for a tab)")
          ->group("Rows");
  f->header_opt = c->add_flag("--header", f->header, "csv: skip the first line of each input")
                      ->group("Rows");
  f->zero_based_opt =
      c->add_flag("--zero-based", f->zero_based, "libsvm: indices start at 0")->group("Rows");
  f->features_field_opt =
      c->add_option("--features-field", f->features_field,
                    "jsonl: features field; parquet: column(s), comma-separated (default features)")
          ->group("Rows");
  f->label_field_opt = c->add_option("--label-field", f->label_field,
                                     "jsonl, parquet: label field (default label)")
                           ->group("Rows");
  f->id_field_opt =
      c->add_option("--id-field", f->id_field, "jsonl, parquet: id field (default: none)")->group("Rows");
  f->allow_nan_opt =
      c->add_flag("--allow-nan", f->allow_nan, "Accept NaN and Inf values")->group("Rows");
  AddEnumOption(c, "--on-bad-row", &f->on_bad_row, kOnBadRowNames,
                "fail on the first bad row, or skip (and count) bad rows (" +
                    DefaultIs(NameIn(kOnBadRowNames, f->on_bad_row)) + ")")
      ->group("Rows");
  c->add_option("--max-line-bytes", f->max_line_bytes,
                "Longest line accepted (" + DefaultIs(f->max_line_bytes) + ")")
      ->check(CLI::PositiveNumber)
      ->group("Rows");
}

RowOptions ToRowOptions(const RowFormatFlags& f) {
  RowOptions r;
  r.inputs = f.inputs;
  if (f.format_opt->count()) r.format = f.format;
  if (f.num_features_opt->count()) r.num_features = f.num_features;
  if (f.label_col_opt->count()) r.label_col = f.label_col;
  r.no_label = f.no_label_opt->count() && f.no_label;
  if (f.id_col_opt->count()) r.id_col = f.id_col;
  if (f.delimiter_opt->count()) r.delimiter = f.delimiter;
  if (f.header_opt->count()) r.header = f.header;
  if (f.zero_based_opt->count()) r.zero_based = f.zero_based;
  if (f.features_field_opt->count()) r.features_field = f.features_field;
  if (f.label_field_opt->count()) r.label_field = f.label_field;
  if (f.id_field_opt->count()) r.id_field = f.id_field;
  if (f.allow_nan_opt->count()) r.allow_nan = f.allow_nan;
  r.input_shape = f.input_shape;
  r.on_bad_row = f.on_bad_row;
  r.max_line_bytes = f.max_line_bytes;
  return r;
}

}  // namespace sparktorch
