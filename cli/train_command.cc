#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/row_format_flags.h"
#include "core/device.h"
#include "core/jobs/train_job.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

struct TrainFlags {
  TrainJobOptions job;
  RowFormatFlags rows;
  std::string loss, optimizer, prediction;
  double lr = 0;
  int threads = 0;
  CLI::Option *loss_opt, *optimizer_opt, *lr_opt, *prediction_opt, *threads_opt;
  bool no_shuffle = false;
};

void Run(TrainFlags& f) {
  TrainJobOptions job = f.job;
  job.inputs = f.rows.inputs;
  job.rows.format = ApplyOverrides(RowFormat(), ToOverrides(f.rows));
  job.rows.on_bad_row = ToBadRowPolicy(f.rows);
  job.rows.max_line_bytes = f.rows.max_line_bytes;
  job.input_shape = ParseShape(f.rows.input_shape, "--input-shape");
  if (f.loss_opt->count()) job.loss = f.loss;
  if (f.optimizer_opt->count()) job.optimizer = f.optimizer;
  if (f.lr_opt->count()) job.lr = f.lr;
  if (f.prediction_opt->count()) job.prediction = ParsePredictionKind(f.prediction);
  job.train.shuffle = !f.no_shuffle;
  if (job.train.batch_size == 0 || job.train.batch_size < -1) {
    throw UsageError("--batch-size must be a positive number of rows, or -1 for the whole partition");
  }
  ConfigureCpu(f.threads_opt->count() ? f.threads : DefaultThreads());
  RunTrainJob(job, stdout);
}

}  // namespace

void SetupTrainCommand(CLI::App& app) {
  auto flags = std::make_shared<TrainFlags>();
  TrainFlags& f = *flags;
  CLI::App* c = app.add_subcommand(
      "train", "Train a model on rows from stdin or files; write the model and records to stdout");
  c->add_option("--model,-m", f.job.model_path,
                "Model: a JSON spec (.json), a TorchScript model or a trained model (.pt)")
      ->required();
  c->add_option("--train-config", f.job.train_config,
                "JSON with \"loss\" and \"optimizer\" for a TorchScript model "
                "(default: MODEL.json beside MODEL.pt, if there)");
  AddRowFormatFlags(c, &f.rows);

  c->add_option("--epochs,-e", f.job.train.epochs, "Passes over the rows (default 10)")
      ->check(CLI::PositiveNumber)
      ->group("Training");
  c->add_option("--batch-size,-b", f.job.train.batch_size,
                "Rows per step; -1 for the whole partition (default 64)")
      ->group("Training");
  f.lr_opt = c->add_option("--lr", f.lr, "Learning rate (default: the spec's, else the optimizer's)")
                 ->check(CLI::PositiveNumber)
                 ->group("Training");
  f.optimizer_opt = c->add_option("--optimizer", f.optimizer,
                                  "sgd, adam, adamw, rmsprop or adagrad (default: the spec's, else adam)")
                        ->check(CLI::IsMember({"sgd", "adam", "adamw", "rmsprop", "adagrad"}))
                        ->group("Training");
  f.loss_opt = c->add_option("--loss", f.loss,
                             "cross_entropy, nll, mse, l1, smooth_l1, bce or bce_with_logits "
                             "(default: the spec's, else cross_entropy)")
                   ->check(CLI::IsMember({"cross_entropy", "nll", "mse", "l1", "smooth_l1", "bce",
                                         "bce_with_logits"}))
                   ->group("Training");
  c->add_option("--validation-pct", f.job.validation_fraction,
                "Fraction of rows held out for validation, in [0, 1) (default 0)")
      ->group("Training");
  c->add_option("--early-stop-patience", f.job.train.early_stop_patience,
                "Stop after this many epochs without a better (validation) loss; 0: never")
      ->check(CLI::NonNegativeNumber)
      ->group("Training");
  c->add_option("--seed", f.job.train.seed, "Seed for weights, dropout and shuffling (default 0)")
      ->group("Training");
  c->add_flag("--no-shuffle", f.no_shuffle, "Keep the rows in input order every epoch")
      ->group("Training");
  f.threads_opt = c->add_option("--threads,-t", f.threads,
                                "CPU threads (default: OMP_NUM_THREADS, else 1)")
                      ->check(CLI::PositiveNumber)
                      ->group("Training");
  c->add_option("--device", f.job.device, "cpu, cuda or cuda:N (default cpu)")->group("Training");

  c->add_option("--output,-o", f.job.output_path,
                "Write the model to this file instead of model records on stdout")
      ->group("Output");
  c->add_flag("--predict", f.job.predict, "Write a prediction record for every input row")
      ->group("Output");
  f.prediction_opt = c->add_option("--prediction", f.prediction,
                                   "argmax, vector or probabilities (default: by loss)")
                         ->check(CLI::IsMember({"argmax", "vector", "probabilities"}))
                         ->group("Output");
  c->add_option("--metrics", f.job.metrics_path, "Write per-epoch metrics as JSON lines to this file")
      ->group("Output");
  c->callback([flags] { Run(*flags); });
}

}  // namespace sparktorch
