#include "formats/vector_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
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

RowFormat Vector(int64_t num_features = 0, LabelPresence label = LabelPresence::kRequired) {
  RowFormat format;
  format.kind = RowFormatKind::kVector;
  format.num_features = num_features;
  format.label = label;
  return format;
}

TEST(VectorParser, LabelCommaDenseVector) {
  auto parser = MakeRowParser(Vector());
  Row row;
  parser->Parse("1.0,[0.0,1.5,-2.0]", &row);
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.features, (Floats{0, 1.5f, -2}));
  EXPECT_EQ(parser->num_features(), 3);
  EXPECT_EQ(ErrorOf(parser.get(), "1.0,[0.0]"), "0: expected 3 features, got 1");
}

TEST(VectorParser, LabelSpaceVector) {
  Row row = ParseOne(Vector(), "7 [0.5,1e-05]");
  EXPECT_EQ(row.label, Floats{7});
  EXPECT_EQ(row.features, (Floats{0.5f, 1e-5f}));
  row = ParseOne(Vector(), "7\t (3,[1],[2.0])");
  EXPECT_EQ(row.features, (Floats{0, 2, 0}));
}

TEST(VectorParser, SparseVectorIsDensified) {
  auto parser = MakeRowParser(Vector());
  Row row;
  parser->Parse("0.0,(6,[0,3,5],[0.5,0.25,-1.0])", &row);
  EXPECT_EQ(row.label, Floats{0});
  EXPECT_EQ(row.features, (Floats{0.5f, 0, 0, 0.25f, 0, -1}));
  EXPECT_EQ(parser->num_features(), 6);
  parser->Parse("1.0,(6,[],[])", &row);
  EXPECT_EQ(row.features, (Floats{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(ErrorOf(parser.get(), "1.0,(5,[],[])"),
            "6: expected 6 features, got a sparse vector of size 5");
}

// "<BASE64>": the features as base64 of little-endian float32, as sparktorch's Spark layer
// writes them (spark-scripts/java/sparktorch/spark/FeaturesText.java).
TEST(VectorParser, Float32Features) {
  auto parser = MakeRowParser(Vector());
  Row row;
  parser->Parse("2,<AAAAAAAAwD8AAADA>", &row);  // [0, 1.5, -2]
  EXPECT_EQ(row.label, Floats{2});
  EXPECT_EQ(row.features, (Floats{0, 1.5f, -2}));
  EXPECT_EQ(parser->num_features(), 3);
  parser->Parse("[1.0,0.0],<AAAAPwAAgD4AAIC/>", &row);  // a vector label, [0.5, 0.25, -1]
  EXPECT_EQ(row.label, (Floats{1, 0}));
  EXPECT_EQ(row.features, (Floats{0.5f, 0.25f, -1}));
  parser->Parse("(1.0,<AAAAPwAAgD4AAIC/>)", &row);  // as a LabeledPoint
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(ErrorOf(parser.get(), "1,<AACAPw==>"), "3: expected 3 features, got 1");
  EXPECT_EQ(ErrorOf(parser.get(), "<AAAAPwAAgD4AAIC/>"),
            "0: expected a label and a vector, got only a vector");

  Row alone = ParseOne(Vector(0, LabelPresence::kOptional), "<AACAPw==>");
  EXPECT_TRUE(alone.label.empty());
  EXPECT_EQ(alone.features, Floats{1});
  alone = ParseOne(Vector(0, LabelPresence::kNone), "<AACAPw==>");
  EXPECT_EQ(alone.features, Floats{1});
}

TEST(VectorParser, Float32FeaturesErrors) {
  EXPECT_EQ(ErrorOf(Vector(), "1,<AACAPw=="), "4: expected base64 float32 values and \">\", "
            "got \"AACAPw==\"");
  EXPECT_EQ(ErrorOf(Vector(), "1,<AACAP>"),
            "4: invalid base64: 5 characters, not a multiple of 4 or badly padded");
  EXPECT_EQ(ErrorOf(Vector(), "1,<AACA>"),
            "4: invalid float32 data: 3 bytes, not a positive multiple of 4");
  EXPECT_EQ(ErrorOf(Vector(), "1,<>"),
            "4: invalid float32 data: 0 bytes, not a positive multiple of 4");
  EXPECT_EQ(ErrorOf(Vector(), "1,<AAC*Pw==>"), "7: invalid base64: unexpected \"*\"");
  EXPECT_EQ(ErrorOf(Vector(), "1,<AAAAPwAAgD4AAIC/> x"),
            "22: expected the end of the line, got \"x\"");
  // NaN at feature 0 (column 4), and at feature 1 ("AADAfw" after "AACAPw": column 9).
  EXPECT_EQ(ErrorOf(Vector(), "1,<AADAfwAAgD8AAABA>"),
            "4: expected a finite number, got nan in feature 0");
  EXPECT_EQ(ErrorOf(Vector(), "1,<AACAPwAAwH8AAABA>"),
            "9: expected a finite number, got nan in feature 1");
  RowFormat nan_ok = Vector();
  nan_ok.allow_nan = true;
  EXPECT_TRUE(std::isnan(ParseOne(nan_ok, "1,<AADAfwAAgD8AAABA>").features[0]));
}

TEST(VectorParser, LabeledPointParentheses) {
  Row row = ParseOne(Vector(), "(1.0,[0.0,1.5])");
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.features, (Floats{0, 1.5f}));
  row = ParseOne(Vector(), "(2.0,(3,[0],[1.0]))");
  EXPECT_EQ(row.label, Floats{2});
  EXPECT_EQ(row.features, (Floats{1, 0, 0}));
  row = ParseOne(Vector(), " ( 3.0 , [ 4.0 , 5.0 ] ) ");
  EXPECT_EQ(row.label, Floats{3});
  EXPECT_EQ(row.features, (Floats{4, 5}));
  row = ParseOne(Vector(), "([1.0,2.0],[0.5])");
  EXPECT_EQ(row.label, (Floats{1, 2}));
  EXPECT_EQ(row.features, Floats{0.5f});
}

TEST(VectorParser, VectorLabel) {
  Row row = ParseOne(Vector(), "[1.0,0.0],[0.5,0.25,0.125]");
  EXPECT_EQ(row.label, (Floats{1, 0}));
  EXPECT_EQ(row.features, (Floats{0.5f, 0.25f, 0.125f}));
  row = ParseOne(Vector(), "[1.0] (2,[1],[3.0])");
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.features, (Floats{0, 3}));
}

// Spark's cast(vector as string) prints a sparse label as it prints sparse features.
TEST(VectorParser, SparseVectorLabelIsDensifiedToItsSize) {
  auto parser = MakeRowParser(Vector());
  Row row;
  parser->Parse("(2,[0],[1.0]),[0.0,0.5]", &row);
  EXPECT_EQ(row.label, (Floats{1, 0}));
  EXPECT_EQ(row.features, (Floats{0, 0.5f}));
  parser->Parse("(3,[1,2],[0.5,-1.0]) [2.0,4.0]", &row);
  EXPECT_EQ(row.label, (Floats{0, 0.5f, -1}));
  EXPECT_EQ(row.features, (Floats{2, 4}));
  parser->Parse("(2,[],[]),[1.0,1.0]", &row);
  EXPECT_EQ(row.label, (Floats{0, 0}));

  row = ParseOne(Vector(), "(2,[0],[1.0]),(784,[3],[0.5])");
  EXPECT_EQ(row.label, (Floats{1, 0}));
  ASSERT_EQ(row.features.size(), 784u);
  EXPECT_EQ(row.features[3], 0.5f);
  EXPECT_EQ(std::count(row.features.begin(), row.features.end(), 0.0f), 783);
}

TEST(VectorParser, SparseLabelSizeIsNotTheFeatureCount) {
  auto parser = MakeRowParser(Vector(2));
  Row row;
  parser->Parse("(5,[4],[1.0]),[0.0,0.5]", &row);
  EXPECT_EQ(row.label, (Floats{0, 0, 0, 0, 1}));
  EXPECT_EQ(ErrorOf(parser.get(), "(5,[4],[1.0]),(3,[0],[1.0])"),
            "16: expected 2 features, got a sparse vector of size 3");
}

TEST(VectorParser, SparseLabelInALabeledPoint) {
  Row row = ParseOne(Vector(), "((2,[1],[1.0]),[0.5])");
  EXPECT_EQ(row.label, (Floats{0, 1}));
  EXPECT_EQ(row.features, Floats{0.5f});
}

TEST(VectorParser, SparseLabelWithAnOptionalLabel) {
  auto parser = MakeRowParser(Vector(0, LabelPresence::kOptional));
  Row row;
  parser->Parse("(2,[1],[3.0]),[0.5,1.0]", &row);
  EXPECT_EQ(row.label, (Floats{0, 3}));
  EXPECT_EQ(row.features, (Floats{0.5f, 1}));
  parser->Parse("(2,[1],[3.0])", &row);  // a sparse vector alone is the features
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{0, 3}));
}

