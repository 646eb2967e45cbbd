#include "cli/failure.h"

#include <exception>
#include <string_view>

#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>

#include "cli/exit_codes.h"
#include "core/net/errors.h"
#include "formats/error.h"

namespace sparktorch {

Failure CurrentFailure() {
  try {
    throw;
  } catch (const CLI::ParseError& e) {
    return {kExitUsage, std::string(e.what()) + " (run sparktorch --help, or sparktorch COMMAND --help)"};
  } catch (const UsageError& e) {
    return {kExitUsage, e.what()};
  } catch (const InputError& e) {
    return {kExitBadInput, e.what()};
  } catch (const SpecError& e) {
    return {kExitBadSpec, e.what()};
  } catch (const ModelError& e) {
    return {kExitBadModel, e.what()};
  } catch (const DeviceError& e) {
    return {kExitNoDevice, e.what()};
  } catch (const PeerError& e) {
    return {e.peer_failed() ? kExitPeerFailed : kExitPeerLost, e.what()};
  } catch (const RendezvousError& e) {
    return {kExitRendezvous, e.what()};
  } catch (const RefusedError& e) {
    return {kExitRefused, e.what()};
  } catch (const Error& e) {
    return {kExitOutput, e.what()};
  } catch (const c10::Error& e) {
    return {kExitInternal, std::string("LibTorch: ") + e.what_without_backtrace()};
  } catch (const std::exception& e) {
    return {kExitInternal, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {kExitInternal, "internal error: an unknown exception"};
  }
}

int ExitCodeForAbort(const char* kind_name) {
  std::string_view kind(kind_name);
  if (kind == "failed") return kExitPeerFailed;
  if (kind == "timeout") return kExitRendezvous;
  return kExitPeerLost;
}

}  // namespace sparktorch
