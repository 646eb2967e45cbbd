// Row parser throughput on Fashion-MNIST rows: a label 0-9 and 784 pixels p/255 printed with at
// most 4 decimals ("0.502", "1", "0.0039", "0"), as examples/prepare_fashion_mnist.py writes them.
// The rows are the first 2000 images of Debian's dataset-fashion-mnist when it is installed;
// otherwise synthetic rows with about half the pixels 0 at random places (harder on the csv
// parser than real images, whose zeros come in runs). The same rows in every format; MB/s counts
// input bytes (newlines included), items are rows.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/evp.h>
#include <zlib.h>

#include "formats/base64.h"
#include "formats/line_reader.h"
#include "formats/row.h"
#include "formats/row_format.h"
#include "formats/row_parser.h"

namespace sparktorch {
namespace {

constexpr int kRows = 2000;
constexpr int kPixels = 784;

// Lines of one format, held in one buffer as a file would hold them.
struct Lines {
  std::string text;  // every line followed by '\n'
  std::vector<std::string_view> lines;

  void Add(const std::string& line) { text += line + "\n"; }
  void Index() {
    size_t begin = 0;
    for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', begin)) {
      lines.emplace_back(text.data() + begin, nl - begin);
      begin = nl + 1;
    }
  }
};

struct Data {
  Lines csv, libsvm, vector, jsonl, compact;
};

std::string Pixel(int p) {
  if (p == 0) return "0";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.4f", p / 255.0);
  std::string text = buf;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

// The whole of a gzip file, or empty when it cannot be read.
std::string ReadGzip(const char* path) {
  std::string bytes;
  gzFile f = gzopen(path, "rb");
  if (f == nullptr) return bytes;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) bytes.append(buf, n);
  gzclose(f);
  return bytes;
}

// Labels and pixels of the first kRows Fashion-MNIST training images, or synthetic ones.
void MakeImages(std::vector<int>* labels, std::vector<std::vector<int>>* images) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  const std::string image_bytes = ReadGzip((dir + "train-images-idx3-ubyte.gz").c_str());
  const std::string label_bytes = ReadGzip((dir + "train-labels-idx1-ubyte.gz").c_str());
  const bool real = image_bytes.size() >= 16 + size_t{kRows} * kPixels &&
                    label_bytes.size() >= 8 + size_t{kRows};
  std::mt19937 rng(20240611);
  for (int r = 0; r < kRows; ++r) {
    labels->push_back(real ? static_cast<unsigned char>(label_bytes[8 + r])
                           : static_cast<int>(rng() % 10));
    std::vector<int> pixels(kPixels);
    for (int i = 0; i < kPixels; ++i) {
      const size_t at = 16 + static_cast<size_t>(r) * kPixels + i;
      pixels[i] = real ? static_cast<unsigned char>(image_bytes[at])
                       : (rng() % 2 == 0 ? 0 : 1 + static_cast<int>(rng() % 255));
    }
    images->push_back(std::move(pixels));
  }
  std::fprintf(stderr, "parser_bench: %s rows\n", real ? "Fashion-MNIST" : "synthetic");
}

Data MakeData() {
  std::vector<int> labels;
  std::vector<std::vector<int>> images;
  MakeImages(&labels, &images);
  Data data;
  for (int r = 0; r < kRows; ++r) {
    const int label = labels[r];
    std::vector<std::string> pixels(kPixels);
    std::vector<float> values = {static_cast<float>(label)};
    for (int i = 0; i < kPixels; ++i) {
      pixels[i] = Pixel(images[r][i]);
      values.push_back(std::strtof(pixels[i].c_str(), nullptr));
    }
    std::string csv = std::to_string(label);
    std::string libsvm = std::to_string(label);
    std::string vector = "(" + std::to_string(label) + ".0,[";
    std::string jsonl = "{\"label\":" + std::to_string(label) + ",\"features\":[";
    for (int i = 0; i < kPixels; ++i) {
      const std::string& pixel = pixels[i];
      csv += "," + pixel;
      if (pixel != "0") libsvm += " " + std::to_string(i + 1) + ":" + pixel;
      // Python's str() of a float always has a point: 0.0, 1.0, 0.502.
      vector += (i > 0 ? "," : "") + pixel + (pixel.find('.') == std::string::npos ? ".0" : "");
      jsonl += (i > 0 ? "," : "") + pixel;
    }
    std::string compact;
    Base64Encode(std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * 4),
                 &compact);
    data.csv.Add(csv);
    data.libsvm.Add(libsvm);
    data.vector.Add(vector + "])");
    data.jsonl.Add(jsonl + "]}");
    data.compact.Add(compact);
  }
  for (Lines* lines : {&data.csv, &data.libsvm, &data.vector, &data.jsonl, &data.compact}) {
    lines->Index();
  }
  return data;
}

