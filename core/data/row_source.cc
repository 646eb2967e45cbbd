#include "core/data/row_source.h"

#include <spdlog/spdlog.h>

#include "core/data/input_files.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

// Skipped rows logged one by one before only the count is kept.
constexpr int64_t kSkippedRowsLogged = 10;

}  // namespace

RowSource::RowSource(std::vector<std::string> inputs, RowSourceOptions options, RowCheck check)
    : inputs_(std::move(inputs)),
      options_(std::move(options)),
      check_(std::move(check)),
      parser_(MakeRowParser(options_.format)) {}

RowSource::~RowSource() = default;

bool RowSource::OpenNextInput() {
  if (next_input_ >= inputs_.size()) return false;
  const std::string& path = inputs_[next_input_++];
  reader_ = std::make_unique<LineReader>(OpenInput(path), InputDisplayName(path),
                                         options_.max_line_bytes);
  if (options_.format.header && options_.format.kind == RowFormatKind::kCsv) {
    std::string_view header;
    reader_->Next(&header);  // A header longer than the line limit is dropped all the same.
  }
  return true;
}

void RowSource::Reject(const std::string& what, size_t column) {
  std::string where = reader_->name() + ":" + std::to_string(reader_->line_number()) + ":";
  if (column > 0) where += std::to_string(column) + ":";
  if (options_.on_bad_row == BadRowPolicy::kFail) {
    throw InputError(where + " " + what);
  }
  ++rows_skipped_;
  if (rows_skipped_ <= kSkippedRowsLogged) {
    spdlog::warn("skipping bad row {} {}", where, what);
    if (rows_skipped_ == kSkippedRowsLogged) {
      spdlog::warn("further bad rows are skipped without a message; the summary counts them");
    }
  }
}

bool RowSource::Next(Row* row) {
  for (;;) {
    if (!reader_ && !OpenNextInput()) return false;
    std::string_view line;
    switch (reader_->Next(&line)) {
      case LineReader::Status::kEnd:
        reader_.reset();
        continue;
      case LineReader::Status::kTooLong:
        Reject("line longer than " + std::to_string(reader_->max_line_bytes()) +
                   " bytes (--max-line-bytes)",
               0);
        continue;
      case LineReader::Status::kLine:
        break;
    }
    try {
      parser_->Parse(line, row);
    } catch (const RowError& e) {
      Reject(e.what(), e.column());
      continue;
    }
    if (check_) {
      std::string problem = check_(*row);
      if (!problem.empty()) {
        Reject(problem, 0);
        continue;
      }
    }
    ++rows_read_;
    return true;
  }
}

}  // namespace sparktorch
