#include "core/data/input_files.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "formats/error.h"

namespace sparktorch {
namespace {

constexpr unsigned kGzipBufferBytes = 1 << 20;

// Reads through zlib, which passes data that is not gzip through unchanged.
class GzipByteReader : public ByteReader {
 public:
  GzipByteReader(gzFile file, std::string name) : file_(file), name_(std::move(name)) {
    gzbuffer(file_, kGzipBufferBytes);
  }
  ~GzipByteReader() override { gzclose(file_); }

  size_t Read(char* buf, size_t n) override {
    int got = gzread(file_, buf, static_cast<unsigned>(std::min<size_t>(n, 1u << 30)));
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file_, &code);
      if (code == Z_ERRNO) message = std::strerror(errno);
      throw InputError(name_ + ": read error: " + message);
    }
    return static_cast<size_t>(got);
  }

 private:
  gzFile file_;
  std::string name_;
};

// Reads a descriptor with read(2): whatever has arrived, without waiting for a buffer's worth
// (a stream of groups, each answered before the next comes). No gzip.
class FdByteReader : public ByteReader {
 public:
  FdByteReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  ~FdByteReader() override { close(fd_); }

  size_t Read(char* buf, size_t n) override {
    for (;;) {
      ssize_t got = ::read(fd_, buf, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) throw InputError(name_ + ": read error: " + std::strerror(errno));
    }
  }

 private:
  int fd_;
  std::string name_;
};

bool HasGlobChars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

}  // namespace

std::string InputDisplayName(const std::string& path) {
  return path == kStdinName ? "stdin" : path;
}

std::vector<std::string> ExpandInputPaths(const std::vector<std::string>& patterns,
                                          bool directories) {
  if (patterns.empty()) return {kStdinName};
  std::vector<std::string> paths;
  for (const std::string& pattern : patterns) {
    if (pattern == kStdinName) {
      paths.push_back(pattern);
      continue;
    }
    if (!HasGlobChars(pattern)) {
      struct stat st;
      if (stat(pattern.c_str(), &st) != 0) {
        throw InputError(pattern + ": " + std::strerror(errno));
      }
      if (S_ISDIR(st.st_mode) && !directories) {
        throw InputError(pattern + ": is a directory, not a file of rows");
      }
      paths.push_back(pattern);
      continue;
    }
    glob_t matches{};
    int rc = glob(pattern.c_str(), 0, nullptr, &matches);
    if (rc == GLOB_NOMATCH) {
      globfree(&matches);
      throw InputError(pattern + ": no file matches this pattern");
    }
    if (rc != 0) {
      globfree(&matches);
      throw InputError(pattern + ": cannot expand this pattern");
    }
    std::vector<std::string> found(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
    globfree(&matches);
    std::sort(found.begin(), found.end());
    paths.insert(paths.end(), found.begin(), found.end());
  }
  return paths;
}

std::unique_ptr<ByteReader> OpenInput(const std::string& path, InputReads reads) {
  std::string name = InputDisplayName(path);
  int fd = path == kStdinName ? dup(STDIN_FILENO) : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(name + ": " + std::strerror(errno));
  if (reads == InputReads::kAsItComes) return std::make_unique<FdByteReader>(fd, std::move(name));
  gzFile file = gzdopen(fd, "rb");
  if (file == nullptr) {
    close(fd);
    throw InputError(name + ": cannot open for reading");
  }
  return std::make_unique<GzipByteReader>(file, std::move(name));
}

}  // namespace sparktorch