TEST(VectorParser, SparseLabelErrors) {
  const RowFormat format = Vector();
  EXPECT_EQ(ErrorOf(format, "(2,[5],[1.0]),[0.5]"), "5: index 5 out of range 0..1");
  EXPECT_EQ(ErrorOf(format, "(0,[],[]),[0.5]"), "2: expected a vector size from 1 to 268435456, got 0");
  EXPECT_EQ(ErrorOf(format, "(2,[0],[1.0,2.0]),[0.5]"),
            "8: expected as many values as indices, got 1 index and 2 values");
  EXPECT_EQ(ErrorOf(format, "(2,[0],[x]),[0.5]"), "9: expected a number, got \"x\"");
  EXPECT_EQ(ErrorOf(format, "(2,[0],[1.0]),"),
            "15: expected a vector ([...] or (size,[...],[...])), got the end of the line");
  // A sparse vector alone is the features, even when it looks like a label.
  EXPECT_EQ(ErrorOf(format, "(2,[0],[1.0])"), "0: expected a label and a vector, got only a vector");
  // No label format: the second vector is too much.
  EXPECT_EQ(ErrorOf(Vector(0, LabelPresence::kNone), "(2,[0],[1.0]),[0.5]"),
            "14: expected the end of the line, got \",[0.5]\"");
}

