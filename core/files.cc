#include "core/files.h"

#include <sys/stat.h>

namespace sparktorch {

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace sparktorch
