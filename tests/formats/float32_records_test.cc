#include "formats/float32_records.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "formats/error.h"
#include "formats/line_reader.h"
#include "tests/formats/byte_readers_testing.h"
#include "tests/formats/row_parser_testing.h"

namespace sparktorch {
namespace {

RowFormat Float32(int64_t num_features = 0, LabelPresence label = LabelPresence::kRequired) {
  RowFormat format;
  format.kind = RowFormatKind::kFloat32;
  format.num_features = num_features;
  format.label = label;
  return format;
}

std::string U32(uint32_t v) {
  std::string bytes(4, '\0');
  std::memcpy(bytes.data(), &v, 4);
  return bytes;
}

std::string F32(float v) {
  std::string bytes(4, '\0');
  std::memcpy(bytes.data(), &v, 4);
  return bytes;
}

// A sparse record: head 2^31 + K, SIZE, the K indices, the K values.
std::string Sparse(uint32_t size, const std::vector<uint32_t>& indices, const Floats& values) {
  std::string record = U32(kFloat32SparseBit | static_cast<uint32_t>(indices.size())) + U32(size);
  for (uint32_t i : indices) record += U32(i);
  for (float v : values) record += F32(v);
  return record;
}

// What a reader over `data` makes of it: "R<size>" a record, "E" a group end, up to the end.
std::string Split(const std::string& data, size_t step, size_t max_bytes = 1 << 20) {
  Float32RecordReader reader(std::make_unique<ChunkedByteReader>(data, step), "stdin", max_bytes);
  std::string seen;
  std::string_view record;
  for (;;) {
    switch (reader.Next(&record)) {
      case Float32RecordReader::Status::kRecord:
        seen += "R" + std::to_string(record.size()) + " ";
        continue;
      case Float32RecordReader::Status::kGroupEnd:
        seen += "E ";
        continue;
      case Float32RecordReader::Status::kEnd:
        return seen;
    }
  }
}

std::string SplitError(const std::string& data, size_t max_bytes = 1 << 20) {
  try {
    Split(data, 1 << 20, max_bytes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Float32RecordReader, SplitsRecordsOfEveryKindHoweverTheBytesArrive) {
  const std::string data = Float32Record({1, 2, 3}) + U32(kFloat32GroupEnd) + U32(kFloat32NullRow) +
                           Sparse(10, {2, 7}, {0.5f, 1.5f}) + Float32Record({}) +
                           U32(kFloat32GroupEnd);
  const std::string expected = "R16 E R4 R24 R4 E ";
  EXPECT_EQ(Split(data, 1 << 20), expected);
  EXPECT_EQ(Split(data, 1), expected);
  EXPECT_EQ(Split(data, 3), expected);
}

TEST(Float32RecordReader, GrowsItsBufferForARecordLargerThanIt) {
  const Floats wide(600000, 0.25f);  // 2.4 MB, over the first 1 MB buffer
  EXPECT_EQ(Split(Float32Record(wide) + Float32Record({1}), 65536, 4 << 20), "R2400004 R8 ");
}

TEST(Float32RecordReader, AStreamThatEndsInsideARecordFailsNamingIt) {
  EXPECT_EQ(SplitError(Float32Record({1}) + Float32Record({1, 2}).substr(0, 9)),
            "stdin: record 2: the input ends inside a record (9 of its 12 bytes)");
  EXPECT_EQ(SplitError(Float32Record({1}) + std::string("\x01\x00", 2)),
            "stdin: record 2: the input ends inside a record's head (2 of its 4 bytes)");
}

TEST(Float32RecordReader, ARecordOverTheLimitFails) {
  // Text read as records: "1,2," is the head 0x2c322c31, 741485617 values.
  EXPECT_EQ(SplitError("1,2,3\n4,5,6\n", 1024),
            "stdin: record 1: a record of 2965942472 bytes, over the limit of 1024; is the input "
            "float32 records?");
}

TEST(Float32Parser, SplitsTheLabelAsCompactDoes) {
  Row row = ParseOne(Float32(), Float32Record({7, 0.5f, 1}));
  EXPECT_EQ(row.label, Floats({7}));
  EXPECT_EQ(row.features, Floats({0.5f, 1}));
  RowFormat last = Float32();
  last.label_col = -1;
  row = ParseOne(last, Float32Record({7, 0.5f, 1}));
  EXPECT_EQ(row.label, Floats({1}));
  EXPECT_EQ(row.features, Floats({7, 0.5f}));
  row = ParseOne(Float32(2, LabelPresence::kOptional), Float32Record({0.5f, 1}));
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, Floats({0.5f, 1}));
}

TEST(Float32Parser, DensifiesASparseRecord) {
  Row row = ParseOne(Float32(0, LabelPresence::kNone), Sparse(5, {1, 4}, {0.5f, -2}));
  EXPECT_EQ(row.features, Floats({0, 0.5f, 0, 0, -2}));
  row = ParseOne(Float32(0, LabelPresence::kNone), Sparse(3, {}, {}));
  EXPECT_EQ(row.features, Floats({0, 0, 0}));
}

TEST(Float32Parser, RefusesBadRowsWithWhatIsWrong) {
  auto parser = MakeRowParser(Float32(2, LabelPresence::kNone));
  EXPECT_EQ(ErrorOf(parser.get(), U32(kFloat32NullRow)), "0: a null row (its features are null)");
  EXPECT_EQ(ErrorOf(parser.get(), Float32Record({1, 2, 3})), "0: expected 2 features, got 3");
  EXPECT_EQ(ErrorOf(parser.get(), Sparse(2, {2}, {1})),
            "0: sparse index 2 out of range for size 2");
  EXPECT_EQ(ErrorOf(parser.get(), Sparse(2, {1, 0}, {1, 1})),
            "0: sparse indices must be strictly ascending (0 after 1)");
  EXPECT_EQ(ErrorOf(parser.get(), Float32Record({1, std::nanf("")})),
            "0: expected a finite number, got nan in column 1");
  EXPECT_EQ(ErrorOf(parser.get(), Float32Record({-std::numeric_limits<float>::infinity(), 1})),
            "0: expected a finite number, got -inf in column 0");
  EXPECT_EQ(ErrorOf(parser.get(), Float32Record({1, 2})), "no error");
}

TEST(Float32Parser, RefusesARowOfNoValuesAndBytesThatAreNotOneRecord) {
  auto parser = MakeRowParser(Float32(0, LabelPresence::kNone));
  EXPECT_EQ(ErrorOf(parser.get(), Float32Record({})), "0: a row with no values");
  EXPECT_EQ(ErrorOf(parser.get(), Sparse(0, {}, {})), "0: a row with no values");
  EXPECT_EQ(ErrorOf(parser.get(), std::string("\x01\x00", 2)), "0: not a float32 record: 2 bytes");
  EXPECT_EQ(ErrorOf(parser.get(), Float32Record({1, 2}).substr(0, 8)),
            "0: not a float32 record: 8 bytes, its head says 12");
  EXPECT_EQ(ErrorOf(parser.get(), U32(kFloat32GroupEnd)), "0: a group end record, not a row");
  EXPECT_EQ(ErrorOf(parser.get(), Sparse(uint32_t{1} << 29, {}, {})),
            "0: a sparse row of size 536870912, over 2^28");
}

TEST(Float32Parser, AcceptsNanWhenTheFormatAllowsIt) {
  RowFormat format = Float32(0, LabelPresence::kNone);
  format.allow_nan = true;
  EXPECT_TRUE(std::isnan(ParseOne(format, Float32Record({std::nanf("")})).features[0]));
}

}  // namespace
}  // namespace sparktorch
