#include "core/data/row_source.h"

#include <stdlib.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/data/dataset.h"
#include "core/data/input_files.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

// A fresh directory for one test's files, removed with what it holds.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/row_source_test.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

  // Writes `text` to the file `name` in this directory and returns its path.
  std::string Write(const std::string& name, const std::string& text) const {
    std::string path = path_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // Writes `text` gzip-compressed to the file `name` and returns its path.
  std::string WriteGzip(const std::string& name, const std::string& text) const {
    std::string path = path_ + "/" + name;
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    EXPECT_EQ(gzclose(f), Z_OK);
    return path;
  }

 private:
  std::string path_;
};

// A csv row format: the label in column 0, then the features.
RowSourceOptions Csv(BadRowPolicy policy = BadRowPolicy::kFail) {
  RowSourceOptions options;
  options.format.kind = RowFormatKind::kCsv;
  options.on_bad_row = policy;
  return options;
}

struct ReadRow {
  std::vector<float> label;
  std::vector<float> features;
  bool operator==(const ReadRow& o) const { return label == o.label && features == o.features; }
};

std::ostream& operator<<(std::ostream& os, const ReadRow& r) {
  os << "{label";
  for (float v : r.label) os << " " << v;
  os << "; features";
  for (float v : r.features) os << " " << v;
  return os << "}";
}

std::vector<ReadRow> ReadAll(RowSource& source) {
  std::vector<ReadRow> rows;
  Row row;
  while (source.Next(&row)) rows.push_back({row.label, row.features});
  return rows;
}

