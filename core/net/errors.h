#ifndef SPARKTORCH_CORE_NET_ERRORS_H_
#define SPARKTORCH_CORE_NET_ERRORS_H_

#include <string>

#include "formats/error.h"

// The failure kinds of distributed jobs, beside formats/error.h's kinds of one process. Each has
// its own exit code (cli/exit_codes.h). They live in core/net, the lowest layer that throws them
// (a socket's peer that went away is a PeerError).

namespace sparktorch {

// A peer of a distributed job went away: a rank died or disconnected, the tracker vanished, or
// another rank failed and the job was ended. The message names the rank or address at fault.
class PeerError : public Error {
 public:
  PeerError(const std::string& message, bool peer_failed) : Error(message), peer_failed_(peer_failed) {}
  // True when another rank reported an error of its own (bad input, say), false when a rank or
  // the tracker was lost without a word.
  bool peer_failed() const { return peer_failed_; }

 private:
  bool peer_failed_;
};

// Not every rank of a distributed job arrived in time, or the tracker could not be reached.
class RendezvousError : public Error {
 public:
  using Error::Error;
};

// The tracker refused this process: a wrong secret, another job's id, a rank taken or out of range.
class RefusedError : public Error {
 public:
  using Error::Error;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_NET_ERRORS_H_
