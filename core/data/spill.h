#ifndef SPARKTORCH_CORE_DATA_SPILL_H_
#define SPARKTORCH_CORE_DATA_SPILL_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace sparktorch {

// How much anonymous memory a job's rows may take, and where the rows beyond it go: a file
// in a local directory that nobody else can open and that disappears with the process, killed
// or not (opened with O_TMPFILE, or created and unlinked at once). Its pages are page cache,
// which the kernel reclaims under pressure and reads back when training visits them again.
struct SpillOptions {
  size_t memory_bytes = 0;  // rows' anonymous memory before they go to a file
  std::string dir;          // where the file goes
};

// 128 MiB, or an eighth of the memory limit of this process's cgroup (cgroup v2 memory.max,
// as YARN and Kubernetes set it for an executor's container) when that is lower. `source` is
// set to how it was chosen, for the log.
size_t DefaultRowMemory(std::string* source);

// The executor's first local directory, as Spark finds its own (Utils.getConfiguredLocalDirs):
// LOCAL_DIRS in a YARN container (CONTAINER_ID set), else SPARK_EXECUTOR_DIRS (':'-separated,
// a standalone worker's executors), else SPARK_LOCAL_DIRS (comma-separated); else TMPDIR, else
// /tmp.
std::string DefaultSpillDir();

// "1.5 GB", "640 MB", "12 kB": decimal units, as the logs state sizes.
std::string SizeText(uint64_t bytes);

// The anonymous memory left to one job's row buffers, and the files they spill to.
class SpillBudget {
 public:
  explicit SpillBudget(SpillOptions options) : options_(std::move(options)) {}

  // Takes `bytes` of what is left: false, taking nothing, when they would go beyond it.
  bool Take(size_t bytes);
  void Give(size_t bytes) { used_ -= bytes; }

  // A new, nameless, read-write file in the spill directory. Throws SpillError naming the
  // directory ("cannot spill rows to DIR: Permission denied ...").
  int OpenFile();
  // Writes bytes[0..n) at the end of `fd`. Throws SpillError (a full disk, say).
  void Write(int fd, const void* bytes, size_t n);

  const SpillOptions& options() const { return options_; }
  uint64_t spilled_bytes() const { return spilled_; }

 private:
  [[noreturn]] void Fail(const std::string& what) const;

  SpillOptions options_;
  size_t used_ = 0;
  uint64_t spilled_ = 0;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DATA_SPILL_H_
