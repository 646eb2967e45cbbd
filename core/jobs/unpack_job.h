#ifndef SPARKTORCH_CORE_JOBS_UNPACK_JOB_H_
#define SPARKTORCH_CORE_JOBS_UNPACK_JOB_H_

#include <string>
#include <vector>

namespace sparktorch {

struct UnpackJobOptions {
  std::vector<std::string> inputs;  // record streams; empty: stdin
  std::string model_path;           // where the model goes; empty: not written
  std::string predictions_path;     // one line per P record: VALUE or ID<TAB>VALUE; empty: none
  std::string summary_path;         // one JSON line per S record; empty: none
};

// Runs `sparktorch unpack`: splits a record stream (what `train` writes on stdout, or what
// Spark's pipe collected from every task) into a model file, a predictions file and summaries.
// The model is verified before it is written. Throws ModelError when a record is malformed, a
// chunk is corrupt or missing, or a model is asked for and the stream holds none.
void RunUnpackJob(const UnpackJobOptions& options);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_UNPACK_JOB_H_
