#ifndef SPARKTORCH_CORE_VERSION_H_
#define SPARKTORCH_CORE_VERSION_H_

namespace sparktorch {

// Set by CMake from project(VERSION ...).
inline constexpr const char* kVersion = SPARKTORCH_VERSION;

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_VERSION_H_
