#include "core/world/tracker_checkpoint.h"

#include <optional>
#include <utility>

#include <spdlog/spdlog.h>

#include "formats/error.h"

namespace sparktorch {

void ModelLines::Record(const std::string& record) {
  if (!error_.empty()) return;
  if (!reader_) reader_ = std::make_unique<RecordReader>(name_);
  try {
    reader_->Feed(record);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

std::string ModelLines::Take() {
  std::unique_ptr<RecordReader> reader = std::move(reader_);
  const std::string error = std::move(error_);
  error_.clear();
  if (!error.empty()) throw ModelError(error);
  std::optional<std::string> model = reader ? reader->TakeModel() : std::nullopt;
  if (!model) throw ModelError(name_ + ": no model records came before its end");
  return std::move(*model);
}

void KeepCheckpoint(ModelLines& lines, const std::string& epoch_text,
                    const std::function<void(int epoch, const std::string& model)>& on_checkpoint) {
  std::string model;
  int epoch = -1;
  try {
    model = lines.Take();
    epoch = std::stoi(epoch_text);
  } catch (const std::exception& e) {
    spdlog::warn("tracker: dropped a checkpoint from rank 0: {}", e.what());
    return;
  }
  if (!on_checkpoint) {
    spdlog::debug("tracker: rank 0 sent a checkpoint after epoch {}; this tracker keeps none",
                  epoch);
    return;
  }
  try {
    on_checkpoint(epoch, model);
  } catch (const std::exception& e) {
    spdlog::warn("tracker: could not keep the checkpoint after epoch {}: {}", epoch, e.what());
  }
}

std::string KeepModel(ModelLines& lines,
                      const std::function<void(const std::string& model)>& on_model) {
  try {
    const std::string model = lines.Take();
    if (!on_model) throw UsageError("this tracker keeps no model (serve without --output FILE)");
    on_model(model);
    return "";
  } catch (const std::exception& e) {
    return "rank 0 sent its trained model, and the tracker could not keep it: " +
           std::string(e.what());
  }
}

}  // namespace sparktorch
