#include "cli/failure.h"

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "core/jobs/failure.h"

namespace sparktorch {

int ExitCode(FailureKind kind) {
  switch (kind) {
    case FailureKind::kUsage: return kExitUsage;
    case FailureKind::kInput: return kExitBadInput;
    case FailureKind::kSpec: return kExitBadSpec;
    case FailureKind::kModel: return kExitBadModel;
    case FailureKind::kDevice: return kExitNoDevice;
    case FailureKind::kSpill: return kExitSpill;
    case FailureKind::kOutput: return kExitOutput;
    case FailureKind::kPeerFailed: return kExitPeerFailed;
    case FailureKind::kPeerLost: return kExitPeerLost;
    case FailureKind::kRendezvous: return kExitRendezvous;
    case FailureKind::kRefused: return kExitRefused;
    case FailureKind::kInternal: return kExitInternal;
  }
  return kExitInternal;
}

Failure CurrentFailure() {
  try {
    throw;
  } catch (const CLI::ParseError& e) {
    return {kExitUsage, std::string(e.what()) + " (run sparktorch --help, or sparktorch COMMAND --help)"};
  } catch (const FlagError& e) {
    return {kExitUsage, e.what()};
  } catch (...) {
    JobFailure failure = CurrentJobFailure();
    return {ExitCode(failure.kind), failure.message};
  }
}

}  // namespace sparktorch
