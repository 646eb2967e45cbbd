#ifndef SPARKTORCH_CORE_DIST_TRACKER_CHECKPOINT_H_
#define SPARKTORCH_CORE_DIST_TRACKER_CHECKPOINT_H_

#include <memory>
#include <string>

#include "formats/records.h"

namespace sparktorch {

// A model file as rank 0 sends it to the tracker (sparktorch-formats(7), "Tracker protocol"): its
// model records, one line each (`checkpoint-record` for a checkpoint, `model-record` for the
// trained model), until the line that ends it. Not thread-safe.
class ModelLines {
 public:
  // `name` names the model in messages ("rank 0's checkpoint").
  explicit ModelLines(std::string name) : name_(std::move(name)) {}

  // The text after the record line's verb. After a bad record the rest is ignored until Take.
  void Record(const std::string& record);
  // At the line that ends the model: its bytes, verified. Throws ModelError saying what was
  // wrong (a bad record, none at all, chunks missing). Starts the next model either way.
  std::string Take();

 private:
  std::string name_;
  std::unique_ptr<RecordReader> reader_;  // the records so far; null before the first
  std::string error_;                     // the first bad record's error
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DIST_TRACKER_CHECKPOINT_H_