const Data& TheData() {
  static const Data* data = new Data(MakeData());
  return *data;
}

void BM_Parse(benchmark::State& state, RowFormatKind kind, const Lines Data::*member) {
  const Lines& lines = TheData().*member;
  RowFormat format;
  format.kind = kind;
  format.num_features = kPixels;
  std::unique_ptr<RowParser> parser = MakeRowParser(format);
  Row row;
  for (auto _ : state) {
    for (std::string_view line : lines.lines) {
      parser->Parse(line, &row);
      benchmark::DoNotOptimize(row.features.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * lines.text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * lines.lines.size()));
}
BENCHMARK_CAPTURE(BM_Parse, csv, RowFormatKind::kCsv, &Data::csv)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Parse, libsvm, RowFormatKind::kLibsvm, &Data::libsvm)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Parse, vector, RowFormatKind::kVector, &Data::vector)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Parse, jsonl, RowFormatKind::kJsonl, &Data::jsonl)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Parse, compact, RowFormatKind::kCompact, &Data::compact)
    ->Unit(benchmark::kMillisecond);

// Hands out a string it does not own in 64 KiB reads, as a pipe would.
class ViewByteReader : public ByteReader {
 public:
  explicit ViewByteReader(std::string_view data) : data_(data) {}
  size_t Read(char* buf, size_t n) override {
    const size_t count = std::min({n, size_t{65536}, data_.size()});
    std::memcpy(buf, data_.data(), count);
    data_.remove_prefix(count);
    return count;
  }

 private:
  std::string_view data_;
};

void BM_LineReader(benchmark::State& state) {
  const Lines& lines = TheData().csv;
  for (auto _ : state) {
    LineReader reader(std::make_unique<ViewByteReader>(lines.text), "bench", 1 << 20);
    std::string_view line;
    while (reader.Next(&line) == LineReader::Status::kLine) benchmark::DoNotOptimize(line.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * lines.text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * lines.lines.size()));
}
BENCHMARK(BM_LineReader)->Unit(benchmark::kMillisecond);

void BM_CsvFromBytes(benchmark::State& state) {
  const Lines& lines = TheData().csv;
  RowFormat format;
  format.num_features = kPixels;
  std::unique_ptr<RowParser> parser = MakeRowParser(format);
  Row row;
  for (auto _ : state) {
    LineReader reader(std::make_unique<ViewByteReader>(lines.text), "bench", 1 << 20);
    std::string_view line;
    while (reader.Next(&line) == LineReader::Status::kLine) {
      parser->Parse(line, &row);
      benchmark::DoNotOptimize(row.features.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * lines.text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * lines.lines.size()));
}
BENCHMARK(BM_CsvFromBytes)->Unit(benchmark::kMillisecond);

void BM_Base64Decode(benchmark::State& state) {
  const Lines& lines = TheData().compact;
  std::vector<char> out((kPixels + 1) * 4);
  for (auto _ : state) {
    for (std::string_view line : lines.lines) {
      benchmark::DoNotOptimize(Base64Decode(line, out.data()));
      benchmark::ClobberMemory();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * lines.text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * lines.lines.size()));
}
BENCHMARK(BM_Base64Decode)->Unit(benchmark::kMillisecond);

// The same lines through OpenSSL's EVP_DecodeBlock, as Base64Decode would call it: EVP_DecodeBlock
// writes every group whole, the zero bytes that padding stands for too, so the padding is counted
// apart (Base64DecodedSize, which the parsers call first anyway), and the output has room for two
// more bytes. Checks once that both decode every line to the same bytes.
void BM_Base64DecodeOpenSsl(benchmark::State& state) {
  const Lines& lines = TheData().compact;
  std::vector<unsigned char> out((kPixels + 1) * 4 + 2);
  std::vector<char> ours((kPixels + 1) * 4);
  for (std::string_view line : lines.lines) {
    const std::optional<size_t> size = Base64DecodedSize(line);
    const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(line.data()),
                                  static_cast<int>(line.size()));
    if (!size || Base64Decode(line, ours.data()) || n < 0 || static_cast<size_t>(n) < *size ||
        std::memcmp(out.data(), ours.data(), *size) != 0) {
      state.SkipWithError("EVP_DecodeBlock and Base64Decode disagree");
      return;
    }
  }
  for (auto _ : state) {
    for (std::string_view line : lines.lines) {
      benchmark::DoNotOptimize(Base64DecodedSize(line));
      benchmark::DoNotOptimize(EVP_DecodeBlock(
          out.data(), reinterpret_cast<const unsigned char*>(line.data()),
          static_cast<int>(line.size())));
      benchmark::ClobberMemory();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * lines.text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * lines.lines.size()));
}
BENCHMARK(BM_Base64DecodeOpenSsl)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sparktorch
