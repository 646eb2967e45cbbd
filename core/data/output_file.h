// Writing a whole file for another process to read (the model, serve's --port-file).
#pragma once

#include <string>

namespace sparktorch {

// Writes `bytes` to `path` whole or not at all: a regular file (or a new one) is written beside
// it as PATH.tmp and renamed over it, so a reader never sees half a file. Anything else that
// exists at `path`, /dev/null or a FIFO say, is written to directly: a rename would replace it.
// Returns "" on success, else why not (strerror).
std::string WriteOutputFile(const std::string& path, const std::string& bytes);

}  // namespace sparktorch
