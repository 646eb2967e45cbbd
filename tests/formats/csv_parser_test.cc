#include "formats/csv_parser.h"

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

RowFormat Csv(int64_t num_features = 0) {
  RowFormat format;
  format.kind = RowFormatKind::kCsv;
  format.num_features = num_features;
  return format;
}

// Parses `line` with `parser`, which must throw RowError; returns "column: message".
std::string UsageErrorOf(const RowFormat& format) {
  try {
    MakeRowParser(format);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RowFormat, NamesRoundTrip) {
  for (RowFormatKind kind : {RowFormatKind::kCsv, RowFormatKind::kLibsvm, RowFormatKind::kVector,
                             RowFormatKind::kJsonl, RowFormatKind::kCompact,
                             RowFormatKind::kParquet}) {
    EXPECT_EQ(ParseRowFormatKind(RowFormatKindName(kind)), kind);
  }
  EXPECT_STREQ(RowFormatKindName(RowFormatKind::kCompact), "compact");
  EXPECT_STREQ(RowFormatKindName(RowFormatKind::kParquet), "parquet");
  EXPECT_EQ(ParseRowFormatKind("orc"), std::nullopt);
  EXPECT_EQ(ParseRowFormatKind("CSV"), std::nullopt);
}

TEST(MakeRowParser, RejectsANegativeNumberOfFeatures) {
  EXPECT_EQ(UsageErrorOf(Csv(-1)), "the number of features must be positive, got -1");
}

TEST(CsvParser, LabelFirstAndLearnsTheNumberOfFeatures) {
  auto parser = MakeRowParser(Csv());
  EXPECT_EQ(parser->num_features(), 0);
  Row row;
  parser->Parse("5,0,0.25,1", &row);
  EXPECT_EQ(row.label, Floats{5});
  EXPECT_EQ(row.features, (Floats{0, 0.25f, 1}));
  EXPECT_EQ(row.id, "");
  EXPECT_EQ(parser->num_features(), 3);
  EXPECT_EQ(ErrorOf(parser.get(), "5,0,1"), "0: expected 4 columns (3 features + 1 label), got 3");
}

TEST(CsvParser, LabelLast) {
  RowFormat format = Csv();
  format.label_col = -1;
  Row row = ParseOne(format, "0,0.25,1,5");
  EXPECT_EQ(row.label, Floats{5});
  EXPECT_EQ(row.features, (Floats{0, 0.25f, 1}));
}

TEST(CsvParser, LabelRangeInTheMiddle) {
  RowFormat format = Csv(2);
  format.label_col = 1;
  format.label_count = 2;
  Row row = ParseOne(format, "1,2,3,4");
  EXPECT_EQ(row.label, (Floats{2, 3}));
  EXPECT_EQ(row.features, (Floats{1, 4}));
}

TEST(CsvParser, LabelRangeCountedFromTheEnd) {
  RowFormat format = Csv();
  format.label_col = -2;
  format.label_count = 2;
  Row row = ParseOne(format, "1,2,3,4");
  EXPECT_EQ(row.label, (Floats{3, 4}));
  EXPECT_EQ(row.features, (Floats{1, 2}));
}

TEST(CsvParser, NoLabelMakesEveryColumnAFeature) {
  RowFormat format = Csv();
  format.label = LabelPresence::kNone;
  Row row = ParseOne(format, "5,0,1");
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{5, 0, 1}));
}

TEST(CsvParser, OptionalLabelDecidedByTheColumnCount) {
  RowFormat format = Csv(2);
  format.label = LabelPresence::kOptional;
  auto parser = MakeRowParser(format);
  Row row;
  parser->Parse("1,2,3", &row);
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.features, (Floats{2, 3}));
  parser->Parse("2,3", &row);
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{2, 3}));
  EXPECT_EQ(ErrorOf(parser.get(), "1"),
            "0: expected 2 columns (2 features) or 3 (2 features + 1 label), got 1");
}

TEST(CsvParser, IdColumnIsTakenOutAsText) {
  RowFormat format = Csv();
  format.id_col = 0;
  format.label_col = 1;
  Row row = ParseOne(format, "row-7 ,5,0.5,1");
  EXPECT_EQ(row.id, "row-7");
  EXPECT_EQ(row.label, Floats{5});
  EXPECT_EQ(row.features, (Floats{0.5f, 1}));
}

TEST(CsvParser, IdColumnAfterTheLabelKeepsColumnNumbersOfTheRow) {
  RowFormat format = Csv(3);
  format.id_col = 2;
  format.label_col = 3;
  Row row = ParseOne(format, "0.5,1,abc,7,2");
  EXPECT_EQ(row.id, "abc");
  EXPECT_EQ(row.label, Floats{7});
  EXPECT_EQ(row.features, (Floats{0.5f, 1, 2}));
  EXPECT_EQ(ErrorOf(format, "0.5,1,abc,7"),
            "0: expected 5 columns (3 features + 1 label + 1 id), got 4");
}

