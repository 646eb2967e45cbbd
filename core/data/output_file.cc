#include "core/data/output_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sparktorch {
namespace {

// Returns "" or strerror(errno) of the first failure.
std::string WriteTo(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return std::strerror(errno);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  int saved = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  return ok ? "" : std::strerror(saved);
}

}  // namespace

std::string WriteOutputFile(const std::string& path, const std::string& bytes) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return WriteTo(path, bytes);
  const std::string tmp = path + ".tmp";
  std::string why = WriteTo(tmp, bytes);
  if (why.empty() && std::rename(tmp.c_str(), path.c_str()) != 0) why = std::strerror(errno);
  if (!why.empty()) std::remove(tmp.c_str());
  return why;
}

}  // namespace sparktorch
