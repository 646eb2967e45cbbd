// libFuzzer target for the Parquet reader (formats/parquet/): the files a Spark job's tasks
// read themselves. The seeds are the fixtures Spark and other writers wrote
// (tests/formats/data/parquet, tests/formats/data/parquet_codecs) and apache/parquet-testing's
// files in corpus/parquet (tests/fuzz/README.md).
//
// The input is a whole file, written to a memfd and opened by its /proc path as the reader
// opens any file, then read row by row with the column selections below. InputError (a file
// the reader refuses) and RowError (a bad row) are its ways to refuse; anything else that
// escapes is a finding, and so is a row that breaks the promises of formats/row.h.

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "formats/error.h"
#include "formats/parquet/parquet_rows.h"
#include "formats/row.h"
#include "formats/row_format.h"

namespace {

using sparktorch::RowFormat;

// No label column when `label` is empty.
RowFormat Parquet(const char* features, const char* label, const char* id) {
  RowFormat format;
  format.kind = sparktorch::RowFormatKind::kParquet;
  format.features_field = features;
  format.label_field = label;
  if (*label == '\0') format.label = sparktorch::LabelPresence::kNone;
  format.id_field = id;
  return format;
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "parquet_fuzzer: %s\n", what);
    std::abort();
  }
}

// Feature values one ReadAll passes over at most. A sparse vector may be as large as
// 2^28 (kMaxVectorSize): legitimate, and densified, so a small file can hold many rows of
// millions of features; reading them all would only time the fuzzer out, finding nothing.
constexpr int64_t kMaxFeatureValues = int64_t{1} << 24;

// Reads the rows of `path`, at most `num_features` features each (0: learnt), until it has
// passed over kMaxFeatureValues values.
void ReadAll(const std::string& path, const RowFormat& format, int64_t num_features) {
  try {
    sparktorch::parquet::ParquetRowReader reader(path, format, num_features);
    sparktorch::Row row;
    int64_t learnt = 0;
    int64_t values = 0;
    for (int rows = 0; rows < 100000 && values < kMaxFeatureValues; ++rows) {
      try {
        if (!reader.Next(&row)) break;
      } catch (const sparktorch::RowError&) {
        continue;
      }
      const int64_t n = static_cast<int64_t>(row.features.size());
      values += n;
      Check(n > 0, "a row without features");
      Check(num_features == 0 || n == num_features, "a row of the wrong width");
      if (learnt == 0) learnt = n;
      Check(n == learnt, "rows of different widths");
      for (float v : row.features) Check(std::isfinite(v), "a non-finite feature");
      for (float v : row.label) Check(std::isfinite(v), "a non-finite label");
    }
  } catch (const sparktorch::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("parquet_fuzzer", 0);
  if (fd < 0) std::abort();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    std::abort();
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  ReadAll(path, Parquet("features", "label", "id"), 64);
  ReadAll(path, Parquet("features", "label", ""), 0);
  ReadAll(path, Parquet("e,a,b,c,d", "label", "name"), 64);
  ReadAll(path, Parquet("x,features", "label", "s"), 64);
  // The columns of the other writers' files: zstd_rust and brotli_arrow; the LZ4 files.
  ReadAll(path, Parquet("x,e", "label", "id"), 0);
  ReadAll(path, Parquet("c0,v11", "", "c1"), 0);
  // The columns of encodings_v1/v2.parquet: DELTA_BINARY_PACKED, BYTE_STREAM_SPLIT, RLE booleans.
  ReadAll(path, Parquet("i64,i32s,u32,f32,b,e", "u64", "label"), 0);
  return 0;
}
