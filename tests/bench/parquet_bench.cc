// Parquet read throughput: ParquetRowReader over whole files, as a training task reads them
// (features "features", label "label"). The files are the arguments after the benchmark's own
// flags, or $PARQUET_BENCH_FILES (space-separated); without either, the Spark-written fixture of
// tests/formats/data/parquet. For the Fashion-MNIST numbers of README.md ("Our reader, or
// Arrow's?"), give the part files of examples/spark_fashion_mnist.sh's
// out/spark/fashion_train.parquet (sparse vectors) or of a dense write (784 doubles a row,
// dictionary-encoded). Items are rows; bytes are the files' sizes; reader_peak_MB is how far the
// process's peak resident memory (VmHWM) rose above its resident memory before reading: what
// the reader holds at once, a page of each column it reads (decoded), whatever the files' rows
// and row groups.

#include <benchmark/benchmark.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/parquet/parquet_rows.h"
#include "formats/row.h"
#include "formats/row_format.h"

namespace sparktorch {
namespace {

std::vector<std::string>& Files() {
  static std::vector<std::string> files;
  return files;
}

// A field of /proc/self/status in kB ("VmRSS", "VmHWM"); 0 where there is none.
double StatusKb(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::strtod(line.c_str() + field.size() + 1, nullptr);
  }
  return 0;
}

void BM_ReadRows(benchmark::State& state) {
  const double rss_before = StatusKb("VmRSS");
  RowFormat format;
  format.kind = RowFormatKind::kParquet;
  int64_t rows = 0;
  int64_t bytes = 0;
  float checksum = 0;
  for (auto _ : state) {
    for (const std::string& path : Files()) {
      parquet::ParquetRowReader reader(path, format, 0);
      Row row;
      while (reader.Next(&row)) {
        ++rows;
        checksum += row.features[row.features.size() / 2];
      }
      struct stat st;
      if (stat(path.c_str(), &st) == 0) bytes += st.st_size;
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(rows);
  state.SetBytesProcessed(bytes);
  state.counters["reader_peak_MB"] = (StatusKb("VmHWM") - rss_before) / 1024;
}
BENCHMARK(BM_ReadRows)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sparktorch

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::string>& files = sparktorch::Files();
  for (int i = 1; i < argc; ++i) files.push_back(argv[i]);
  if (files.empty() && std::getenv("PARQUET_BENCH_FILES") != nullptr) {
    std::istringstream in(std::getenv("PARQUET_BENCH_FILES"));
    for (std::string path; in >> path;) files.push_back(path);
  }
  if (files.empty()) files.push_back(SPARKTORCH_PARQUET_FIXTURE);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
