#include "formats/compact_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "formats/base64.h"
#include "formats/error.h"
#include "formats/line_reader.h"
#include "formats/row_parser.h"
#include "tests/formats/row_parser_testing.h"

namespace sparktorch {
namespace {

RowFormat Compact(int64_t num_features = 0, LabelPresence label = LabelPresence::kRequired) {
  RowFormat format;
  format.kind = RowFormatKind::kCompact;
  format.num_features = num_features;
  format.label = label;
  return format;
}

// What Python's base64.b64encode(struct.pack('<%df' % len(values), *values)) writes, on this
// little-endian machine.
std::string Pack(const Floats& values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  std::string text;
  Base64Encode(bytes, &text);
  return text;
}

TEST(CompactParser, DecodesWhatPythonWrites) {
  // base64.b64encode(struct.pack('<4f', 7.0, 0.0, 0.502, 1.0)).decode()
  auto parser = MakeRowParser(Compact());
  Row row;
  parser->Parse("AADgQAAAAAASgwA/AACAPw==", &row);
  EXPECT_EQ(row.label, Floats{7});
  EXPECT_EQ(row.features, (Floats{0, 0.502f, 1}));
  EXPECT_EQ(row.id, "");
  EXPECT_EQ(parser->num_features(), 3);
  // base64.b64encode(struct.pack('<5f', 1, 2, 3, 4, 5)).decode()
  EXPECT_EQ(ErrorOf(parser.get(), "AACAPwAAAEAAAEBAAACAQAAAoEA="),
            "0: expected 4 values (3 features + 1 label), got 5");
}

TEST(CompactParser, LabelLast) {
  RowFormat format = Compact();
  format.label_col = -1;
  // struct.pack('<3f', 1.0, 0.5, -2.0)
  Row row = ParseOne(format, "AACAPwAAAD8AAADA");
  EXPECT_EQ(row.label, Floats{-2});
  EXPECT_EQ(row.features, (Floats{1, 0.5f}));
}

TEST(CompactParser, LabelRange) {
  RowFormat format = Compact(3);
  format.label_col = 1;
  format.label_count = 2;
  Row row = ParseOne(format, Pack({1, 2, 3, 4, 5}));
  EXPECT_EQ(row.label, (Floats{2, 3}));
  EXPECT_EQ(row.features, (Floats{1, 4, 5}));
}

TEST(CompactParser, IdBeforeATab) {
  Row row = ParseOne(Compact(), "row-9\tAACAPwAAAD8AAADA");
  EXPECT_EQ(row.id, "row-9");
  EXPECT_EQ(row.label, Floats{1});
  EXPECT_EQ(row.features, (Floats{0.5f, -2}));
}

TEST(CompactParser, NoLabel) {
  Row row = ParseOne(Compact(0, LabelPresence::kNone), "AACAPwAAAD8AAADA");
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{1, 0.5f, -2}));
}

TEST(CompactParser, OptionalLabelDecidedByTheValueCount) {
  auto parser = MakeRowParser(Compact(2, LabelPresence::kOptional));
  Row row;
  parser->Parse("AACAPgAAgD8AAIC/", &row);  // struct.pack('<3f', 0.25, 1, -1)
  EXPECT_EQ(row.label, Floats{0.25f});
  EXPECT_EQ(row.features, (Floats{1, -1}));
  parser->Parse(Pack({1, -1}), &row);
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, (Floats{1, -1}));
  EXPECT_EQ(ErrorOf(parser.get(), Pack({1})),
            "0: expected 2 values (2 features) or 3 (2 features + 1 label), got 1");
}

TEST(CompactParser, RoundTripsEveryFloatBitPattern) {
  // Values that text formats mangle: subnormals, -0, the extremes.
  const Floats values = {0,    -0.0f,   1e-45f, 1.17549435e-38f, 3.4028235e38f, -3.4028235e38f,
                         0.1f, 1.0f / 3};
  RowFormat format = Compact(0, LabelPresence::kNone);
  Row row = ParseOne(format, Pack(values));
  ASSERT_EQ(row.features.size(), values.size());
  EXPECT_EQ(std::memcmp(row.features.data(), values.data(), values.size() * 4), 0);
}

