#ifndef SPARKTORCH_CORE_WORLD_TRACKER_CHECKPOINT_H_
#define SPARKTORCH_CORE_WORLD_TRACKER_CHECKPOINT_H_

#include <functional>
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

// At `checkpoint EPOCH_TEXT`: passes the checkpoint `lines` hold to `on_checkpoint`. One that
// went wrong, or that nothing keeps, is dropped with a line in the log: the job goes on, and a
// restart resumes from the one before.
void KeepCheckpoint(ModelLines& lines, const std::string& epoch_text,
                    const std::function<void(int epoch, const std::string& model)>& on_checkpoint);

// At `model`: passes the trained model `lines` hold to `on_model`. Returns the message the job
// fails with when it could not (bad records, no `on_model`, `on_model` threw), else "".
std::string KeepModel(ModelLines& lines,
                      const std::function<void(const std::string& model)>& on_model);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_WORLD_TRACKER_CHECKPOINT_H_