TEST(VectorParser, NoLabelLineIsJustAVector) {
  const RowFormat format = Vector(0, LabelPresence::kNone);
  Row row = ParseOne(format, "[0.0,1.5]");
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{0, 1.5f}));
  row = ParseOne(format, "(4,[1,2],[1.0,2.0])");
  EXPECT_EQ(row.features, (Floats{0, 1, 2, 0}));
  EXPECT_EQ(ErrorOf(format, "1.0,[0.5]"),
            "1: expected a vector ([...] or (size,[...],[...])), got \"1.0,[0.5]\"");
  EXPECT_EQ(ErrorOf(format, "[0.5],[1.0]"), "6: expected the end of the line, got \",[1.0]\"");
}

TEST(VectorParser, OptionalLabelPresentWhenTheLineIsMoreThanAVector) {
  auto parser = MakeRowParser(Vector(0, LabelPresence::kOptional));
  Row row;
  parser->Parse("[0.5,1.0]", &row);
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{0.5f, 1}));
  parser->Parse("[2.0] [0.5,1.0]", &row);
  EXPECT_EQ(row.label, Floats{2});
  parser->Parse("(2,[0],[3.0])", &row);
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{3, 0}));
  parser->Parse("(1.0,(2,[0],[3.0]))", &row);
  EXPECT_EQ(row.label, Floats{1});
  parser->Parse("4,[0.5,1.0]", &row);
  EXPECT_EQ(row.label, Floats{4});
}

TEST(VectorParser, RequiredLabelMissing) {
  EXPECT_EQ(ErrorOf(Vector(), "[0.5,1.0]"), "0: expected a label and a vector, got only a vector");
  EXPECT_EQ(ErrorOf(Vector(), "(2,[0],[3.0])"),
            "0: expected a label and a vector, got only a vector");
}

TEST(VectorParser, NanAndInfOnlyWhenAllowed) {
  RowFormat format = Vector();
  EXPECT_EQ(ErrorOf(format, "1.0,[0.5,NaN]"), "10: expected a finite number, got \"NaN\"");
  EXPECT_EQ(ErrorOf(format, "-Infinity,[0.5]"), "1: expected a finite number, got \"-Infinity\"");
  format.allow_nan = true;
  Row row = ParseOne(format, "(1.0,[0.5019607843137255,1e-05,1.0E-5,-0.0,NaN,-Infinity])");
  ASSERT_EQ(row.features.size(), 6u);
  EXPECT_EQ(row.features[0], 0.5019607843137255f);
  EXPECT_EQ(row.features[1], 1e-5f);
  EXPECT_EQ(row.features[2], 1e-5f);
  EXPECT_TRUE(std::signbit(row.features[3]));
  EXPECT_TRUE(std::isnan(row.features[4]));
  EXPECT_EQ(row.features[5], -INFINITY);
}

TEST(VectorParser, ReusesTheRowsBuffers) {
  auto parser = MakeRowParser(Vector());
  std::string line = "(1.0,[0.5";
  for (int i = 1; i < 784; ++i) line += ",0.25";
  line += "])";
  Row row;
  parser->Parse(line, &row);
  ASSERT_EQ(row.features.size(), 784u);
  const float* features = row.features.data();
  parser->Parse(line, &row);
  EXPECT_EQ(row.features.data(), features);
  EXPECT_EQ(row.features.size(), 784u);
}

