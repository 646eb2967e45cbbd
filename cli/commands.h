#ifndef SPARKTORCH_CLI_COMMANDS_H_
#define SPARKTORCH_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace sparktorch {

// Each registers one subcommand on `app`, with its options and a callback that runs it. The
// callbacks throw sparktorch::Error kinds, which main turns into exit codes.
void SetupTrainCommand(CLI::App& app);
void SetupPredictCommand(CLI::App& app);
void SetupUnpackCommand(CLI::App& app);
void SetupInspectCommand(CLI::App& app);
void SetupServeCommand(CLI::App& app);

}  // namespace sparktorch

#endif  // SPARKTORCH_CLI_COMMANDS_H_