// What reading all of `source` throws as an InputError, or "" when it does not throw.
std::string InputErrorOf(RowSource& source) {
  try {
    ReadAll(source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string ExpandErrorOf(const std::vector<std::string>& patterns) {
  try {
    ExpandInputPaths(patterns);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RowSource, ReadsInputsInTheOrderGiven) {
  TempDir dir;
  std::string b = dir.Write("b.csv", "0,1.5,2\n1,3,4\n");
  std::string a = dir.Write("a.csv", "2,5,6");  // no newline at the end
  RowSource source({b, a}, Csv());
  EXPECT_EQ(ReadAll(source), (std::vector<ReadRow>{{{0}, {1.5f, 2}}, {{1}, {3, 4}}, {{2}, {5, 6}}}));
  EXPECT_EQ(source.rows_read(), 3);
  EXPECT_EQ(source.rows_skipped(), 0);
  EXPECT_EQ(source.num_features(), 2);
}

TEST(RowSource, NumFeaturesIsZeroBeforeAnyRow) {
  TempDir dir;
  RowSource source({dir.Write("a.csv", "0,1,2\n")}, Csv());
  EXPECT_EQ(source.num_features(), 0);
  Row row;
  ASSERT_TRUE(source.Next(&row));
  EXPECT_EQ(source.num_features(), 2);
  EXPECT_FALSE(source.Next(&row));
  EXPECT_FALSE(source.Next(&row));  // stays at the end
}

TEST(RowSource, ReadsGzipInputByContent) {
  TempDir dir;
  std::string gz = dir.WriteGzip("part.csv.gz", "0,1,2\n1,3,4\n");
  std::string unnamed = dir.WriteGzip("part.csv", "2,5,6\n");  // gzip without the name
  RowSource source({gz, unnamed}, Csv());
  EXPECT_EQ(ReadAll(source), (std::vector<ReadRow>{{{0}, {1, 2}}, {{1}, {3, 4}}, {{2}, {5, 6}}}));
}

TEST(RowSource, SkipsTheHeaderOfEachCsvInput) {
  TempDir dir;
  std::string a = dir.Write("a.csv", "label,x,y\n0,1,2\n");
  std::string b = dir.Write("b.csv", "label,x,y\n1,3,4\n2,5,6\n");
  RowSourceOptions options = Csv();
  options.format.header = true;
  RowSource source({a, b}, options);
  EXPECT_EQ(ReadAll(source), (std::vector<ReadRow>{{{0}, {1, 2}}, {{1}, {3, 4}}, {{2}, {5, 6}}}));
}

TEST(RowSource, HeaderLinesCountInLineNumbers) {
  TempDir dir;
  std::string a = dir.Write("a.csv", "label,x,y\n0,1,2\n1,x,4\n");
  RowSourceOptions options = Csv();
  options.format.header = true;
  RowSource source({a}, options);
  EXPECT_EQ(InputErrorOf(source), a + ":3:3: expected a number, got \"x\"");
}

TEST(RowSource, BadRowFailsWithFileLineAndColumn) {
  TempDir dir;
  std::string a = dir.Write("a.csv", "0,1,2\n");
  std::string b = dir.Write("b.csv", "1,3,4\n1,5,abc\n2,7,8\n");
  RowSource source({a, b}, Csv());
  EXPECT_EQ(InputErrorOf(source), b + ":2:5: expected a number, got \"abc\"");
}

TEST(RowSource, WrongFeatureCountFailsWithFileAndLine) {
  TempDir dir;
  std::string a = dir.Write("a.csv", "0,1,2\n1,3\n");
  RowSource source({a}, Csv());
  EXPECT_EQ(InputErrorOf(source), a + ":2: expected 3 columns (2 features + 1 label), got 2");
}

TEST(RowSource, BadRowsAreCountedAndSkippedUnderSkip) {
  TempDir dir;
  std::string a = dir.Write("a.csv", "0,1,2\n1,x,4\n\n2,5,6\n1,2\n");
  std::string b = dir.Write("b.csv", "nan,1,1\n1,7,8\n");
  RowSource source({a, b}, Csv(BadRowPolicy::kSkip));
  EXPECT_EQ(ReadAll(source), (std::vector<ReadRow>{{{0}, {1, 2}}, {{2}, {5, 6}}, {{1}, {7, 8}}}));
  EXPECT_EQ(source.rows_read(), 3);
  EXPECT_EQ(source.rows_skipped(), 4);  // "x", the empty line, a short row, a nan label
}

TEST(RowSource, LineOverTheLimitIsABadRow) {
  TempDir dir;
  std::string a = dir.Write("a.csv", "0,1,2\n1,1.00000000001,2\n");
  RowSourceOptions options = Csv();
  options.max_line_bytes = 8;
  RowSource failing({a}, options);
  EXPECT_EQ(InputErrorOf(failing), a + ":2: line longer than 8 bytes (--max-line-bytes)");

  options.on_bad_row = BadRowPolicy::kSkip;
  RowSource skipping({a}, options);
  EXPECT_EQ(ReadAll(skipping), (std::vector<ReadRow>{{{0}, {1, 2}}}));
  EXPECT_EQ(skipping.rows_skipped(), 1);
}

RowCheck LabelBelow(float limit) {
  return [limit](const Row& row) -> std::string {
    if (row.label.at(0) < limit) return "";
    return "label " + std::to_string(static_cast<int>(row.label[0])) + " is too large";
  };
}

TEST(RowSource, RowCheckRejectsRowsWithItsMessage) {
  TempDir dir;
  std::string a = dir.Write("a.csv", "0,1,2\n1,3,4\n5,5,6\n");
  RowSource source({a}, Csv(), LabelBelow(3));
  EXPECT_EQ(InputErrorOf(source), a + ":3: label 5 is too large");
}

TEST(RowSource, RowsRejectedByTheCheckAreSkippedUnderSkip) {
  TempDir dir;
  std::string a = dir.Write("a.csv", "7,1,2\n1,3,4\n5,5,6\n2,7,8\n");
  RowSource source({a}, Csv(BadRowPolicy::kSkip), LabelBelow(3));
  EXPECT_EQ(ReadAll(source), (std::vector<ReadRow>{{{1}, {3, 4}}, {{2}, {7, 8}}}));
  EXPECT_EQ(source.rows_skipped(), 2);
  EXPECT_EQ(source.rows_read(), 2);
}

TEST(RowSource, UnreadableInputFailsNamingIt) {
  TempDir dir;
  std::string missing = dir.path() + "/gone.csv";  // vanished after ExpandInputPaths
  RowSource source({dir.Write("a.csv", "0,1,2\n"), missing}, Csv());
  EXPECT_EQ(InputErrorOf(source), missing + ": No such file or directory");
}

TEST(RowSource, RefusesFormatThatCannotWork) {
  RowSourceOptions options;
  options.format.kind = RowFormatKind::kLibsvm;  // needs num_features
  EXPECT_THROW(RowSource({"-"}, options), UsageError);
}

TEST(ExpandInputPaths, EmptyListMeansStdin) {
  EXPECT_EQ(ExpandInputPaths({}), (std::vector<std::string>{"-"}));
  EXPECT_EQ(InputDisplayName("-"), "stdin");
}

TEST(ExpandInputPaths, SortsEachGlobsMatchesAndKeepsPatternOrder) {
  TempDir dir;
  std::string p2 = dir.Write("part-2.csv", "");
  std::string p10 = dir.Write("part-10.csv", "");
  std::string p1 = dir.Write("part-1.csv", "");
  std::string z = dir.Write("z.csv", "");
  dir.Write("other.txt", "");
  EXPECT_EQ(ExpandInputPaths({z, dir.path() + "/part-*.csv"}),
            (std::vector<std::string>{z, p1, p10, p2}));
  EXPECT_EQ(ExpandInputPaths({dir.path() + "/part-?.csv", "-"}),
            (std::vector<std::string>{p1, p2, "-"}));
}

TEST(ExpandInputPaths, GlobOrderIsTheReadingOrder) {
  TempDir dir;
  dir.Write("part-b.csv", "1,3,4\n");
  dir.Write("part-a.csv", "0,1,2\n");
  RowSource source(ExpandInputPaths({dir.path() + "/part-*.csv"}), Csv());
  EXPECT_EQ(ReadAll(source), (std::vector<ReadRow>{{{0}, {1, 2}}, {{1}, {3, 4}}}));
}

TEST(ExpandInputPaths, RefusesGlobThatMatchesNothing) {
  TempDir dir;
  std::string pattern = dir.path() + "/none-*.csv";
  EXPECT_EQ(ExpandErrorOf({pattern}), pattern + ": no file matches this pattern");
}

TEST(ExpandInputPaths, RefusesMissingFile) {
  TempDir dir;
  std::string path = dir.path() + "/absent.csv";
  EXPECT_EQ(ExpandErrorOf({dir.Write("a.csv", ""), path}), path + ": No such file or directory");
}

TEST(ExpandInputPaths, RefusesDirectory) {
  TempDir dir;
  EXPECT_EQ(ExpandErrorOf({dir.path()}), dir.path() + ": is a directory, not a file of rows");
}

TEST(OpenInput, RefusesMissingFileNamingIt) {
  TempDir dir;
  std::string path = dir.path() + "/absent.csv";
  try {
    OpenInput(path);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": No such file or directory");
  }
}

TEST(ReadDataset, HoldsFeaturesLabelsAndIdsInRowOrder) {
  TempDir dir;
  std::string a = dir.Write("a.csv", "r1,0,1.5,2\nr2,1,3,4\n");
  std::string b = dir.Write("b.csv", "r3,2,5,-6\n");
  RowSourceOptions options = Csv();
  options.format.id_col = 0;
  options.format.label_col = 1;
  RowSource source({a, b}, options);
  Dataset data = ReadDataset(source);
  EXPECT_EQ(data.rows(), 3);
  EXPECT_EQ(data.features.scalar_type(), torch::kFloat32);
  EXPECT_EQ(data.labels.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::equal(data.features, torch::tensor({{1.5f, 2.0f}, {3.0f, 4.0f}, {5.0f, -6.0f}})));
  EXPECT_TRUE(torch::equal(data.labels, torch::tensor({{0.0f}, {1.0f}, {2.0f}})));
  EXPECT_EQ(data.ids, (std::vector<std::string>{"r1", "r2", "r3"}));
}

TEST(ReadDataset, VectorLabelsMakeWideLabelTensor) {
  TempDir dir;
  RowSourceOptions options = Csv();
  options.format.label_col = -2;
  options.format.label_count = 2;
  RowSource source({dir.Write("a.csv", "1,2,3,0.5,0.25\n4,5,6,1,2\n")}, options);
  Dataset data = ReadDataset(source);
  EXPECT_TRUE(torch::equal(data.features, torch::tensor({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}})));
  EXPECT_TRUE(torch::equal(data.labels, torch::tensor({{0.5f, 0.25f}, {1.0f, 2.0f}})));
  EXPECT_TRUE(data.ids.empty());
}

TEST(ReadDataset, RowsWithoutLabelsGiveZeroWidthLabels) {
  TempDir dir;
  RowSourceOptions options = Csv();
  options.format.label = LabelPresence::kNone;
  RowSource source({dir.Write("a.csv", "1,2\n3,4\n")}, options);
  Dataset data = ReadDataset(source);
  EXPECT_EQ(data.features.sizes().vec(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(data.labels.sizes().vec(), (std::vector<int64_t>{2, 0}));
}

TEST(ReadDataset, NoRowsGiveEmptyTensorsOfTheKnownWidth) {
  TempDir dir;
  RowSourceOptions options = Csv();
  options.format.num_features = 3;
  RowSource source({dir.Write("empty.csv", "")}, options);
  Dataset data = ReadDataset(source);
  EXPECT_EQ(data.rows(), 0);
  EXPECT_EQ(data.features.sizes().vec(), (std::vector<int64_t>{0, 3}));

  RowSource unknown({dir.Write("empty2.csv", "")}, Csv());
  EXPECT_EQ(ReadDataset(unknown).features.sizes().vec(), (std::vector<int64_t>{0, 0}));
}

TEST(ReadDataset, RefusesRowsThatDisagreeOnLabelWidth) {
  TempDir dir;
  RowSourceOptions options = Csv();
  options.format.label = LabelPresence::kOptional;
  options.format.num_features = 2;
  RowSource source({dir.Write("a.csv", "0,1,2\n1,2\n")}, options);
  try {
    ReadDataset(source);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "row 2 has 0 label values where row 1 had 1");
  }
}

}  // namespace
}  // namespace sparktorch

namespace sparktorch {
namespace {

// The labels of the rows rank `rank` of `world` reads from `inputs` with `options`.
std::vector<float> LabelsOfShare(const std::vector<std::string>& inputs, RowSourceOptions options,
                                 int rank, int world) {
  options.share_rank = rank;
  options.share_world = world;
  RowSource source(inputs, options);
  std::vector<float> labels;
  for (const ReadRow& row : ReadAll(source)) labels.push_back(row.label[0]);
  return labels;
}

// The same for csv inputs, with or without a header line.
std::vector<float> SharedLabels(const std::vector<std::string>& inputs, int rank, int world,
                                bool header = false) {
  RowSourceOptions options = Csv();
  options.format.header = header;
  return LabelsOfShare(inputs, options, rank, world);
}

TEST(RowSourceShare, AtLeastAsManyFilesAsRanksGoesByFile) {
  TempDir dir;
  std::vector<std::string> files = {dir.Write("a.csv", "0,1\n"), dir.Write("b.csv", "1,1\n"),
                                    dir.Write("c.csv", "2,1\n")};
  EXPECT_EQ(SharedLabels(files, 0, 2), (std::vector<float>{0, 2}));
  EXPECT_EQ(SharedLabels(files, 1, 2), (std::vector<float>{1}));
}

TEST(RowSourceShare, FewerFilesThanRanksGoByContiguousLineRanges) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 10; ++i) text += std::to_string(i) + ",1\n";
  std::vector<std::string> one = {dir.Write("one.csv", text)};
  EXPECT_EQ(SharedLabels(one, 0, 3), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(SharedLabels(one, 1, 3), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(SharedLabels(one, 2, 3), (std::vector<float>{6, 7, 8, 9}));
}

TEST(RowSourceShare, LineRangesSkipEachFilesHeaderAndSpanFiles) {
  TempDir dir;
  std::vector<std::string> files = {dir.Write("a.csv", "label,x\n0,1\n1,1\n2,1\n"),
                                    dir.WriteGzip("b.csv.gz", "label,x\n3,1\n")};
  std::vector<float> all;
  for (int rank = 0; rank < 3; ++rank) {
    std::vector<float> mine = SharedLabels(files, rank, 3, /*header=*/true);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  EXPECT_EQ(all, (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(SharedLabels(files, 2, 3, true), (std::vector<float>{2, 3}));
}

TEST(RowSourceShare, LineNumbersInErrorsAreTheFilesOwn) {
  TempDir dir;
  std::string path = dir.Write("one.csv", "0,1\n1,1\n2,x\n3,1\n");
  try {
    SharedLabels({path}, 1, 2);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":3:3: expected a number, got \"x\"");
  }
}

}  // namespace
}  // namespace sparktorch

namespace sparktorch {
namespace {

// Rows 0..n-1 as float32 records: the label, then one feature.
std::string LabelledRecords(int first, int n) {
  std::string data;
  for (int i = first; i < first + n; ++i) data += Float32Record({static_cast<float>(i), 1});
  return data;
}

std::vector<float> Float32Labels(const std::vector<std::string>& inputs, int rank, int world,
                                 BadRowPolicy policy = BadRowPolicy::kFail) {
  RowSourceOptions options;
  options.format.kind = RowFormatKind::kFloat32;
  options.on_bad_row = policy;
  return LabelsOfShare(inputs, options, rank, world);
}

TEST(RowSourceFloat32, FewerFilesThanRanksGoByContiguousRecordRanges) {
  TempDir dir;
  std::vector<std::string> files = {dir.Write("a.f32", LabelledRecords(0, 3)),
                                    dir.WriteGzip("b.f32.gz", LabelledRecords(3, 4))};
  EXPECT_EQ(Float32Labels(files, 0, 1), (std::vector<float>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Float32Labels({files[0]}, 1, 2), (std::vector<float>{1, 2}));
  EXPECT_EQ(Float32Labels(files, 0, 2), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(Float32Labels(files, 1, 2), (std::vector<float>{3, 4, 5, 6}));
}

TEST(RowSourceFloat32, ABadRecordFailsNamingItOrIsSkipped) {
  TempDir dir;
  const std::string path = dir.Write(
      "bad.f32", LabelledRecords(0, 2) + Float32Record({2, 1, 1}) + LabelledRecords(3, 1));
  try {
    Float32Labels({path}, 0, 1);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": record 3: expected 2 values (1 feature + 1 label), got 3");
  }
  EXPECT_EQ(Float32Labels({path}, 0, 1, BadRowPolicy::kSkip), (std::vector<float>{0, 1, 3}));
}

}  // namespace
}  // namespace sparktorch