TEST(VectorParser, Errors) {
  const RowFormat format = Vector(3);
  EXPECT_EQ(ErrorOf(format, ""), "0: empty line");
  EXPECT_EQ(ErrorOf(format, "  "), "0: empty line");
  EXPECT_EQ(ErrorOf(format, "1.0,[1,2]"), "0: expected 3 features, got 2");
  EXPECT_EQ(ErrorOf(format, "1.0,[1,x,3]"), "8: expected a number, got \"x\"");
  EXPECT_EQ(ErrorOf(format, "1.0,[1,,3]"), "8: expected a number, got \",3]\"");
  EXPECT_EQ(ErrorOf(format, "1.0,[1,2,3"), "11: expected \",\" or \"]\", got the end of the line");
  EXPECT_EQ(ErrorOf(format, "1.0,[1,2;3]"), "8: expected a number, got \"2;3\"");
  EXPECT_EQ(ErrorOf(format, "1.0,"),
            "5: expected a vector ([...] or (size,[...],[...])), got the end of the line");
  EXPECT_EQ(ErrorOf(format, "1.0,[1,2,3] x"), "13: expected the end of the line, got \"x\"");
  EXPECT_EQ(ErrorOf(format, "(1.0,[1,2,3]"), "13: expected \")\", got the end of the line");
  EXPECT_EQ(ErrorOf(format, "abc,[1,2,3]"), "1: expected a number, got \"abc\"");
  EXPECT_EQ(ErrorOf(format, "[],[1,2,3]"), "1: expected a label, got an empty vector");
  EXPECT_EQ(ErrorOf(Vector(), "1.0,[]"), "0: expected at least 1 feature, got 0");
}

TEST(VectorParser, SparseErrors) {
  const RowFormat format = Vector(4);
  EXPECT_EQ(ErrorOf(format, "1,(4,[3,1],[1,2])"), "9: index 1 after 3: indices must be ascending");
  EXPECT_EQ(ErrorOf(format, "1,(4,[1,1],[1,2])"), "9: index 1 after 1: indices must be ascending");
  EXPECT_EQ(ErrorOf(format, "1,(4,[0,4],[1,2])"), "9: index 4 out of range 0..3");
  EXPECT_EQ(ErrorOf(format, "1,(4,[0,1.5],[1,2])"), "9: expected an index, got \"1.5\"");
  EXPECT_EQ(ErrorOf(format, "1,(4,[0,-1],[1,2])"), "9: expected an index, got \"-1\"");
  EXPECT_EQ(ErrorOf(format, "1,(4,[0,1],[1])"),
            "12: expected as many values as indices, got 2 indices and 1 value");
  EXPECT_EQ(ErrorOf(format, "1,(4,[0],[1,2])"),
            "10: expected as many values as indices, got 1 index and 2 values");
  EXPECT_EQ(ErrorOf(format, "1,(4.0,[0],[1])"), "4: expected a vector size, got \"4.0\"");
  EXPECT_EQ(ErrorOf(format, "1,(4,[0],[1]"), "13: expected \")\", got the end of the line");
  EXPECT_EQ(ErrorOf(format, "1,(4;[0],[1])"), "4: expected a vector size, got \"4;\"");
  EXPECT_EQ(ErrorOf(Vector(), "1,(0,[],[])"),
            "4: expected a vector size from 1 to 268435456, got 0");
  EXPECT_EQ(ErrorOf(Vector(), "1,(99999999999,[],[])"),
            "4: expected a vector size from 1 to 268435456, got 99999999999");
  EXPECT_EQ(ErrorOf(format, "(1,[0],[1])"), "0: expected a label and a vector, got only a vector");
  EXPECT_EQ(ErrorOf(format, "(1.0 2.0)"),
            "6: expected a vector ([...] or (size,[...],[...])), got \"2.0)\"");
}

TEST(VectorParser, CrlfLinesThroughTheLineReader) {
  LineReader reader(std::make_unique<StringByteReader>("1.0,[0.5,1.0]\r\n(0.0,[2.0,3.0])\r\n"),
                    "test", 1000);
  auto parser = MakeRowParser(Vector());
  Row row;
  std::string_view line;
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  EXPECT_EQ(row.features, (Floats{2, 3}));
  EXPECT_EQ(row.label, Floats{0});
  EXPECT_EQ(reader.Next(&line), LineReader::Status::kEnd);
}

}  // namespace
}  // namespace sparktorch
