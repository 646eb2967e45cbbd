#ifndef SPARKTORCH_CORE_FILES_H_
#define SPARKTORCH_CORE_FILES_H_

#include <string>

namespace sparktorch {

// Whether `path` is a regular file (following links): a model beside its config, the PMI library
// beside the binary.
bool FileExists(const std::string& path);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_FILES_H_
