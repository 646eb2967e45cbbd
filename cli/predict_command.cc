#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/row_format_flags.h"
#include "core/jobs/predict_job.h"

namespace sparktorch {
namespace {

struct PredictFlags {
  PredictJobOptions job;
  RowFormatFlags rows;
};

void Run(PredictFlags& f) {
  PredictJobOptions job = f.job;
  job.rows = ToRowOptions(f.rows);
  RunPredictJob(job, stdout);
}

}  // namespace

void SetupPredictCommand(CLI::App& app) {
  auto flags = std::make_shared<PredictFlags>();
  PredictFlags& f = *flags;
  CLI::App* c = app.add_subcommand(
      "predict", "Predict rows from stdin or files with a model; one line per row on stdout");
  c->add_option("--model,-m", f.job.model_path, "A trained model or a TorchScript model (.pt)")
      ->required();
  AddRowFormatFlags(c, &f.rows);
  c->add_option("--batch-size,-b", f.job.batch_size, "Rows per forward pass (" + DefaultIs(f.job.batch_size) + ")")
      ->check(CLI::PositiveNumber);
  AddEnumOption(c, "--prediction", &f.job.prediction, kPredictionKindNames,
                "argmax, vector, probabilities or class (default: the model's)");
  c->add_option("--threads,-t", f.job.threads, "CPU threads (default: OMP_NUM_THREADS, else 1)")
      ->check(CLI::PositiveNumber);
  c->add_option("--device", f.job.device,
                "cpu, cuda, cuda:N or auto (cuda where there is one, else cpu; default cpu)");
  c->add_option("--group-end", f.job.group_end,
                "A line equal to TEXT ends a group of rows: their predictions are written, "
                "then TEXT on a line, and reading goes on (stdin is read as it arrives)");
  c->callback([flags] { Run(*flags); });
}

}  // namespace sparktorch
