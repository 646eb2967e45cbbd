#include "formats/libsvm_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "formats/error.h"
#include "formats/line_reader.h"
#include "formats/row_parser.h"
#include "tests/formats/row_parser_testing.h"

namespace sparktorch {
namespace {

RowFormat Libsvm(int64_t num_features) {
  RowFormat format;
  format.kind = RowFormatKind::kLibsvm;
  format.num_features = num_features;
  return format;
}

TEST(LibsvmParser, DensifiesOneBasedIndices) {
  auto parser = MakeRowParser(Libsvm(5));
  EXPECT_EQ(parser->num_features(), 5);
  Row row;
  parser->Parse("1 2:0.5 5:-1", &row);
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.features, (Floats{0, 0.5f, 0, 0, -1}));
  EXPECT_EQ(row.id, "");
}

TEST(LibsvmParser, ZeroBasedIndices) {
  RowFormat format = Libsvm(3);
  format.zero_based = true;
  EXPECT_EQ(ParseOne(format, "0 0:1 2:3").features, (Floats{1, 0, 3}));
  EXPECT_EQ(ErrorOf(format, "0 3:1"), "3: index 3 out of range 0..2");
}

TEST(LibsvmParser, LabelOnlyRowIsAllZeros) {
  Row row = ParseOne(Libsvm(3), "-1");
  EXPECT_EQ(row.label, Floats{-1});
  EXPECT_EQ(row.features, (Floats{0, 0, 0}));
}

TEST(LibsvmParser, TabsExtraSpacesCommentsAndSignedLabels) {
  Row row = ParseOne(Libsvm(4), "  +1\t1:1e-3   4:.25 \t# a comment 3:9");
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.features, (Floats{1e-3f, 0, 0, 0.25f}));
  EXPECT_EQ(ParseOne(Libsvm(2), "2 # only a label").features, (Floats{0, 0}));
}

TEST(LibsvmParser, ClearsFeaturesLeftFromTheLastRow) {
  auto parser = MakeRowParser(Libsvm(3));
  Row row;
  parser->Parse("1 1:5 2:6 3:7", &row);
  parser->Parse("0 2:1", &row);
  EXPECT_EQ(row.features, (Floats{0, 1, 0}));
  EXPECT_EQ(row.label, Floats{0});
}

TEST(LibsvmParser, NoLabel) {
  RowFormat format = Libsvm(3);
  format.label = LabelPresence::kNone;
  Row row = ParseOne(format, "1:1 3:2");
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{1, 0, 2}));
  EXPECT_EQ(ErrorOf(format, "1 1:1"), "1: expected INDEX:VALUE, got \"1\"");
}

TEST(LibsvmParser, OptionalLabelIsAFirstTokenWithoutColon) {
  RowFormat format = Libsvm(3);
  format.label = LabelPresence::kOptional;
  auto parser = MakeRowParser(format);
  Row row;
  parser->Parse("2 1:1", &row);
  EXPECT_EQ(row.label, Floats{2});
  EXPECT_EQ(row.features, (Floats{1, 0, 0}));
  parser->Parse("3:1", &row);
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{0, 0, 1}));
}

TEST(LibsvmParser, NanAndInfOnlyWhenAllowed) {
  RowFormat format = Libsvm(2);
  EXPECT_EQ(ErrorOf(format, "1 2:nan"), "5: expected a finite number, got \"nan\"");
  EXPECT_EQ(ErrorOf(format, "inf 1:1"), "1: expected a finite number, got \"inf\"");
  format.allow_nan = true;
  Row row = ParseOne(format, "inf 2:nan");
  EXPECT_EQ(row.label, Floats{INFINITY});
  EXPECT_TRUE(std::isnan(row.features[1]));
}

TEST(LibsvmParser, Errors) {
  const RowFormat format = Libsvm(784);
  EXPECT_EQ(ErrorOf(format, ""), "0: empty line");
  EXPECT_EQ(ErrorOf(format, " \t"), "0: empty line");
  EXPECT_EQ(ErrorOf(format, "# just a comment"), "0: empty line");
  EXPECT_EQ(ErrorOf(format, "3:0.5 4:1"), "1: expected a label, got \"3:0.5\"");
  EXPECT_EQ(ErrorOf(format, "abc 1:1"), "1: expected a number, got \"abc\"");
  EXPECT_EQ(ErrorOf(format, "1 9:1 5:2"), "7: index 5 after 9: indices must be ascending");
  EXPECT_EQ(ErrorOf(format, "1 5:1 5:2"), "7: index 5 after 5: indices must be ascending");
  EXPECT_EQ(ErrorOf(format, "1 785:1"), "3: index 785 out of range 1..784");
  EXPECT_EQ(ErrorOf(format, "1 0:1"), "3: index 0 out of range 1..784");
  EXPECT_EQ(ErrorOf(format, "1 1:x"), "5: expected a number, got \"x\"");
  EXPECT_EQ(ErrorOf(format, "1 1:"), "5: expected a number, got \"\"");
  EXPECT_EQ(ErrorOf(format, "1 1:0.5,2:1"), "5: expected a number, got \"0.5,2:1\"");
  EXPECT_EQ(ErrorOf(format, "1 x:1"), "3: expected INDEX:VALUE, got \"x:1\"");
  EXPECT_EQ(ErrorOf(format, "1 :1"), "3: expected INDEX:VALUE, got \":1\"");
  EXPECT_EQ(ErrorOf(format, "1 -1:1"), "3: expected INDEX:VALUE, got \"-1:1\"");
  EXPECT_EQ(ErrorOf(format, "1 12"), "3: expected INDEX:VALUE, got \"12\"");
  EXPECT_EQ(ErrorOf(format, "1 99999999999999999999:1"),
            "3: expected INDEX:VALUE, got \"99999999999999999999:1\"");
}

TEST(LibsvmParser, NeedsTheNumberOfFeatures) {
  try {
    MakeRowParser(Libsvm(0));
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "libsvm needs the number of features");
    EXPECT_EQ(e.setting(), RowSetting::kNumFeatures);
  }
}

TEST(LibsvmParser, CrlfLinesThroughTheLineReader) {
  LineReader reader(std::make_unique<StringByteReader>("1 1:0.5\r\n0 3:2\r\n"), "test", 1000);
  auto parser = MakeRowParser(Libsvm(3));
  Row row;
  std::string_view line;
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  EXPECT_EQ(row.features, (Floats{0, 0, 2}));
  EXPECT_EQ(row.label, Floats{0});
  EXPECT_EQ(reader.Next(&line), LineReader::Status::kEnd);
}

}  // namespace
}  // namespace sparktorch
