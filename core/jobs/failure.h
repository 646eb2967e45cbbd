#ifndef SPARKTORCH_CORE_JOBS_FAILURE_H_
#define SPARKTORCH_CORE_JOBS_FAILURE_H_

#include <string>

namespace sparktorch {

class Error;  // formats/error.h

// The kinds of failure a job ends with, from the errors core throws (formats/error.h for one
// process, core/net/errors.h for a distributed job); cli/exit_codes.h gives each its exit code.
enum class FailureKind {
  kUsage,       // flags that do not fit (UsageError)
  kInput,       // rows that cannot be read (InputError)
  kSpec,        // a model spec or training config (SpecError)
  kModel,       // a model file or record stream (ModelError)
  kDevice,      // a device that is not there (DeviceError)
  kSpill,       // rows that cannot go to the spill file (SpillError)
  kOutput,      // an output that cannot be written (any other sparktorch::Error)
  kPeerFailed,  // another rank failed; its message is quoted (PeerError)
  kPeerLost,    // a rank, the tracker or the server was lost (PeerError)
  kRendezvous,  // not every rank arrived in time (RendezvousError)
  kRefused,     // the tracker or the server refused this process (RefusedError)
  kInternal,    // a bug, or LibTorch failing unexpectedly
};

struct JobFailure {
  FailureKind kind;
  std::string message;  // one line
};

// Classifies the exception being handled. Call only inside a catch block.
JobFailure CurrentJobFailure();

// e's message, and the flag that changes the setting it names, if it names one: "libsvm needs
// the number of features (--num-features)". formats/ names settings, this names their flags.
std::string MessageOf(const Error& e);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_FAILURE_H_