TEST(CompactParser, NanAndInfOnlyWhenAllowed) {
  RowFormat format = Compact();
  // struct.pack('<2f', float('nan'), 1.0)
  EXPECT_EQ(ErrorOf(format, "AADAfwAAgD8="), "1: expected a finite number, got nan in column 0");
  EXPECT_EQ(ErrorOf(format, "ab\tAADAfwAAgD8="),
            "4: expected a finite number, got nan in column 0");
  // The value at column 1 starts in the 6th character; column 3 in the 17th.
  EXPECT_EQ(ErrorOf(format, Pack({1, INFINITY})),
            "6: expected a finite number, got inf in column 1");
  EXPECT_EQ(ErrorOf(format, Pack({1, 2, 3, -INFINITY})),
            "17: expected a finite number, got -inf in column 3");
  format.allow_nan = true;
  Row row = ParseOne(format, "AADAfwAAgD8=");
  EXPECT_TRUE(std::isnan(row.label[0]));
  EXPECT_EQ(row.features, Floats{1});
}

TEST(CompactParser, ReusesTheRowsBuffers) {
  auto parser = MakeRowParser(Compact());
  const std::string line = Pack(Floats(785, 0.5f));
  Row row;
  parser->Parse(line, &row);
  ASSERT_EQ(row.features.size(), 784u);
  const float* features = row.features.data();
  parser->Parse(line, &row);
  EXPECT_EQ(row.features.data(), features);
  EXPECT_EQ(row.features.size(), 784u);
}

TEST(CompactParser, Errors) {
  const RowFormat format = Compact();
  EXPECT_EQ(ErrorOf(format, ""), "0: empty line");
  EXPECT_EQ(ErrorOf(format, "AACAPwAAAD8AAAD"),
            "1: invalid base64: 15 characters, not a multiple of 4");
  EXPECT_EQ(ErrorOf(format, "x\tAACAPwAAAD8AAAD"),
            "3: invalid base64: 15 characters, not a multiple of 4");
  EXPECT_EQ(ErrorOf(format, "AACAPwAAAD8AAAD!"), "16: invalid base64: unexpected \"!\"");
  EXPECT_EQ(ErrorOf(format, std::string("AACAPwAAAD8AAAD\x01", 16)),
            "16: invalid base64: unexpected byte 0x01");
  EXPECT_EQ(ErrorOf(format, "AACAPwAA AD8AAADA"),
            "1: invalid base64: 17 characters, not a multiple of 4");
  EXPECT_EQ(ErrorOf(format, "AACAP==="), "6: invalid base64: unexpected \"=\"");
  EXPECT_EQ(ErrorOf(format, "AA=APwAAAD8AAADA"), "3: invalid base64: unexpected \"=\"");
  EXPECT_EQ(ErrorOf(format, "a\tAA\tAPwAAAD8="), "5: invalid base64: unexpected byte 0x09");
  EXPECT_EQ(ErrorOf(format, "AACA"), "1: invalid float32 data: 3 bytes, not a multiple of 4");
  EXPECT_EQ(ErrorOf(format, "id\t"),
            "0: expected at least 2 values (at least 1 feature + 1 label), got 0");
  EXPECT_EQ(ErrorOf(Compact(784), Pack(Floats(12, 0))),
            "0: expected 785 values (784 features + 1 label), got 12");
  EXPECT_EQ(ErrorOf(Compact(784, LabelPresence::kNone), Pack(Floats(12, 0))),
            "0: expected 784 features, got 12");
}

TEST(CompactParser, OptionalLabelNeedsTheNumberOfFeatures) {
  try {
    MakeRowParser(Compact(0, LabelPresence::kOptional));
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "compact rows with an optional label need the number of features");
    EXPECT_EQ(e.setting(), RowSetting::kNumFeatures);
  }
}

TEST(CompactParser, CrlfLinesThroughTheLineReader) {
  LineReader reader(
      std::make_unique<StringByteReader>("AACAPwAAAD8AAADA\r\nid\tAACAPgAAgD8AAIC/\r\n"), "test",
      1000);
  auto parser = MakeRowParser(Compact());
  Row row;
  std::string_view line;
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  ASSERT_EQ(reader.Next(&line), LineReader::Status::kLine);
  parser->Parse(line, &row);
  EXPECT_EQ(row.features, (Floats{1, -1}));
  EXPECT_EQ(row.label, Floats{0.25f});
  EXPECT_EQ(reader.Next(&line), LineReader::Status::kEnd);
}

}  // namespace
}  // namespace sparktorch
