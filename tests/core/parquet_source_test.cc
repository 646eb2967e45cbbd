#include "core/data/parquet_source.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/data/row_source.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

namespace fs = std::filesystem;

// tests/formats/data/parquet/vectors_snappy.parquet: 330 rows (ids row-0000..row-0329) in row
// groups of 156, 160 and 14, written by Spark 2.4.4.
const std::string kFixture = std::string(SPARKTORCH_TEST_DATA) + "/parquet/vectors_snappy.parquet";
constexpr int kFixtureRows = 330;

// A fresh directory, removed with what it holds.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/parquet_source_test.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A directory as Spark writes a DataFrame: part files, _SUCCESS and hidden .crc files.
std::string SparkDirectory(const TempDir& dir, int parts) {
  for (int i = 0; i < parts; ++i) {
    fs::copy_file(kFixture, dir.path() + "/part-0000" + std::to_string(i) + ".snappy.parquet");
    std::ofstream(dir.path() + "/.part-0000" + std::to_string(i) + ".snappy.parquet.crc") << "x";
  }
  std::ofstream(dir.path() + "/_SUCCESS");
  return dir.path();
}

RowFormat Parquet() {
  RowFormat format;
  format.kind = RowFormatKind::kParquet;
  format.id_field = "id";
  return format;
}

// The ids of the rows that share `rank` of `world` reads from `inputs`.
std::vector<std::string> Ids(const std::vector<std::string>& inputs, int rank = 0, int world = 1) {
  ParquetSource source(inputs, Parquet(), rank, world);
  std::vector<std::string> ids;
  Row row;
  while (source.Next(&row)) ids.push_back(row.id);
  return ids;
}

// The id of the fixture's row `index` (0-based).
std::string Id(int index) {
  char text[16];
  std::snprintf(text, sizeof text, "row-%04d", index);
  return text;
}

TEST(ParquetSource, ReadsEveryRowOfAFileInOrder) {
  std::vector<std::string> ids = Ids({kFixture});
  ASSERT_EQ(ids.size(), static_cast<size_t>(kFixtureRows));
  for (int i = 0; i < kFixtureRows; ++i) EXPECT_EQ(ids[static_cast<size_t>(i)], Id(i));
}

TEST(ParquetSource, ADirectoryIsItsPartFilesInNameOrderWithoutHiddenFiles) {
  TempDir dir;
  std::vector<std::string> ids = Ids({SparkDirectory(dir, 2)});
  ASSERT_EQ(ids.size(), 2u * kFixtureRows);
  EXPECT_EQ(ids[kFixtureRows - 1], Id(kFixtureRows - 1));
  EXPECT_EQ(ids[kFixtureRows], Id(0));
}

TEST(ParquetSource, RanksTakeContiguousSharesOfAllTheFilesRows) {
  TempDir dir;
  // 990 rows: the file, then the directory's two copies.
  std::vector<std::string> inputs = {kFixture, SparkDirectory(dir, 2)};
  std::vector<std::string> all = Ids(inputs);
  std::vector<std::string> joined;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<std::string> mine = Ids(inputs, rank, 4);
    EXPECT_EQ(mine.size(), rank % 2 == 0 ? 247u : 248u) << "rank " << rank;
    joined.insert(joined.end(), mine.begin(), mine.end());
  }
  EXPECT_EQ(joined, all);
}

TEST(ParquetSource, MoreRanksThanRowsLeaveSomeRanksWithoutRows) {
  std::vector<std::string> ids;
  int empty = 0;
  for (int rank = 0; rank < 400; ++rank) {
    std::vector<std::string> mine = Ids({kFixture}, rank, 400);
    empty += mine.empty() ? 1 : 0;
    ids.insert(ids.end(), mine.begin(), mine.end());
  }
  EXPECT_EQ(empty, 70);
  EXPECT_EQ(ids, Ids({kFixture}));
}

TEST(ParquetSource, RefusesStdin) {
  try {
    ParquetSource source({"-"}, Parquet(), 0, 1);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--format parquet reads files, not stdin (a Parquet file's metadata is at its "
                 "end): give the files or their directories with --input, or the format of the "
                 "rows on stdin with --format");
  }
}

TEST(ParquetSource, RefusesADirectoryHoldingDirectories) {
  TempDir dir;
  fs::create_directory(dir.path() + "/year=2024");
  try {
    ParquetSource source({dir.path()}, Parquet(), 0, 1);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.path() + ": holds a directory, year=2024 (a partitioned table?): give the "
                           "Parquet files or their directories");
  }
}

TEST(ParquetSource, ARowSourceNamesTheFileAndRowOfABadRowOrSkipsIt) {
  RowSourceOptions options;
  options.format = Parquet();
  RowCheck negative_label = [](const Row& row) {
    return row.label[0] < 0 ? std::string("label ") + std::to_string(row.label[0]) + " < 0"
                            : std::string();
  };
  RowSource failing({kFixture}, options, negative_label);
  Row row;
  int read = 0;
  try {
    while (failing.Next(&row)) ++read;
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(kFixture + ": row ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(": label -2.000000 < 0"), std::string::npos) << e.what();
  }
  options.on_bad_row = BadRowPolicy::kSkip;
  RowSource skipping({kFixture}, options, negative_label);
  int kept = 0;
  while (skipping.Next(&row)) ++kept;
  EXPECT_EQ(kept + skipping.rows_skipped(), kFixtureRows);
  EXPECT_GT(skipping.rows_skipped(), 0);
  EXPECT_EQ(skipping.rows_read(), kept);
  EXPECT_EQ(skipping.num_features(), 6);
  EXPECT_LT(read, kFixtureRows);
}

}  // namespace
}  // namespace sparktorch