TEST(CsvParser, IdColumnCountedFromTheEnd) {
  RowFormat format = Csv();
  format.id_col = -1;
  Row row = ParseOne(format, "5,0.5,1,x9");
  EXPECT_EQ(row.id, "x9");
  EXPECT_EQ(row.label, Floats{5});
  EXPECT_EQ(row.features, (Floats{0.5f, 1}));
}

TEST(CsvParser, IdWithoutLabel) {
  RowFormat format = Csv(2);
  format.label = LabelPresence::kNone;
  format.id_col = 1;
  Row row = ParseOne(format, "1,key,2");
  EXPECT_EQ(row.id, "key");
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{1, 2}));
  EXPECT_EQ(ErrorOf(format, "1,key"), "0: expected 3 columns (2 features + 1 id), got 2");
}

TEST(CsvParser, TrimsSpacesAndTabsAroundFields) {
  Row row = ParseOne(Csv(), " 5 ,\t0.5 , 1e1 ,-2\t");
  EXPECT_EQ(row.label, Floats{5});
  EXPECT_EQ(row.features, (Floats{0.5f, 10, -2}));
}

TEST(CsvParser, OtherDelimiters) {
  RowFormat format = Csv();
  format.delimiter = '\t';
  Row row = ParseOne(format, "5\t 0.5 \t1");
  EXPECT_EQ(row.features, (Floats{0.5f, 1}));
  format.delimiter = ' ';
  row = ParseOne(format, "5 0.5\t 1");
  EXPECT_EQ(row.features, (Floats{0.5f, 1}));
  format.delimiter = ';';
  EXPECT_EQ(ErrorOf(format, "5;0,5"), "3: expected a number, got \"0,5\"");
}

TEST(CsvParser, NumbersBeyondTheFastPath) {
  Row row = ParseOne(Csv(), "+1,1e-3,+2.5,-0.5,0.50196078431372551,123456789,.5,5.");
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.features,
            (Floats{1e-3f, 2.5f, -0.5f, 0.50196078431372551f, 123456789.0f, 0.5f, 5.0f}));
}

TEST(CsvParser, NanAndInfOnlyWhenAllowed) {
  RowFormat format = Csv();
  EXPECT_EQ(ErrorOf(format, "1,0.5,nan"), "7: expected a finite number, got \"nan\"");
  EXPECT_EQ(ErrorOf(format, "-Inf,0.5"), "1: expected a finite number, got \"-Inf\"");
  EXPECT_EQ(ErrorOf(format, "1,1e39"), "3: expected a finite number, got \"1e39\"");
  format.allow_nan = true;
  Row row = ParseOne(format, "inf,NaN,-infinity");
  EXPECT_EQ(row.label, Floats{INFINITY});
  ASSERT_EQ(row.features.size(), 2u);
  EXPECT_TRUE(std::isnan(row.features[0]));
  EXPECT_EQ(row.features[1], -INFINITY);
}

TEST(CsvParser, CrlfLinesThroughTheLineReader) {
  LineReader reader(std::make_unique<StringByteReader>("5,1,2\r\n6,3,4\r\n"), "test", 100);
  auto parser = MakeRowParser(Csv());
  Row row;
  std::string_view line;
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  EXPECT_EQ(row.features, (Floats{1, 2}));
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  EXPECT_EQ(row.label, Floats{6});
  EXPECT_EQ(row.features, (Floats{3, 4}));
}

TEST(CsvParser, ReusesTheRowsBuffers) {
  RowFormat format = Csv();
  format.id_col = 0;
  format.label_col = 1;
  auto parser = MakeRowParser(format);
  std::string line = "id";
  for (int i = 0; i < 785; ++i) line += ",0.5";
  Row row;
  parser->Parse(line, &row);
  ASSERT_EQ(row.features.size(), 784u);
  const float* features = row.features.data();
  const float* label = row.label.data();
  line[1] = 'x';
  parser->Parse(line, &row);
  EXPECT_EQ(row.features.data(), features);
  EXPECT_EQ(row.label.data(), label);
  EXPECT_EQ(row.id, "ix");
  EXPECT_EQ(row.features.size(), 784u);
}

TEST(CsvParser, ReplacesWhatTheRowHeld) {
  Row row;
  row.features = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
  row.label = {9, 9};
  row.id = "old";
  MakeRowParser(Csv())->Parse("1,2", &row);
  EXPECT_EQ(row.features, Floats{2});
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.id, "");
}

