#ifndef SPARKTORCH_CORE_DATA_INPUT_FILES_H_
#define SPARKTORCH_CORE_DATA_INPUT_FILES_H_

#include <memory>
#include <string>
#include <vector>

#include "formats/line_reader.h"

namespace sparktorch {

// The name standing for standard input among the inputs.
inline constexpr const char* kStdinName = "-";

// Expands shell-style globs in `patterns`, in order; each pattern's matches are sorted. A
// pattern without glob characters is kept as given. An empty list means stdin. Throws
// InputError for a glob that matches nothing, a file that does not exist, or a directory
// unless `directories` (Parquet inputs: a directory of part files stands for them).
std::vector<std::string> ExpandInputPaths(const std::vector<std::string>& patterns,
                                          bool directories = false);

// How an input is read: through zlib in large blocks (gzip decompressed transparently, by
// content, not by name), or as its bytes arrive (a pipe answered group by group; no gzip).
enum class InputReads { kBuffered, kAsItComes };

// Opens `path` ("-" for stdin) for reading. Throws InputError naming the path when it cannot
// be opened.
std::unique_ptr<ByteReader> OpenInput(const std::string& path,
                                      InputReads reads = InputReads::kBuffered);

// How messages name an input: "stdin" for "-", else the path.
std::string InputDisplayName(const std::string& path);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DATA_INPUT_FILES_H_
