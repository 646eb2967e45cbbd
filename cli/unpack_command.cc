#include <memory>

#include "cli/commands.h"
#include "cli/failure.h"
#include "core/jobs/unpack_job.h"

namespace sparktorch {

void SetupUnpackCommand(CLI::App& app) {
  auto job = std::make_shared<UnpackJobOptions>();
  CLI::App* c = app.add_subcommand(
      "unpack", "Split a record stream into a model file, predictions and summaries");
  c->add_option("--input,-i", job->inputs, "Record files (default: stdin)");
  c->add_option("--output,-o", job->model_path, "Write the verified model to this file");
  c->add_option("--predictions,-p", job->predictions_path,
                "Write one line per prediction record (VALUE or ID<TAB>VALUE)");
  c->add_option("--summary,-s", job->summary_path, "Write one JSON line per summary record");
  c->callback([job] {
    if (job->model_path.empty() && job->predictions_path.empty() && job->summary_path.empty()) {
      throw FlagError("unpack: give at least one of --output, --predictions, --summary");
    }
    RunUnpackJob(*job);
  });
}

}  // namespace sparktorch
