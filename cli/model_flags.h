#ifndef SPARKTORCH_CLI_MODEL_FLAGS_H_
#define SPARKTORCH_CLI_MODEL_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/jobs/model_source.h"

namespace sparktorch {

// The flags that say what to train, shared by `train` and `serve --mode hogwild` (the twin of
// row_format_flags.h): --model, --train-config, --loss, --optimizer, --lr, --seed, --output.
struct ModelFlags {
  ModelSource source;  // model_path and train_config land here; the overrides below
  std::string loss, optimizer, lr_schedule, output_path;
  double lr = 0;
  uint64_t seed = 0;

  // Options as registered, to tell which were given.
  CLI::Option *model_opt, *train_config_opt, *loss_opt, *optimizer_opt, *lr_opt, *lr_schedule_opt,
      *seed_opt, *output_opt;

  std::vector<CLI::Option*> all() const {
    return {model_opt,       train_config_opt, loss_opt,  optimizer_opt,
            lr_opt,          lr_schedule_opt,  seed_opt,  output_opt};
  }
};

// Help texts that differ between the commands, and the groups the flags are listed under.
struct ModelFlagsHelp {
  const char* model_group;   // of --model and --train-config; nullptr: the command's own
  const char* model;       // --model's help
  const char* seed;        // --seed's help
  const char* output;      // --output's help
  const char* training;    // the group of --loss, --optimizer, --lr and --seed
  const char* output_group;  // the group of --output
};

// Registers the model flags on `command`; values land in *flags, which must outlive parsing.
void AddModelFlags(CLI::App* command, ModelFlags* flags, const ModelFlagsHelp& help);

// The model's source with the overrides that were given; `input_shape` as --input-shape gives
// it (train takes it with the row flags, serve on its own).
ModelSource ToModelSource(const ModelFlags& flags, std::string input_shape);

}  // namespace sparktorch

#endif  // SPARKTORCH_CLI_MODEL_FLAGS_H_
