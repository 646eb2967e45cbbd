#include "core/jobs/failure.h"

#include <exception>

#include <c10/util/Exception.h>

#include "core/net/errors.h"
#include "formats/error.h"

namespace sparktorch {

JobFailure CurrentJobFailure() {
  try {
    throw;
  } catch (const UsageError& e) {
    return {FailureKind::kUsage, e.what()};
  } catch (const InputError& e) {
    return {FailureKind::kInput, e.what()};
  } catch (const SpecError& e) {
    return {FailureKind::kSpec, e.what()};
  } catch (const ModelError& e) {
    return {FailureKind::kModel, e.what()};
  } catch (const DeviceError& e) {
    return {FailureKind::kDevice, e.what()};
  } catch (const SpillError& e) {
    return {FailureKind::kSpill, e.what()};
  } catch (const PeerError& e) {
    return {e.peer_failed() ? FailureKind::kPeerFailed : FailureKind::kPeerLost, e.what()};
  } catch (const RendezvousError& e) {
    return {FailureKind::kRendezvous, e.what()};
  } catch (const RefusedError& e) {
    return {FailureKind::kRefused, e.what()};
  } catch (const Error& e) {
    return {FailureKind::kOutput, e.what()};
  } catch (const c10::Error& e) {
    return {FailureKind::kInternal, std::string("LibTorch: ") + e.what_without_backtrace()};
  } catch (const std::exception& e) {
    return {FailureKind::kInternal, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {FailureKind::kInternal, "internal error: an unknown exception"};
  }
}

}  // namespace sparktorch
