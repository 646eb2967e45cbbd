#ifndef SPARKTORCH_FORMATS_ERROR_H_
#define SPARKTORCH_FORMATS_ERROR_H_

#include <stdexcept>
#include <string>

namespace sparktorch {

// The kinds of failure sparktorch reports. Each kind has its own process exit code, which only
// cli/ decides (see cli/exit_codes.h and the man page). Messages are one line and name the thing
// at fault: a file and line, a layer index and field, a flag.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A flag, or a combination of flags, that cannot work.
class UsageError : public Error {
 public:
  using Error::Error;
};

// Rows that cannot be read: a malformed row, no rows at all, an unreadable input file.
class InputError : public Error {
 public:
  using Error::Error;
};

// A model spec or training configuration that cannot be compiled.
class SpecError : public Error {
 public:
  using Error::Error;
};

// A model file or record stream that is unreadable, corrupt or inconsistent.
class ModelError : public Error {
 public:
  using Error::Error;
};

// A device that this build or this machine does not have (cuda without CUDA, say).
class DeviceError : public Error {
 public:
  using Error::Error;
};

// Rows beyond a rank's memory bound that cannot go to its spill file: the local directory
// cannot be written, or the disk is full (core/data/spill.h).
class SpillError : public Error {
 public:
  using Error::Error;
};

// A row parser's complaint about one line. The row source adds where the line came from
// ("stdin:17:") and turns it into an InputError, or counts and skips the row.
// `column` is the 1-based byte column of the fault within the line, or 0 when the fault is the
// line as a whole (a wrong feature count, say).
class RowError : public Error {
 public:
  RowError(const std::string& message, size_t column) : Error(message), column_(column) {}
  size_t column() const { return column_; }

 private:
  size_t column_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_ERROR_H_
