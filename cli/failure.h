#ifndef SPARKTORCH_CLI_FAILURE_H_
#define SPARKTORCH_CLI_FAILURE_H_

#include <stdexcept>
#include <string>

#include "core/jobs/failure.h"

namespace sparktorch {

// Flags that parse but do not go together (inspect with a model and --input); exit code 2, the
// message as it is.
class FlagError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a failure means for the process: its exit code and the one-line message.
struct Failure {
  int code;
  std::string message;
};

// Classifies the exception being handled. Call only inside a catch block.
Failure CurrentFailure();

// The exit code of a failure kind (cli/exit_codes.h).
int ExitCode(FailureKind kind);

}  // namespace sparktorch

#endif  // SPARKTORCH_CLI_FAILURE_H_
