#include "formats/jsonl_parser.h"

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

RowFormat Jsonl(int64_t num_features = 0, LabelPresence label = LabelPresence::kRequired) {
  RowFormat format;
  format.kind = RowFormatKind::kJsonl;
  format.num_features = num_features;
  format.label = label;
  return format;
}

std::string UsageErrorOf(const RowFormat& format) {
  try {
    MakeRowParser(format);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonlParser, ArrayOfNumbersAndNumberLabel) {
  auto parser = MakeRowParser(Jsonl());
  Row row;
  parser->Parse(R"({"label": 3, "features": [0, 0.5, -1e-3], "other": "ignored"})", &row);
  EXPECT_EQ(row.label, Floats{3});
  EXPECT_EQ(row.features, (Floats{0, 0.5f, -1e-3f}));
  EXPECT_EQ(row.id, "");
  EXPECT_EQ(parser->num_features(), 3);
  EXPECT_EQ(ErrorOf(parser.get(), R"({"label": 3, "features": [0]})"),
            "0: expected 3 features, got 1");
}

TEST(JsonlParser, SparkDenseVector) {
  Row row = ParseOne(Jsonl(), R"({"features":{"type":1,"values":[0.0,1.5,-2.0]},"label":1.0})");
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.features, (Floats{0, 1.5f, -2}));
}

TEST(JsonlParser, SparkSparseVector) {
  auto parser = MakeRowParser(Jsonl());
  Row row;
  parser->Parse(
      R"({"features":{"type":0,"size":5,"indices":[1,4],"values":[0.5,0.25]},"label":0.0})", &row);
  EXPECT_EQ(row.features, (Floats{0, 0.5f, 0, 0, 0.25f}));
  EXPECT_EQ(parser->num_features(), 5);
  EXPECT_EQ(ErrorOf(parser.get(),
                    R"({"features":{"type":0,"size":4,"indices":[],"values":[]},"label":0.0})"),
            "0: expected 5 features, got a sparse vector of size 4");
}

TEST(JsonlParser, VectorLabels) {
  Row row = ParseOne(Jsonl(), R"({"features":[1,2],"label":[0.5,0.25]})");
  EXPECT_EQ(row.label, (Floats{0.5f, 0.25f}));
  row = ParseOne(Jsonl(), R"({"features":[1,2],"label":{"type":1,"values":[7]}})");
  EXPECT_EQ(row.label, Floats{7});
}

TEST(JsonlParser, OtherFieldNamesAndIds) {
  RowFormat format = Jsonl();
  format.features_field = "x";
  format.label_field = "y";
  format.id_field = "key";
  Row row = ParseOne(format, R"({"key":"row-1","x":[1],"y":2})");
  EXPECT_EQ(row.id, "row-1");
  EXPECT_EQ(row.label, Floats{2});
  EXPECT_EQ(row.features, Floats{1});
  EXPECT_EQ(ParseOne(format, R"({"key":12345678901,"x":[1],"y":2})").id, "12345678901");
  EXPECT_EQ(ParseOne(format, R"({"key":-7,"x":[1],"y":2})").id, "-7");
  EXPECT_EQ(ErrorOf(format, R"({"x":[1],"y":2})"), "0: missing field \"key\"");
  EXPECT_EQ(ErrorOf(format, R"({"key":1.5,"x":[1],"y":2})"),
            "0: field \"key\": expected a string or an integer, got 1.5");
  EXPECT_EQ(ErrorOf(format, R"({"key":null,"x":[1],"y":2})"),
            "0: field \"key\": expected a string or an integer, got null");
}

TEST(JsonlParser, NoLabelIgnoresTheLabelField) {
  Row row = ParseOne(Jsonl(0, LabelPresence::kNone), R"({"features":[1,2],"label":5})");
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{1, 2}));
}

