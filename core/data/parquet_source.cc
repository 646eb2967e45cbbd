#include "core/data/parquet_source.h"

#include <algorithm>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "core/data/input_files.h"
#include "formats/error.h"
#include "formats/parquet/parquet_file.h"
#include "formats/parquet/parquet_rows.h"

namespace sparktorch {
namespace {

namespace fs = std::filesystem;

// The Parquet files an input stands for: itself, or a directory's visible files, sorted.
std::vector<std::string> PartFiles(const std::string& input) {
  std::error_code error;
  if (!fs::is_directory(input, error)) return {input};
  std::vector<std::string> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(input, error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '_' || name[0] == '.') continue;
    if (entry.is_directory(error)) {
      throw InputError(input + ": holds a directory, " + name +
                       " (a partitioned table?): give the Parquet files or their directories");
    }
    files.push_back(entry.path().string());
  }
  if (error) throw InputError(input + ": cannot list: " + error.message());
  if (files.empty()) throw InputError(input + ": a directory without Parquet files");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

ParquetSource::ParquetSource(const std::vector<std::string>& inputs, const RowFormat& format,
                             int share_rank, int share_world)
    : format_(format), num_features_(format.num_features) {
  for (std::string& path : Files(inputs)) parts_.push_back(Part{std::move(path), 0, INT64_MAX});
  if (share_world <= 1) return;  // every row: no footer to read ahead of the reader
  std::vector<int64_t> starts;  // each file's first row among all the files' rows
  int64_t rows = 0;
  for (const Part& part : parts_) {
    starts.push_back(rows);
    rows += parquet::ParquetFile(part.path).num_rows();
  }
  const int64_t first = rows * share_rank / share_world;
  const int64_t end = rows * (share_rank + 1) / share_world;
  std::vector<Part> mine;
  for (size_t i = 0; i < parts_.size(); ++i) {
    const int64_t file_end = i + 1 < parts_.size() ? starts[i + 1] : rows;
    const int64_t from = std::max(first, starts[i]), to = std::min(end, file_end);
    if (from >= to) continue;
    mine.push_back(Part{parts_[i].path, from - starts[i], to - starts[i]});
  }
  spdlog::info("rank {}: rows {}..{} of the {} rows in {} Parquet file{}", share_rank, first + 1,
               end, rows, parts_.size(), parts_.size() == 1 ? "" : "s");
  parts_ = std::move(mine);
}

ParquetSource::~ParquetSource() = default;

std::vector<std::string> ParquetSource::Files(const std::vector<std::string>& inputs) {
  if (inputs.empty() || std::find(inputs.begin(), inputs.end(), kStdinName) != inputs.end()) {
    throw UsageError("--format parquet reads files, not stdin (a Parquet file's metadata is at "
                     "its end): give the files or their directories with --input, or the "
                     "format of the rows on stdin with --format");
  }
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    for (std::string& path : PartFiles(input)) files.push_back(std::move(path));
  }
  return files;
}

bool ParquetSource::Next(Row* row) {
  for (;;) {
    if (!reader_) {
      if (next_part_ >= parts_.size()) return false;
      const Part& part = parts_[next_part_++];
      reader_ = std::make_unique<parquet::ParquetRowReader>(part.path, format_, num_features_,
                                                            part.first_row, part.end_row);
    }
    bool got = false;
    try {
      got = reader_->Next(row);
    } catch (const RowError&) {
      num_features_ = reader_->num_features();
      throw;
    }
    num_features_ = reader_->num_features();
    if (got) return true;
    reader_.reset();
  }
}

std::string ParquetSource::where() const {
  if (!reader_) return "parquet";
  return reader_->path() + ": row " + std::to_string(reader_->row_number());
}

}  // namespace sparktorch
