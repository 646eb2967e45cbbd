#ifndef SPARKTORCH_CLI_EXIT_CODES_H_
#define SPARKTORCH_CLI_EXIT_CODES_H_

namespace sparktorch {

// Process exit codes, one per kind of failure (documented in man/sparktorch.1, EXIT STATUS).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;        // bad flags (UsageError, FlagError, CLI11 parse errors)
inline constexpr int kExitBadInput = 3;     // rows that cannot be read (InputError)
inline constexpr int kExitBadSpec = 4;      // model spec or training config (SpecError)
inline constexpr int kExitBadModel = 5;     // model file or record stream (ModelError)
inline constexpr int kExitNoDevice = 6;     // device not available (DeviceError)
inline constexpr int kExitRendezvous = 69;  // not every rank arrived in time (RendezvousError)
inline constexpr int kExitSpill = 73;     // rows cannot go to the spill file (SpillError)
inline constexpr int kExitOutput = 74;      // cannot write the output (other sparktorch::Error)
inline constexpr int kExitInternal = 70;    // a bug, or LibTorch failing unexpectedly
inline constexpr int kExitPeerLost = 75;    // a rank or the tracker was lost (PeerError)
inline constexpr int kExitPeerFailed = 76;  // another rank failed; its message is quoted
inline constexpr int kExitRefused = 77;     // the tracker refused this rank (RefusedError)

}  // namespace sparktorch

#endif  // SPARKTORCH_CLI_EXIT_CODES_H_