TEST(JsonlParser, OptionalLabelAbsentOrNull) {
  auto parser = MakeRowParser(Jsonl(0, LabelPresence::kOptional));
  Row row;
  parser->Parse(R"({"features":[1,2],"label":5})", &row);
  EXPECT_EQ(row.label, Floats{5});
  parser->Parse(R"({"features":[1,2]})", &row);
  EXPECT_TRUE(row.label.empty());
  parser->Parse(R"({"features":[1,2],"label":null})", &row);
  EXPECT_TRUE(row.label.empty());
}

TEST(JsonlParser, CarriageReturnAndSpacesAroundTheObject) {
  Row row = ParseOne(Jsonl(), " {\"features\":[1],\"label\":0}\r");
  EXPECT_EQ(row.features, Floats{1});
}

TEST(JsonlParser, NumbersBeyondFloatAreInfinite) {
  RowFormat format = Jsonl();
  EXPECT_EQ(ErrorOf(format, R"({"features":[1,1e39],"label":0})"),
            "0: field \"features\"[1]: expected a finite number, got 1e+39");
  EXPECT_EQ(ErrorOf(format, R"({"features":[1],"label":-1e39})"),
            "0: field \"label\": expected a finite number, got -1e+39");
  format.allow_nan = true;
  EXPECT_EQ(ParseOne(format, R"({"features":[1,1e39],"label":0})").features[1], INFINITY);
}

TEST(JsonlParser, InvalidJson) {
  const RowFormat format = Jsonl();
  EXPECT_EQ(ErrorOf(format, R"({"a":x})"),
            "6: invalid JSON: syntax error while parsing value - invalid literal; last read: "
            "'\"a\":x'");
  EXPECT_EQ(ErrorOf(format, R"({"a":1)"),
            "7: invalid JSON: syntax error while parsing object - unexpected end of input; "
            "expected '}'");
  EXPECT_EQ(ErrorOf(format, R"({"features":[1e400]})"),
            "0: invalid JSON: number overflow parsing '1e400'");
}

TEST(JsonlParser, Errors) {
  const RowFormat format = Jsonl(2);
  EXPECT_EQ(ErrorOf(format, ""), "0: empty line");
  EXPECT_EQ(ErrorOf(format, " \t"), "0: empty line");
  EXPECT_EQ(ErrorOf(format, "  [1,2]"), "3: expected a JSON object, got an array");
  EXPECT_EQ(ErrorOf(format, R"({"label":1})"), "0: missing field \"features\"");
  EXPECT_EQ(ErrorOf(format, R"({"features":[1,2]})"), "0: missing field \"label\"");
  EXPECT_EQ(ErrorOf(format, R"({"features":[1,2],"label":null})"), "0: missing field \"label\"");
  EXPECT_EQ(ErrorOf(format, R"({"features":"1,2","label":1})"),
            "0: field \"features\": expected an array of numbers or a Spark vector, got a string");
  EXPECT_EQ(ErrorOf(format, R"({"features":[1,"2"],"label":1})"),
            "0: field \"features\"[1]: expected a number, got a string");
  EXPECT_EQ(ErrorOf(format, R"({"features":[1,[2]],"label":1})"),
            "0: field \"features\"[1]: expected a number, got an array");
  EXPECT_EQ(ErrorOf(format, R"({"features":[1,2],"label":"cat"})"),
            "0: field \"label\": expected a number or an array of numbers, got a string");
  EXPECT_EQ(ErrorOf(format, R"({"features":[1,2],"label":[]})"),
            "0: field \"label\": expected a label, got an empty array");
  EXPECT_EQ(ErrorOf(format, R"({"features":[1,2],"label":[true]})"),
            "0: field \"label\"[0]: expected a number, got a boolean");
  EXPECT_EQ(ErrorOf(Jsonl(), R"({"features":[],"label":1})"),
            "0: expected at least 1 feature, got 0");
}

