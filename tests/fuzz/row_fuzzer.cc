// libFuzzer target for the row parsers (formats/row_parser.h): the text a Spark partition
// pipes into sparktorch, and the same bytes as float32 records (formats/float32_records.h).
//
// The input is split into lines as the row source splits it, and every line is given, in order,
// to one parser per format setting below, so that parsers that learn the number of features
// from their first row keep that state across rows. A RowError is the
// parsers' one way to refuse a row; anything else that escapes Parse is a finding. A row that
// parses must keep the promises of formats/row.h and row_parser.h.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"
#include "formats/float32_records.h"
#include "formats/line_reader.h"
#include "formats/row.h"
#include "formats/row_format.h"
#include "formats/row_parser.h"

namespace {

using sparktorch::LabelPresence;
using sparktorch::RowFormat;
using sparktorch::RowFormatKind;

RowFormat Format(RowFormatKind kind, LabelPresence label, int64_t num_features = 0) {
  RowFormat format;
  format.kind = kind;
  format.label = label;
  format.num_features = num_features;
  return format;
}

// Every format, with and without a label, and the settings that change how a row is split.
std::vector<RowFormat> Formats() {
  constexpr auto kRequired = LabelPresence::kRequired;
  constexpr auto kNone = LabelPresence::kNone;
  constexpr auto kOptional = LabelPresence::kOptional;
  std::vector<RowFormat> formats;
  for (RowFormatKind kind : {RowFormatKind::kCsv, RowFormatKind::kVector, RowFormatKind::kJsonl,
                             RowFormatKind::kCompact}) {
    formats.push_back(Format(kind, kRequired));
    formats.push_back(Format(kind, kNone));
    // Column formats tell an optional label by the number of columns, so they need the count.
    const bool columns = kind == RowFormatKind::kCsv || kind == RowFormatKind::kCompact;
    formats.push_back(Format(kind, kOptional, columns ? 3 : 0));
  }
  RowFormat f = Format(RowFormatKind::kCsv, kRequired);
  f.label_col = -2;
  f.label_count = 2;
  f.id_col = 0;
  f.delimiter = ';';
  formats.push_back(f);
  f = Format(RowFormatKind::kCsv, kNone);
  f.id_col = -1;
  f.delimiter = '\t';
  f.allow_nan = true;
  formats.push_back(f);
  f = Format(RowFormatKind::kCsv, kOptional, 3);
  f.label_col = 1;
  f.id_col = 0;
  formats.push_back(f);

  formats.push_back(Format(RowFormatKind::kLibsvm, kRequired, 8));
  formats.push_back(Format(RowFormatKind::kLibsvm, kNone, 8));
  f = Format(RowFormatKind::kLibsvm, kOptional, 8);
  f.zero_based = true;
  f.allow_nan = true;
  formats.push_back(f);

  f = Format(RowFormatKind::kVector, kRequired, 3);
  f.allow_nan = true;
  formats.push_back(f);

  f = Format(RowFormatKind::kJsonl, kOptional);
  f.id_field = "id";
  f.allow_nan = true;
  formats.push_back(f);
  f = Format(RowFormatKind::kJsonl, kRequired, 3);
  f.features_field = "x";
  f.label_field = "y";
  formats.push_back(f);

  f = Format(RowFormatKind::kCompact, kRequired);
  f.label_col = -2;
  f.label_count = 2;
  f.allow_nan = true;
  formats.push_back(f);
  return formats;
}

// The float32 record format, as the row source reads it: records, not lines.
std::vector<RowFormat> RecordFormats() {
  std::vector<RowFormat> formats = {Format(RowFormatKind::kFloat32, LabelPresence::kRequired),
                                    Format(RowFormatKind::kFloat32, LabelPresence::kNone),
                                    Format(RowFormatKind::kFloat32, LabelPresence::kOptional, 3)};
  RowFormat f = Format(RowFormatKind::kFloat32, LabelPresence::kRequired);
  f.label_col = -2;
  f.label_count = 2;
  f.allow_nan = true;
  formats.push_back(f);
  return formats;
}

[[noreturn]] void Fail(const RowFormat& format, size_t line, const std::string& what) {
  std::fprintf(stderr, "row_fuzzer: %s format, line %zu: %s\n",
               sparktorch::RowFormatKindName(format.kind), line, what.c_str());
  std::abort();
}

bool AllFinite(const std::vector<float>& values) {
  for (float v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

// Checks what a parser promises about a row it accepted.
void CheckRow(const RowFormat& format, const sparktorch::RowParser& parser,
              const sparktorch::Row& row, size_t line) {
  const auto features = static_cast<int64_t>(row.features.size());
  if (features == 0) Fail(format, line, "a row with no features");
  if (features != parser.num_features()) {
    Fail(format, line, std::to_string(features) + " features, but num_features() is " +
                           std::to_string(parser.num_features()));
  }
  if (format.num_features > 0 && features != format.num_features) {
    Fail(format, line, std::to_string(features) + " features, but the format has " +
                           std::to_string(format.num_features));
  }
  if (format.label == LabelPresence::kRequired && row.label.empty()) {
    Fail(format, line, "no label where one is required");
  }
  if (format.label == LabelPresence::kNone && !row.label.empty()) {
    Fail(format, line, "a label where there is none");
  }
  const bool columns = format.kind == RowFormatKind::kCsv ||
                       format.kind == RowFormatKind::kCompact ||
                       format.kind == RowFormatKind::kFloat32;
  if (columns && !row.label.empty() && static_cast<int64_t>(row.label.size()) != format.label_count) {
    Fail(format, line, std::to_string(row.label.size()) + " label values, not " +
                           std::to_string(format.label_count));
  }
  if (!format.allow_nan && (!AllFinite(row.features) || !AllFinite(row.label))) {
    Fail(format, line, "a nan or inf value without allow_nan");
  }
  const bool has_ids = (format.kind == RowFormatKind::kCsv && format.id_col) ||
                       (format.kind == RowFormatKind::kJsonl && !format.id_field.empty()) ||
                       format.kind == RowFormatKind::kCompact;
  if (!has_ids && !row.id.empty()) Fail(format, line, "an id in a format without ids");
}

const std::vector<RowFormat>& AllFormats() {
  static const std::vector<RowFormat>* formats = new std::vector<RowFormat>(Formats());
  return *formats;
}

const std::vector<RowFormat>& AllRecordFormats() {
  static const std::vector<RowFormat>* formats = new std::vector<RowFormat>(RecordFormats());
  return *formats;
}

std::unique_ptr<sparktorch::RowParser> ParserFor(const RowFormat& format) {
  try {
    return sparktorch::MakeRowParser(format);
  } catch (const sparktorch::Error& e) {
    Fail(format, 0, std::string("the fuzzer's own format is refused: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Lines as LineReader splits them (on "\n", dropping a "\r" before it). LineReader itself is
  // not used: its 1 MiB buffer, allocated per input, would cost more than the parsing.
  std::vector<std::string_view> lines;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    begin = end + 1;
  }

  // One Row for every parser: Parse must replace all that a row held, whoever filled it.
  sparktorch::Row row;
  for (const RowFormat& format : AllFormats()) {
    std::unique_ptr<sparktorch::RowParser> parser = ParserFor(format);
    for (size_t i = 0; i < lines.size(); ++i) {
      try {
        parser->Parse(lines[i], &row);
      } catch (const sparktorch::RowError&) {
        continue;
      }
      CheckRow(format, *parser, row, i + 1);
    }
  }

  // The bytes as float32 records, through the record reader: an InputError (a record cut
  // short, or over the reader's limit) ends the stream; a RowError refuses one record.
  using sparktorch::Float32RecordReader;
  for (const RowFormat& format : AllRecordFormats()) {
    std::unique_ptr<sparktorch::RowParser> parser = ParserFor(format);
    Float32RecordReader reader(std::make_unique<sparktorch::StringByteReader>(std::string(text)),
                               "fuzz", size_t{1} << 20);
    std::string_view record;
    for (size_t n = 1;; ++n) {
      Float32RecordReader::Status status;
      try {
        status = reader.Next(&record);
      } catch (const sparktorch::InputError&) {
        break;
      }
      if (status == Float32RecordReader::Status::kEnd) break;
      if (status == Float32RecordReader::Status::kGroupEnd) continue;
      try {
        parser->Parse(record, &row);
      } catch (const sparktorch::RowError&) {
        continue;
      }
      CheckRow(format, *parser, row, n);
    }
  }
  return 0;
}