TEST(CsvParser, ErrorsNameTheFieldAndItsColumn) {
  RowFormat format = Csv();
  EXPECT_EQ(ErrorOf(format, ""), "0: empty line");
  EXPECT_EQ(ErrorOf(format, " \t "), "0: empty line");
  EXPECT_EQ(ErrorOf(format, "5,abc,1"), "3: expected a number, got \"abc\"");
  EXPECT_EQ(ErrorOf(format, "5,  abc ,1"), "5: expected a number, got \"abc\"");
  EXPECT_EQ(ErrorOf(format, "5,,1"), "3: expected a number, got \"\"");
  EXPECT_EQ(ErrorOf(format, "5,1,"), "5: expected a number, got \"\"");
  EXPECT_EQ(ErrorOf(format, "5,1 2"), "3: expected a number, got \"1 2\"");
  EXPECT_EQ(ErrorOf(format, "5,\"1\",2"),
            "3: expected a number, got a quoted field (csv quoting is not supported)");
  EXPECT_EQ(ErrorOf(format, "5," + std::string(40, 'x')),
            "3: expected a number, got \"" + std::string(32, 'x') + "...\"");
}

TEST(CsvParser, WrongColumnCounts) {
  RowFormat format = Csv(3);
  EXPECT_EQ(ErrorOf(format, "5,1,2"), "0: expected 4 columns (3 features + 1 label), got 3");
  EXPECT_EQ(ErrorOf(format, "5,1,2,3,4"), "0: expected 4 columns (3 features + 1 label), got 5");
  format.label_count = 2;
  EXPECT_EQ(ErrorOf(format, "5,1,2"), "0: expected 5 columns (3 features + 2 labels), got 3");
  format.label = LabelPresence::kNone;
  EXPECT_EQ(ErrorOf(format, "1,2"), "0: expected 3 features, got 2");
  format.num_features = 1;
  EXPECT_EQ(ErrorOf(format, "1,2"), "0: expected 1 feature, got 2");
}

TEST(CsvParser, TheFirstRowNeedsAFeature) {
  EXPECT_EQ(ErrorOf(Csv(), "5"),
            "0: expected at least 2 columns (at least 1 feature + 1 label), got 1");
  RowFormat format = Csv();
  format.label_col = 1;
  format.label_count = 2;
  format.id_col = 0;
  EXPECT_EQ(ErrorOf(format, "a,1,2"),
            "0: expected at least 4 columns (at least 1 feature + 2 labels + 1 id), got 3");
}

TEST(CsvParser, LabelOrIdColumnsOutsideTheRow) {
  RowFormat format = Csv();
  format.label_col = 5;
  EXPECT_EQ(ErrorOf(format, "1,2,3"), "0: label column 5 is outside a row of 3 columns");
  format.label_col = 0;
  format.id_col = 5;
  EXPECT_EQ(ErrorOf(format, "1,2,3"), "0: id column 5 is outside a row of 3 columns");
  format.id_col = -5;
  EXPECT_EQ(ErrorOf(format, "1,2,3"), "0: id column -5 is outside a row of 3 columns");
}

TEST(CsvParser, LabelColumnThatIsTheIdColumnInARow) {
  RowFormat format = Csv();
  format.label_col = -1;
  format.id_col = 2;
  EXPECT_EQ(ErrorOf(format, "1,2,x"), "0: label column 2 is the id column");
  EXPECT_EQ(ParseOne(format, "1,2,x,3").label, Floats{3});
}

TEST(CsvParser, FormatsThatCannotWork) {
  RowFormat format = Csv();
  format.label = LabelPresence::kOptional;
  EXPECT_EQ(UsageErrorOf(format),
            "csv rows with an optional label need the number of features");
  format = Csv();
  format.label_count = 0;
  EXPECT_EQ(UsageErrorOf(format), "the label count must be at least 1, got 0");
  format = Csv();
  format.label_col = -1;
  format.label_count = 2;
  EXPECT_EQ(UsageErrorOf(format), "2 label columns starting at column -1 run past the last column");
  format = Csv(3);
  format.label_col = 4;
  EXPECT_EQ(UsageErrorOf(format), "label column 4 is outside rows of 4 columns");
  format.label_col = 4;
  format.label_count = 3;
  EXPECT_EQ(UsageErrorOf(format), "label columns 4..6 are outside rows of 6 columns");
  format = Csv();
  format.id_col = 0;
  EXPECT_EQ(UsageErrorOf(format), "label column 0 is the id column");
  format.label_col = 1;
  format.label_count = 2;
  format.id_col = 2;
  EXPECT_EQ(UsageErrorOf(format), "label columns 1..2 include the id column 2");
  format = Csv(3);
  format.label_col = -1;
  format.id_col = 4;
  EXPECT_EQ(UsageErrorOf(format), "label column -1 is the id column");
  format.id_col = 9;
  EXPECT_EQ(UsageErrorOf(format), "id column 9 is outside rows of 5 columns");
  format = Csv();
  format.delimiter = '.';
  EXPECT_EQ(
      UsageErrorOf(format),
      "csv delimiter \".\" cannot be used: it can be part of a number, a quote or a line end");
  format.delimiter = '\n';
  EXPECT_EQ(UsageErrorOf(format),
            "csv delimiter byte 0x0a cannot be used: it can be part of a number, a quote or a "
            "line end");
}

}  // namespace
}  // namespace sparktorch