TEST(JsonlParser, SparkVectorErrors) {
  const RowFormat format = Jsonl(4);
  auto error = [&](const std::string& vector) {
    return ErrorOf(format, R"({"label":1,"features":)" + vector + "}");
  };
  EXPECT_EQ(error(R"({"type":2,"values":[]})"),
            "0: field \"features\": expected \"type\" 0 (sparse) or 1 (dense), got 2");
  EXPECT_EQ(error(R"({"values":[]})"),
            "0: field \"features\": expected \"type\" 0 (sparse) or 1 (dense), got none");
  EXPECT_EQ(error(R"({"type":1})"), "0: field \"features\": missing \"values\" in a dense vector");
  EXPECT_EQ(error(R"({"type":1,"values":[1,2,3,"x"]})"),
            "0: field \"features\".\"values\"[3]: expected a number, got a string");
  EXPECT_EQ(error(R"({"type":0,"indices":[],"values":[]})"),
            "0: field \"features\": missing \"size\" in a sparse vector");
  EXPECT_EQ(error(R"({"type":0,"size":4,"values":[]})"),
            "0: field \"features\": missing \"indices\" in a sparse vector");
  EXPECT_EQ(error(R"({"type":0,"size":"4","indices":[],"values":[]})"),
            "0: field \"features\".\"size\": expected an integer, got a string");
  EXPECT_EQ(error(R"({"type":0,"size":4,"indices":{},"values":[]})"),
            "0: field \"features\".\"indices\": expected an array, got an object");
  EXPECT_EQ(error(R"({"type":0,"size":0,"indices":[],"values":[]})"),
            "0: field \"features\".\"size\": expected an integer from 1 to 268435456, got 0");
  EXPECT_EQ(error(R"({"type":0,"size":4,"indices":[1,2],"values":[1]})"),
            "0: field \"features\": expected as many values as indices, got 2 indices and 1 value");
  EXPECT_EQ(error(R"({"type":0,"size":4,"indices":[2,1],"values":[1,1]})"),
            "0: field \"features\": index 1 after 2: indices must be ascending");
  EXPECT_EQ(error(R"({"type":0,"size":4,"indices":[4],"values":[1]})"),
            "0: field \"features\": index 4 out of range 0..3");
  EXPECT_EQ(error(R"({"type":0,"size":4,"indices":[1.5],"values":[1]})"),
            "0: field \"features\".\"indices\"[0]: expected an index, got 1.5");
  EXPECT_EQ(error(R"({"type":0,"size":4,"indices":[-1],"values":[1]})"),
            "0: field \"features\".\"indices\"[0]: expected an index, got -1");
  EXPECT_EQ(error(R"({"type":0,"size":4,"indices":[0],"values":[null]})"),
            "0: field \"features\".\"values\"[0]: expected a number, got null");
}

TEST(JsonlParser, FormatsThatCannotWork) {
  RowFormat format = Jsonl();
  format.features_field = "";
  EXPECT_EQ(UsageErrorOf(format), "jsonl needs the name of the features field");
  format = Jsonl();
  format.label_field = "";
  EXPECT_EQ(UsageErrorOf(format), "jsonl needs the name of the label field");
  format.label = LabelPresence::kNone;
  EXPECT_EQ(UsageErrorOf(format), "no error");
}

TEST(JsonlParser, CrlfLinesThroughTheLineReader) {
  LineReader reader(std::make_unique<StringByteReader>(
                        "{\"features\":[1,2],\"label\":1}\r\n{\"features\":[3,4],\"label\":0}\r\n"),
                    "test", 1000);
  auto parser = MakeRowParser(Jsonl());
  Row row;
  std::string_view line;
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  EXPECT_EQ(row.features, (Floats{3, 4}));
  EXPECT_EQ(row.label, Floats{0});
  EXPECT_EQ(reader.Next(&line), LineReader::Status::kEnd);
}

}  // namespace
}  // namespace sparktorch
