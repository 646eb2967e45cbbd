#include "core/data/spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "formats/error.h"

namespace sparktorch {
namespace {

constexpr size_t kDefaultRowMemory = size_t{128} << 20;

// memory.max of this process's cgroup (v2), or 0 when there is none or it says "max".
uint64_t CgroupMemoryLimit() {
  std::ifstream cgroup("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroup, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    std::ifstream max("/sys/fs/cgroup" + line.substr(3) + "/memory.max");
    std::string text;
    if (!(max >> text) || text == "max") return 0;
    return std::strtoull(text.c_str(), nullptr, 10);
  }
  return 0;
}

}  // namespace

size_t DefaultRowMemory(std::string* source) {
  const uint64_t limit = CgroupMemoryLimit();
  if (limit > 0 && limit / 8 < kDefaultRowMemory) {
    *source = "an eighth of the cgroup's memory.max of " + SizeText(limit);
    return static_cast<size_t>(limit / 8);
  }
  *source = "the default";
  return kDefaultRowMemory;
}

std::string DefaultSpillDir() {
  // As Spark's Utils.getConfiguredLocalDirs picks an executor's local directories.
  const auto first = [](const char* name, char separator) -> std::string {
    const char* dirs = std::getenv(name);
    if (dirs == nullptr) return "";
    const std::string all(dirs);
    return all.substr(0, all.find(separator));
  };
  std::string dir;
  if (std::getenv("CONTAINER_ID") != nullptr) dir = first("LOCAL_DIRS", ',');  // YARN
  if (dir.empty()) dir = first("SPARK_EXECUTOR_DIRS", ':');  // standalone
  if (dir.empty()) dir = first("SPARK_LOCAL_DIRS", ',');     // Kubernetes, spark-env.sh
  if (dir.empty()) dir = first("TMPDIR", '\0');
  return dir.empty() ? "/tmp" : dir;
}

std::string SizeText(uint64_t bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 4) {
    value /= 1000;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.3g %s", value, units[unit]);
  return text;
}

bool SpillBudget::Take(size_t bytes) {
  if (used_ + bytes > options_.memory_bytes) return false;
  used_ += bytes;
  return true;
}

int SpillBudget::OpenFile() {
  const std::string& dir = options_.dir;
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
    // A file system without O_TMPFILE: a named file, unlinked before anything is written.
    std::string path = dir + "/sparktorch-spill-XXXXXX";
    fd = mkostemp(path.data(), O_CLOEXEC);
    if (fd >= 0) unlink(path.c_str());
  }
  if (fd < 0) {
    Fail(std::string(std::strerror(errno)) +
         " (--spill-dir names a directory for them)");
  }
  return fd;
}

void SpillBudget::Write(int fd, const void* bytes, size_t n) {
  const char* p = static_cast<const char*>(bytes);
  while (n > 0) {
    const ssize_t wrote = write(fd, p, n);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) {
      Fail(std::string(std::strerror(errno)) + " after " + SizeText(spilled_) +
           " (a larger --row-memory keeps more rows in memory; --spill-dir puts them elsewhere)");
    }
    p += wrote;
    n -= static_cast<size_t>(wrote);
    spilled_ += static_cast<uint64_t>(wrote);
  }
}

void SpillBudget::Fail(const std::string& what) const {
  throw SpillError("cannot spill rows beyond " + SizeText(options_.memory_bytes) + " of memory to " +
                   options_.dir + ": " + what);
}

}  // namespace sparktorch
