#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/jobs/train_run.h"
#include "core/model/model_file.h"
#include "formats/error.h"
#include "formats/hmac_sha256.h"

// --resume FILE: a restarted job continues from the checkpoint its rank 0 took, when that
// checkpoint is one of the same job.
namespace sparktorch {
namespace {

using nlohmann::json;

// The bytes of `path`, or "" when there is no such file. `what` names the flag in errors.
std::string FileBytes(const std::string& path, const std::string& what) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(what + " " + path + ": cannot read this file");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

// What decides how the job trains, as a checkpoint records it: a checkpoint whose job had
// another value of any of them is of another job.
json JobSettings(const TrainJobOptions& job) {
  const ModelSource& m = job.model;
  return {{"epochs", job.epochs * std::max(1, job.partition_shuffles)},
          {"batch_size", job.batch_size},
          {"steps_per_epoch", job.steps_per_epoch},
          {"validation_pct", job.validation_fraction},
          {"early_stop_patience", job.early_stop_patience},
          {"seed", job.seed},
          {"shuffle", job.shuffle},
          {"clip_grad_norm", job.clip_grad_norm},
          {"clip_grad_value", job.clip_grad_value},
          {"lr_scaling", NameIn(kLrScalingNames, job.lr_scaling)},
          {"allreduce_dtype", NameIn(kAllreduceDtypeNames, job.allreduce_dtype)},
          {"input_shape", m.input_shape},
          {"loss", m.loss.value_or("")},
          {"optimizer", m.optimizer.value_or("")},
          {"lr", m.lr ? json(*m.lr) : json()},
          {"lr_schedule", m.lr_schedule.value_or("")}};
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string TrainJobKey(const TrainJobOptions& job) {
  std::string text = FileBytes(job.model.model_path, "--model");
  text += '\0';
  text += FileBytes(job.model.train_config, "--train-config");
  text += '\0';
  text += JobSettings(job).dump();
  return HmacSha256Hex("sparktorch job key 1", text);
}

void ApplyResume(TrainJobOptions* job, TrainRun* run) {
  const std::string path = job->resume_path;
  if (path.empty()) return;
  if (job->fresh_optimizer) {
    throw UsageError("--resume and --fresh-optimizer: a resumed job continues its optimizer");
  }
  run->job_key = TrainJobKey(*job);
  if (!Exists(path)) {
    spdlog::info("--resume {}: no checkpoint there yet; the job starts from --model", path);
    return;
  }
  const std::string what = "--resume " + path;
  ModelFile checkpoint;
  try {
    checkpoint = ReadModelFile(path, c10::Device(c10::kCPU));
  } catch (const ModelError& e) {
    throw ModelError(what + ": not a checkpoint sparktorch can read (a corrupt or partial " +
                     "file?): " + e.what());
  }
  if (!checkpoint.manifest) {
    throw ModelError(what +
                     ": not a checkpoint: a TorchScript model without sparktorch's manifest");
  }
  const json& training = checkpoint.manifest->training;
  const std::string key = training.value("job_key", "");
  if (key != run->job_key) {
    throw ModelError(what + ": a checkpoint of another job (" +
                     (key.empty() ? std::string("it records no job key")
                                  : "job key " + key.substr(0, 12) + ", this job's " +
                                        run->job_key.substr(0, 12)) +
                     "): another model, training config or training settings; remove it or "
                     "resume into another file");
  }
  const int total = job->epochs * std::max(1, job->partition_shuffles);
  const int done = training.value("epochs_run", 0);
  if (done < 1 || done >= total) {
    throw ModelError(what + ": a checkpoint after epoch " + std::to_string(done) + " of a job of " +
                     std::to_string(total) + " epochs: nothing to resume");
  }
  spdlog::info("{}: resuming the job after epoch {} of {}", what, done, total);
  job->model.model_path = path;
  job->epochs = total - done;
  job->partition_shuffles = 1;
  run->resumed_after = done;
}

}  // namespace sparktorch
