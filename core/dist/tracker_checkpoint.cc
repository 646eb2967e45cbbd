#include "core/dist/tracker_checkpoint.h"

#include <optional>
#include <utility>

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

}  // namespace sparktorch
