#include "core/jobs/unpack_job.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <spdlog/spdlog.h>

#include "core/data/input_files.h"
#include "formats/error.h"
#include "formats/line_reader.h"
#include "formats/records.h"

namespace sparktorch {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File OpenForWriting(const std::string& path, const char* what) {
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) throw Error(path + ": cannot write the " + what + ": " + std::strerror(errno));
  return f;
}

void Close(File f, const std::string& path) {
  bool ok = std::fflush(f.get()) == 0 && !std::ferror(f.get());
  if (std::fclose(f.release()) != 0 || !ok) {
    throw Error(path + ": write failed: " + std::strerror(errno));
  }
}

}  // namespace

void RunUnpackJob(const UnpackJobOptions& options) {
  File predictions, summaries;
  if (!options.predictions_path.empty()) {
    predictions = OpenForWriting(options.predictions_path, "predictions");
  }
  if (!options.summary_path.empty()) summaries = OpenForWriting(options.summary_path, "summary");

  std::optional<std::string> model;
  int64_t prediction_count = 0;
  for (const std::string& path : ExpandInputPaths(options.inputs)) {
    RecordReader reader(InputDisplayName(path));
    // A record line is at most 1 MiB; anything longer is not a record and the reader says so.
    LineReader lines(OpenInput(path), InputDisplayName(path), kMaxRecordLineBytes + 1);
    std::string_view line;
    for (;;) {
      LineReader::Status status = lines.Next(&line);
      if (status == LineReader::Status::kEnd) break;
      if (status == LineReader::Status::kTooLong) {
        throw ModelError(lines.name() + ":" + std::to_string(lines.line_number()) +
                         ": line longer than a record may be (1 MiB)");
      }
      std::optional<RecordReader::Prediction> p = reader.Feed(line);
      if (p) {
        ++prediction_count;
        if (predictions) {
          std::FILE* f = predictions.get();
          if (!p->id.empty()) {
            std::fwrite(p->id.data(), 1, p->id.size(), f);
            std::fputc('\t', f);
          }
          std::fwrite(p->value.data(), 1, p->value.size(), f);
          std::fputc('\n', f);
        }
      }
    }
    std::optional<std::string> found = reader.TakeModel();
    if (found) {
      if (model) throw ModelError(lines.name() + ": holds a second model; unpack one stream at a time");
      model = std::move(found);
    }
    for (const std::string& summary : reader.summaries()) {
      if (summaries) {
        std::fwrite(summary.data(), 1, summary.size(), summaries.get());
        std::fputc('\n', summaries.get());
      }
    }
  }
  if (predictions) Close(std::move(predictions), options.predictions_path);
  if (summaries) Close(std::move(summaries), options.summary_path);
  if (!options.model_path.empty()) {
    if (!model) {
      std::string names;
      for (const std::string& path : ExpandInputPaths(options.inputs)) {
        names += (names.empty() ? "" : ", ") + InputDisplayName(path);
      }
      throw ModelError(names + ": the records hold no model (did train write it with --output?)");
    }
    File f = OpenForWriting(options.model_path, "model");
    std::fwrite(model->data(), 1, model->size(), f.get());
    Close(std::move(f), options.model_path);
  }
  spdlog::info("unpacked {}{} predictions", model ? std::to_string(model->size()) + "-byte model, " : "",
               prediction_count);
}

}  // namespace sparktorch
