#ifndef SPARKTORCH_CORE_VERSION_H_
#define SPARKTORCH_CORE_VERSION_H_

#include <torch/version.h>

namespace sparktorch {

// Set by CMake from project(VERSION ...).
inline constexpr const char* kVersion = SPARKTORCH_VERSION;
// The LibTorch the binary was built against ("1.13.0": Debian's; "2.15.0": a pip wheel's), which
// decides the operators a TorchScript model may call.
inline constexpr const char* kLibTorchVersion = TORCH_VERSION;

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_VERSION_H_
