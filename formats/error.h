#ifndef SPARKTORCH_FORMATS_ERROR_H_
#define SPARKTORCH_FORMATS_ERROR_H_

#include <stdexcept>
#include <string>

namespace sparktorch {

// The row-format setting (formats/row_format.h) whose change is the way out of an error: a
// message from formats/ says what is wrong, and the layer that names the flags adds which one to
// change (core/jobs/failure.h, MessageOf). formats/ itself names no flag.
enum class RowSetting {
  kNone,
  kNumFeatures,    // RowFormat::num_features
  kMaxLineBytes,   // the row reader's limit on a line or record
  kFeaturesField,  // RowFormat::features_field
  kLabelField,     // RowFormat::label_field
  kIdField,        // RowFormat::id_field
  kAllowNan,       // RowFormat::allow_nan
};

// The kinds of failure sparktorch reports. Each kind has its own process exit code, which only
// cli/ decides (see cli/exit_codes.h and the man page). Messages are one line and name the thing
// at fault: a file and line, a layer index and field, a setting.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, RowSetting setting = RowSetting::kNone)
      : std::runtime_error(message), setting_(setting) {}
  RowSetting setting() const { return setting_; }

 private:
  RowSetting setting_;
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
  RowError(const std::string& message, size_t column, RowSetting setting = RowSetting::kNone)
      : Error(message, setting), column_(column) {}
  size_t column() const { return column_; }

 private:
  size_t column_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_ERROR_H_
