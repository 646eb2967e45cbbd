// sparktorch: train PyTorch models on rows piped in by Spark, and predict with them.
// main wires the subcommands, sends logging to stderr (stdout carries only data) and turns each
// kind of failure into its exit code.

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/failure.h"
#include "core/version.h"

namespace {

void SetUpLogging(int verbose, bool quiet) {
  auto logger = spdlog::stderr_logger_st("sparktorch");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e sparktorch %l: %v");
  logger->set_level(quiet ? spdlog::level::warn
                          : verbose > 0 ? spdlog::level::debug : spdlog::level::info);
  logger->flush_on(spdlog::level::trace);  // whole lines, at once: Spark keeps stderr in a log
  spdlog::set_default_logger(logger);
}

int Fail(int code, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "sparktorch: error: %s\n", message.c_str());
  return code;
}

// The command's work: returns the exit code.
int Run(int argc, char** argv) {
  // A closed stdout (the reader went away) becomes a write error with a message, not a silent
  // death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  static char stdout_buffer[1 << 20];
  std::setvbuf(stdout, stdout_buffer, _IOFBF, sizeof stdout_buffer);

  CLI::App app("sparktorch: train PyTorch models on Spark data, and predict with them", "sparktorch");
  app.set_version_flag("--version", std::string("sparktorch ") + sparktorch::kVersion +
                                        " (LibTorch " + sparktorch::kLibTorchVersion + ")");
  app.require_subcommand(1);
  app.fallthrough();
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More log output on stderr");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");
  app.parse_complete_callback([&] { SetUpLogging(verbose, quiet); });
  sparktorch::SetupTrainCommand(app);
  sparktorch::SetupPredictCommand(app);
  sparktorch::SetupUnpackCommand(app);
  sparktorch::SetupInspectCommand(app);
  sparktorch::SetupServeCommand(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    sparktorch::Failure failure = sparktorch::CurrentFailure();
    return Fail(failure.code, failure.message);
  } catch (...) {
    sparktorch::Failure failure = sparktorch::CurrentFailure();
    return Fail(failure.code, failure.message);
  }
  if (std::fflush(stdout) != 0) return Fail(sparktorch::kExitOutput, "stdout: write failed");
  return sparktorch::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const int code = Run(argc, argv);
  // Out without the static destructors: LibTorch's unregister its thousands of operators one by
  // one, about 15% of the CPU time of `sparktorch --version`, paid by every process Spark starts.
  // Nothing needs them: the command has closed what it wrote (its objects ended with Run), MPI is
  // finalised, and the streams still open are flushed here.
  std::fflush(nullptr);
  std::_Exit(code);
}
