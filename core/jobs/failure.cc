#include "core/jobs/failure.h"

#include <exception>

#include <c10/util/Exception.h>

#include "core/net/errors.h"
#include "formats/error.h"

namespace sparktorch {

std::string MessageOf(const Error& e) {
  const char* flag = nullptr;
  switch (e.setting()) {
    case RowSetting::kNone: return e.what();
    case RowSetting::kNumFeatures: flag = "--num-features"; break;
    case RowSetting::kMaxLineBytes: flag = "--max-line-bytes"; break;
    case RowSetting::kFeaturesField: flag = "--features-field"; break;
    case RowSetting::kLabelField: flag = "--label-field"; break;
    case RowSetting::kIdField: flag = "--id-field"; break;
    case RowSetting::kAllowNan: return std::string(e.what()) + " (--allow-nan accepts it)";
  }
  return std::string(e.what()) + " (" + flag + ")";
}

JobFailure CurrentJobFailure() {
  try {
    throw;
  } catch (const UsageError& e) {
    return {FailureKind::kUsage, MessageOf(e)};
  } catch (const InputError& e) {
    return {FailureKind::kInput, MessageOf(e)};
  } catch (const SpecError& e) {
    return {FailureKind::kSpec, MessageOf(e)};
  } catch (const ModelError& e) {
    return {FailureKind::kModel, MessageOf(e)};
  } catch (const DeviceError& e) {
    return {FailureKind::kDevice, MessageOf(e)};
  } catch (const SpillError& e) {
    return {FailureKind::kSpill, MessageOf(e)};
  } catch (const PeerError& e) {
    return {e.peer_failed() ? FailureKind::kPeerFailed : FailureKind::kPeerLost, MessageOf(e)};
  } catch (const RendezvousError& e) {
    return {FailureKind::kRendezvous, MessageOf(e)};
  } catch (const RefusedError& e) {
    return {FailureKind::kRefused, MessageOf(e)};
  } catch (const Error& e) {
    return {FailureKind::kOutput, MessageOf(e)};
  } catch (const c10::Error& e) {
    return {FailureKind::kInternal, std::string("LibTorch: ") + e.what_without_backtrace()};
  } catch (const std::exception& e) {
    return {FailureKind::kInternal, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {FailureKind::kInternal, "internal error: an unknown exception"};
  }
}

}  // namespace sparktorch
