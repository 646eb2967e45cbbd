#include "cli/row_format_flags.h"

#include <charconv>

#include "formats/error.h"

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

void AddRowFormatFlags(CLI::App* c, RowFormatFlags* f) {
  c->add_option("--input,-i", f->inputs,
                "Input files or globs (gzip read transparently; parquet: files or directories); default: stdin")
      ->group("Rows");
  f->format_opt = c->add_option("--format", f->format,
                                "Row format: csv (default), libsvm, vector, jsonl, compact, parquet")
                      ->check(CLI::IsMember({"csv", "libsvm", "vector", "jsonl", "compact", "parquet"}))
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
  c->add_option("--on-bad-row", f->on_bad_row, "fail (default) or skip (and count) bad rows")
      ->check(CLI::IsMember({"fail", "skip"}))
      ->group("Rows");
  c->add_option("--max-line-bytes", f->max_line_bytes,
                "Longest line accepted (default 67108864)")
      ->check(CLI::PositiveNumber)
      ->group("Rows");
}

RowFormatOverrides ToOverrides(const RowFormatFlags& f) {
  RowFormatOverrides o;
  if (f.format_opt->count()) o.kind = ParseRowFormatKind(f.format);
  if (f.num_features_opt->count()) o.num_features = f.num_features;
  if (f.no_label_opt->count() && f.no_label) o.label = LabelPresence::kNone;
  if (f.label_col_opt->count()) {
    if (f.no_label) throw UsageError("--label-col and --no-label contradict each other");
    size_t colon = f.label_col.find(':');
    if (colon == std::string::npos) {
      o.label_col = ParseInt(f.label_col, "--label-col");
      o.label_count = 1;
    } else {
      int64_t first = ParseInt(f.label_col.substr(0, colon), "--label-col");
      int64_t last = ParseInt(f.label_col.substr(colon + 1), "--label-col");
      if ((first < 0) != (last < 0) || last < first) {
        throw UsageError("--label-col " + f.label_col +
                         ": expected N:M with N <= M, both from the start or both from the end");
      }
      o.label_col = first;
      o.label_count = last - first + 1;
    }
  }
  if (f.id_col_opt->count()) o.id_col = f.id_col;
  if (f.delimiter_opt->count()) {
    std::string d = f.delimiter == "tab" || f.delimiter == "\\t" ? "\t" : f.delimiter;
    if (d.size() != 1) throw UsageError("--delimiter must be one character, got \"" + f.delimiter + "\"");
    o.delimiter = d[0];
  }
  if (f.header_opt->count()) o.header = f.header;
  if (f.zero_based_opt->count()) o.zero_based = f.zero_based;
  if (f.features_field_opt->count()) o.features_field = f.features_field;
  if (f.label_field_opt->count()) o.label_field = f.label_field;
  if (f.id_field_opt->count()) o.id_field = f.id_field;
  if (f.allow_nan_opt->count()) o.allow_nan = f.allow_nan;
  return o;
}

BadRowPolicy ToBadRowPolicy(const RowFormatFlags& f) {
  return f.on_bad_row == "skip" ? BadRowPolicy::kSkip : BadRowPolicy::kFail;
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
