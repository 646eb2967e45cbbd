#ifndef SPARKTORCH_CLI_COMMANDS_H_
#define SPARKTORCH_CLI_COMMANDS_H_

#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

namespace sparktorch {

// "default V" for a flag's help, from the value its options struct starts with: each default is
// written once, beside its field (core/jobs/*.h), and the help reads it from there.
template <typename T>
std::string DefaultIs(const T& value) {
  std::ostringstream text;
  text << "default " << value;
  return text.str();
}

// Each registers one subcommand on `app`, with its options and a callback that runs it. The
// callbacks throw sparktorch::Error kinds, which main turns into exit codes.
void SetupTrainCommand(CLI::App& app);
void SetupPredictCommand(CLI::App& app);
void SetupUnpackCommand(CLI::App& app);
void SetupInspectCommand(CLI::App& app);
void SetupServeCommand(CLI::App& app);

}  // namespace sparktorch

#endif  // SPARKTORCH_CLI_COMMANDS_H_
