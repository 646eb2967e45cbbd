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
      check_(std::move(check)) {
  if (options_.format.kind == RowFormatKind::kParquet) {
    if (options_.format.num_features < 0) {
      throw UsageError("the number of features must be positive, got " +
                       std::to_string(options_.format.num_features));
    }
    parquet_ = std::make_unique<ParquetSource>(inputs_, options_.format, options_.share_rank,
                                               options_.share_world);
    return;
  }
  parser_ = MakeRowParser(options_.format);
  TakeShare();
}

void RowSource::TakeShare() {
  const int rank = options_.share_rank, world = options_.share_world;
  if (world <= 1 || inputs_.empty() || (inputs_.size() == 1 && inputs_[0] == kStdinName)) return;
  if (static_cast<int>(inputs_.size()) >= world) {
    std::vector<std::string> mine;
    for (size_t i = rank; i < inputs_.size(); i += world) mine.push_back(inputs_[i]);
    spdlog::info("rank {}: {} of the {} input files", rank, mine.size(), inputs_.size());
    inputs_ = std::move(mine);
    return;
  }
  // Fewer files than ranks: count the data lines (cheap next to parsing them), then take a
  // contiguous range, so that the ranks' rows together are the input's rows in order.
  int64_t lines = 0;
  for (const std::string& path : inputs_) lines += CountDataLines(path);
  first_line_ = lines * rank / world;
  end_line_ = lines * (rank + 1) / world;
  const bool records = options_.format.kind == RowFormatKind::kFloat32;
  spdlog::info("rank {}: {} {}..{} of the {} {}", rank, records ? "records" : "lines",
               first_line_ + 1, end_line_, lines, records ? "records" : "data lines");
}

int64_t RowSource::CountDataLines(const std::string& path) const {
  int64_t lines = 0;
  if (options_.format.kind == RowFormatKind::kFloat32) {
    Float32RecordReader reader(OpenInput(path), InputDisplayName(path), options_.max_line_bytes);
    std::string_view record;
    while (reader.Next(&record) != Float32RecordReader::Status::kEnd) ++lines;
    return lines;
  }
  LineReader reader(OpenInput(path), InputDisplayName(path), options_.max_line_bytes);
  std::string_view line;
  if (options_.format.header && options_.format.kind == RowFormatKind::kCsv) reader.Next(&line);
  while (reader.Next(&line) != LineReader::Status::kEnd) ++lines;
  return lines;
}

RowSource::~RowSource() = default;

bool RowSource::OpenNextInput() {
  if (next_input_ >= inputs_.size()) return false;
  const std::string& path = inputs_[next_input_++];
  const InputReads reads = options_.group_end.empty() || path != kStdinName
                               ? InputReads::kBuffered
                               : InputReads::kAsItComes;
  if (options_.format.kind == RowFormatKind::kFloat32) {
    records_ = std::make_unique<Float32RecordReader>(OpenInput(path, reads),
                                                     InputDisplayName(path), options_.max_line_bytes);
    return true;
  }
  reader_ = std::make_unique<LineReader>(OpenInput(path, reads), InputDisplayName(path),
                                         options_.max_line_bytes);
  if (options_.format.header && options_.format.kind == RowFormatKind::kCsv) {
    std::string_view header;
    reader_->Next(&header);  // A header longer than the line limit is dropped all the same.
  }
  return true;
}

std::string RowSource::LineWhere(size_t column) const {
  if (records_) {
    return records_->name() + ": record " +
           std::to_string(records_->record_number() - group_line_base_) + ":";
  }
  std::string where =
      reader_->name() + ":" + std::to_string(reader_->line_number() - group_line_base_) + ":";
  if (column > 0) where += std::to_string(column) + ":";
  return where;
}

void RowSource::Reject(const std::string& where, const std::string& what, RowSetting setting) {
  if (options_.on_bad_row == BadRowPolicy::kFail) {
    throw InputError(where + " " + what, setting);
  }
  ++rows_skipped_;
  if (rows_skipped_ <= kSkippedRowsLogged) {
    spdlog::warn("skipping bad row {} {}", where, what);
    if (rows_skipped_ == kSkippedRowsLogged) {
      spdlog::warn("further bad rows are skipped without a message; the summary counts them");
    }
  }
}

bool RowSource::NextParquet(Row* row) {
  for (;;) {
    try {
      if (!parquet_->Next(row)) return false;
    } catch (const RowError& e) {
      Reject(parquet_->where() + ":", e.what(), e.setting());
      continue;
    }
    if (check_) {
      std::string problem = check_(*row);
      if (!problem.empty()) {
        Reject(parquet_->where() + ":", problem);
        continue;
      }
    }
    ++rows_read_;
    return true;
  }
}

bool RowSource::NextLine(std::string_view* line) {
  for (;;) {
    if (!reader_ && !records_ && !OpenNextInput()) return false;
    if (line_index_ >= end_line_) return false;
    if (records_) {
      const Float32RecordReader::Status status = records_->Next(line);
      if (status == Float32RecordReader::Status::kEnd) {
        records_.reset();
        continue;
      }
      if (status == Float32RecordReader::Status::kGroupEnd && !options_.group_end.empty()) {
        group_ended_ = true;
        group_line_base_ = records_->record_number();
        return false;
      }
      if (line_index_++ < first_line_) continue;
      if (status == Float32RecordReader::Status::kGroupEnd) {
        Reject(LineWhere(0), "a group end record, and no --group-end was given");
        continue;
      }
      return true;
    }
    LineReader::Status status = reader_->Next(line);
    if (status != LineReader::Status::kEnd && line_index_++ < first_line_) continue;
    switch (status) {
      case LineReader::Status::kEnd:
        reader_.reset();
        continue;
      case LineReader::Status::kTooLong:
        Reject(LineWhere(0), "line longer than " + std::to_string(reader_->max_line_bytes()) +
                                 " bytes (--max-line-bytes)");
        continue;
      case LineReader::Status::kLine:
        break;
    }
    if (!options_.group_end.empty() && *line == options_.group_end) {
      group_ended_ = true;
      group_line_base_ = reader_->line_number();
      return false;
    }
    return true;
  }
}

bool RowSource::ParseLine(std::string_view line, Row* row) {
  try {
    parser_->Parse(line, row);
  } catch (const RowError& e) {
    Reject(LineWhere(e.column()), e.what(), e.setting());
    return false;
  }
  if (check_) {
    std::string problem = check_(*row);
    if (!problem.empty()) {
      Reject(LineWhere(0), problem);
      return false;
    }
  }
  ++rows_read_;
  return true;
}

bool RowSource::Next(Row* row) {
  group_ended_ = false;
  if (parquet_) return NextParquet(row);
  std::string_view line;
  while (NextLine(&line)) {
    if (ParseLine(line, row)) return true;
  }
  return false;
}

}  // namespace sparktorch
