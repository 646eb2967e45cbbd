#ifndef SPARKTORCH_CORE_DIST_TRACKER_CHECKPOINT_H_
#define SPARKTORCH_CORE_DIST_TRACKER_CHECKPOINT_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "formats/records.h"

namespace sparktorch {

// A checkpoint as rank 0 sends it to the tracker (sparktorch-formats(7), "Checkpoints"): its
// model records, one `checkpoint-record` line each, then `checkpoint EPOCH`. What a record or
// the end got wrong is logged as a warning, and that checkpoint dropped. Not thread-safe.
class CheckpointReceiver {
 public:
  // The text after "checkpoint-record ".
  void Record(const std::string& record);
  // The text after "checkpoint ": the epoch and the model's bytes, verified; nullopt for a
  // checkpoint that was dropped. Starts the next checkpoint.
  std::optional<std::pair<int, std::string>> End(const std::string& epoch);

 private:
  std::unique_ptr<RecordReader> reader_;  // the records so far; null before the first
  bool failed_ = false;                   // a record was bad: drop this checkpoint
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DIST_TRACKER_CHECKPOINT_H_
