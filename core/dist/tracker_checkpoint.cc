#include "core/dist/tracker_checkpoint.h"

#include <spdlog/spdlog.h>

namespace sparktorch {

void CheckpointReceiver::Record(const std::string& record) {
  if (failed_) return;
  if (!reader_) reader_ = std::make_unique<RecordReader>("rank 0's checkpoint");
  try {
    reader_->Feed(record);
  } catch (const std::exception& e) {
    spdlog::warn("tracker: dropped a checkpoint from rank 0: {}", e.what());
    failed_ = true;
  }
}

std::optional<std::pair<int, std::string>> CheckpointReceiver::End(const std::string& epoch_text) {
  std::unique_ptr<RecordReader> reader = std::move(reader_);
  const bool failed = failed_;
  failed_ = false;
  int epoch = -1;
  try {
    epoch = std::stoi(epoch_text);
  } catch (const std::exception&) {
  }
  if (failed) return std::nullopt;
  if (!reader || epoch < 0) {
    spdlog::warn("tracker: dropped a checkpoint line from rank 0 without its model: {}",
                 epoch_text);
    return std::nullopt;
  }
  try {
    std::optional<std::string> model = reader->TakeModel();
    if (model) return std::make_pair(epoch, std::move(*model));
  } catch (const std::exception& e) {
    spdlog::warn("tracker: dropped the checkpoint after epoch {} from rank 0: {}", epoch, e.what());
  }
  return std::nullopt;
}

}  // namespace sparktorch
