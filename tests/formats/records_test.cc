#include "formats/records.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "formats/error.h"

namespace sparktorch {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Runs `write` on a RecordWriter over a temporary file and returns what it wrote.
std::string Written(const std::function<void(RecordWriter&)>& write) {
  std::FILE* file = std::tmpfile();
  EXPECT_NE(file, nullptr);
  RecordWriter writer(file, "stdout");
  write(writer);
  writer.Flush();
  std::rewind(file);
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, file)) > 0) out.append(buf, n);
  std::fclose(file);
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

struct ReadBack {
  std::vector<std::pair<std::string, std::string>> predictions;  // id, value
  std::optional<std::string> model;
  std::vector<std::string> summaries;
};

// Feeds every line of `text` to a RecordReader named "records.txt", then takes the model.
ReadBack Read(const std::string& text) {
  RecordReader reader("records.txt");
  ReadBack back;
  for (const std::string& line : Lines(text)) {
    if (auto p = reader.Feed(line)) back.predictions.emplace_back(p->id, p->value);
  }
  back.model = reader.TakeModel();
  back.summaries = reader.summaries();
  return back;
}

// The message of the ModelError that reading `text` throws, from Feed or TakeModel.
std::string ReadError(const std::string& text) {
  try {
    Read(text);
  } catch (const ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ModelError reading:\n" << text.substr(0, 500);
  return "";
}

// Every byte value, in an order that differs from chunk to chunk.
std::string ModelBytes(size_t n) {
  std::string bytes(n, '\0');
  uint32_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    bytes[i] = static_cast<char>(x >> 24);
  }
  return bytes;
}

std::string WrittenModel(const std::string& model) {
  return Written([&](RecordWriter& w) { w.WriteModel(model); });
}

// "hello world!" as three 4-byte chunks, with CRCs and base64 computed by Python's zlib and
// base64 modules: the reader accepts what a Python writer would produce.
const char kChunk0[] = "M\t0\t3\t1c8600e3\taGVsbA==";  // "hell"
const char kChunk1[] = "M\t1\t3\tc73fed51\tbyB3bw==";  // "o wo"
const char kChunk2[] = "M\t2\t3\tec473bb2\tcmxkIQ==";  // "rld!"
const char kEnd[] = "E\t3\t12\t03b4c26d";

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// --- Writer output -------------------------------------------------------------------------

TEST(RecordWriter, WritesEmptyModelAsEndRecordOnly) {
  EXPECT_EQ(WrittenModel(""), "E\t0\t0\t00000000\n");
}

TEST(RecordWriter, WritesOneByteModelAsOneChunkAndEnd) {
  // zlib.crc32(b"a") == 0xe8b7be43, base64.b64encode(b"a") == b"YQ==".
  EXPECT_EQ(WrittenModel("a"), "M\t0\t1\te8b7be43\tYQ==\nE\t1\t1\te8b7be43\n");
}

TEST(RecordWriter, WritesPredictionsWithAndWithoutIds) {
  std::string out = Written([](RecordWriter& w) {
    w.WritePrediction("", "0.5");
    w.WritePrediction("row-7", "[1.0,2.0]");
  });
  EXPECT_EQ(out, "P\t0.5\nP\trow-7\t[1.0,2.0]\n");
}

TEST(RecordWriter, WritesSummaryAsOneRecord) {
  EXPECT_EQ(Written([](RecordWriter& w) { w.WriteSummary(R"({"loss":0.25})"); }),
            "S\t{\"loss\":0.25}\n");
}

TEST(RecordWriter, SplitsModelIntoChunksOfFixedSize) {
  const std::string model = ModelBytes(2 * kModelChunkBytes + 10);
  const std::vector<std::string> lines = Lines(WrittenModel(model));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_TRUE(StartsWith(lines[0], "M\t0\t3\t"));
  EXPECT_TRUE(StartsWith(lines[1], "M\t1\t3\t"));
  EXPECT_TRUE(StartsWith(lines[2], "M\t2\t3\t"));
  EXPECT_TRUE(StartsWith(lines[3], "E\t3\t" + std::to_string(model.size()) + "\t"));
  // base64 of kModelChunkBytes bytes, then of the 10 left: 4 characters per 3 bytes.
  const size_t header = std::string("M\t0\t3\t12345678\t").size();
  EXPECT_EQ(lines[0].size() - header, kModelChunkBytes / 3 * 4);
  EXPECT_EQ(lines[1].size() - header, kModelChunkBytes / 3 * 4);
  EXPECT_EQ(lines[2].size() - header, 16u);
}

TEST(RecordWriter, KeepsEveryLineWithinTheBound) {
  const std::string text = WrittenModel(ModelBytes(3 * kModelChunkBytes));
  const std::vector<std::string> lines = Lines(text);
  ASSERT_EQ(lines.size(), 4u);
  for (const std::string& line : lines) {
    EXPECT_LE(line.size() + 1, kMaxRecordLineBytes);  // with its newline
  }
  // A chunk line keeps room for SEQ and COUNT of 20 digits each.
  const size_t largest = 2 + 20 + 1 + 20 + 1 + 8 + 1 + (kModelChunkBytes + 2) / 3 * 4 + 1;
  EXPECT_LE(largest, kMaxRecordLineBytes);
}

TEST(RecordWriter, RefusesPredictionValueWithTab) {
  std::FILE* file = std::tmpfile();
  RecordWriter writer(file, "stdout");
  try {
    writer.WritePrediction("", "1\t2");
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "stdout: prediction \"1\\x092\" holds a tab or a line break");
  }
  std::fclose(file);
}

TEST(RecordWriter, RefusesPredictionIdWithNewline) {
  std::FILE* file = std::tmpfile();
  RecordWriter writer(file, "stdout");
  try {
    writer.WritePrediction("a\nb", "1");
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "stdout: prediction id \"a\\x0ab\" holds a tab or a line break");
  }
  std::fclose(file);
}

// Python's text files and str.splitlines() end a line at '\r' too.
TEST(RecordWriter, RefusesPredictionWithCarriageReturn) {
  std::FILE* file = std::tmpfile();
  RecordWriter writer(file, "stdout");
  EXPECT_THROW(writer.WritePrediction("", "1\r"), Error);
  EXPECT_THROW(writer.WritePrediction("a\rb", "1"), Error);
  writer.Flush();
  EXPECT_EQ(std::ftell(file), 0L);  // nothing written
  std::fclose(file);
}

TEST(RecordWriter, RefusesSummaryWithLineBreak) {
  std::FILE* file = std::tmpfile();
  RecordWriter writer(file, "stdout");
  EXPECT_THROW(writer.WriteSummary("{\"a\":\n1}"), Error);
  std::fclose(file);
}

TEST(RecordWriter, RefusesPredictionLongerThanALine) {
  std::FILE* file = std::tmpfile();
  RecordWriter writer(file, "stdout");
  try {
    writer.WritePrediction("", std::string(kMaxRecordLineBytes - 1, '1'));
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "stdout: a prediction record of 1048577 bytes is longer than the 1048576 a "
                 "record line may hold");
  }
  std::fclose(file);
}

TEST(RecordWriter, ThrowsNamingStreamWhenFlushFails) {
  std::FILE* full = std::fopen("/dev/full", "w");
  ASSERT_NE(full, nullptr);
  RecordWriter writer(full, "stdout");
  writer.WritePrediction("", "1");  // buffered
  try {
    writer.Flush();
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "stdout: cannot write records: No space left on device");
  }
  std::fclose(full);
}

TEST(RecordWriter, ThrowsNamingStreamWhenWriteFails) {
  std::FILE* full = std::fopen("/dev/full", "w");
  ASSERT_NE(full, nullptr);
  RecordWriter writer(full, "stdout");
  // A chunk larger than the stream's buffer is written through at once, and fails.
  try {
    writer.WriteModel(ModelBytes(kModelChunkBytes));
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "stdout: cannot write records: No space left on device");
  }
  std::fclose(full);
}

// --- Round trips ---------------------------------------------------------------------------

class RecordModelRoundTrip : public ::testing::TestWithParam<size_t> {};

TEST_P(RecordModelRoundTrip, ReadsBackTheModelWritten) {
  const std::string model = ModelBytes(GetParam());
  const std::string text = WrittenModel(model);
  const size_t chunks = (model.size() + kModelChunkBytes - 1) / kModelChunkBytes;
  EXPECT_EQ(Lines(text).size(), chunks + 1);
  ReadBack back = Read(text);
  ASSERT_TRUE(back.model.has_value());
  EXPECT_EQ(back.model->size(), model.size());
  EXPECT_TRUE(*back.model == model);
}

INSTANTIATE_TEST_SUITE_P(Records, RecordModelRoundTrip,
                         ::testing::Values(0, 1, 2, 3, kModelChunkBytes - 1, kModelChunkBytes,
                                           kModelChunkBytes + 1, 3 * kModelChunkBytes - 5));

TEST(RecordRoundTrip, ReadsPredictionsModelAndSummariesInterleaved) {
  const std::string model = ModelBytes(1000);
  const std::string text = Written([&](RecordWriter& w) {
    w.WritePrediction("", "0.5");
    w.WritePrediction("id-1", "3");
    w.WriteModel(model);
    w.WritePrediction("id 2", "[0.25,0.75]");
    w.WriteSummary(R"({"rank":0,"loss":0.125})");
    w.WriteSummary("{\"rank\":\t1}");  // JSON may hold a tab between tokens
  });
  ReadBack back = Read(text);
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(back.predictions,
            (std::vector<P>{{"", "0.5"}, {"id-1", "3"}, {"id 2", "[0.25,0.75]"}}));
  ASSERT_TRUE(back.model.has_value());
  EXPECT_TRUE(*back.model == model);
  EXPECT_EQ(back.summaries,
            (std::vector<std::string>{R"({"rank":0,"loss":0.125})", "{\"rank\":\t1}"}));
}

// --- Reader acceptance ---------------------------------------------------------------------

TEST(RecordReader, AcceptsChunksWrittenByPython) {
  ReadBack back = Read(Join({kChunk0, kChunk1, kChunk2, kEnd}));
  ASSERT_TRUE(back.model.has_value());
  EXPECT_EQ(*back.model, "hello world!");
}

TEST(RecordReader, ReturnsNoModelWhenStreamHoldsNone) {
  ReadBack back = Read("P\t1\nS\t{}\n");
  EXPECT_FALSE(back.model.has_value());
  EXPECT_EQ(back.predictions.size(), 1u);
}

TEST(RecordReader, ReturnsEmptyModelForEndRecordAlone) {
  ReadBack back = Read("E\t0\t0\t00000000\n");
  ASSERT_TRUE(back.model.has_value());
  EXPECT_EQ(*back.model, "");
}

TEST(RecordReader, ReturnsPredictionViewsIntoTheLine) {
  RecordReader reader("records.txt");
  const std::string line = "P\tk\tv";
  std::optional<RecordReader::Prediction> p = reader.Feed(line);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->id.data(), line.data() + 2);
  EXPECT_EQ(p->value.data(), line.data() + 4);
}

TEST(RecordReader, AcceptsLineOfExactlyTheBound) {
  ReadBack back = Read("P\t" + std::string(kMaxRecordLineBytes - 2, '7') + "\n");
  ASSERT_EQ(back.predictions.size(), 1u);
  EXPECT_EQ(back.predictions[0].second.size(), kMaxRecordLineBytes - 2);
}

// --- Reader refusals -----------------------------------------------------------------------

TEST(RecordReader, RefusesUnknownTag) {
  EXPECT_EQ(ReadError("P\t1\nhello\tworld\n"),
            "records.txt:2: not a sparktorch record (tag \"hello\")");
}

TEST(RecordReader, RefusesLogLineWithoutTab) {
  EXPECT_EQ(ReadError("Epoch 1/10 loss 0.25 accuracy 0.5 on 60000 rows\n"),
            "records.txt:1: not a sparktorch record (tag \"Epoch 1/10 loss 0.25 accuracy 0....\")");
}

TEST(RecordReader, RefusesEmptyLine) {
  EXPECT_EQ(ReadError("P\t1\n\n"), "records.txt:2: not a sparktorch record (empty line)");
}

TEST(RecordReader, RefusesLineLongerThanTheBound) {
  EXPECT_EQ(ReadError("P\t" + std::string(kMaxRecordLineBytes - 1, '7') + "\n"),
            "records.txt:1: line is 1048577 bytes, longer than the 1048576 a record line may "
            "hold");
}

TEST(RecordReader, RefusesRecordsWithWrongFieldCount) {
  EXPECT_EQ(ReadError("P\n"), "records.txt:1: P record has 1 field, expected 2 or 3");
  EXPECT_EQ(ReadError("P\ta\tb\tc\n"), "records.txt:1: P record has 4 fields, expected 2 or 3");
  EXPECT_EQ(ReadError("M\t0\t3\t1c8600e3\n"), "records.txt:1: M record has 4 fields, expected 5");
  EXPECT_EQ(ReadError("E\t0\t0\n"), "records.txt:1: E record has 3 fields, expected 4");
  EXPECT_EQ(ReadError("S\n"), "records.txt:1: S record has 1 field, expected 2");
}

TEST(RecordReader, RefusesNonNumericFields) {
  EXPECT_EQ(ReadError("M\tx\t3\t1c8600e3\taGVsbA==\n"),
            "records.txt:1: M record: SEQ \"x\" is not a number");
  EXPECT_EQ(ReadError("M\t0\t-3\t1c8600e3\taGVsbA==\n"),
            "records.txt:1: M record: COUNT \"-3\" is not a number");
  EXPECT_EQ(ReadError("M\t0\t 3\t1c8600e3\taGVsbA==\n"),
            "records.txt:1: M record: COUNT \" 3\" is not a number");
  EXPECT_EQ(ReadError("M\t0\t3\t1c8600e\taGVsbA==\n"),
            "records.txt:1: M record: CRC \"1c8600e\" is not 8 hex digits");
  EXPECT_EQ(ReadError("E\t0x1\t0\t00000000\n"),
            "records.txt:1: E record: COUNT \"0x1\" is not a number");
  EXPECT_EQ(ReadError("E\t0\t1e3\t00000000\n"),
            "records.txt:1: E record: BYTES \"1e3\" is not a number");
  EXPECT_EQ(ReadError("E\t0\t0\t0000000g\n"),
            "records.txt:1: E record: CRC \"0000000g\" is not 8 hex digits");
  EXPECT_EQ(ReadError("M\t99999999999999999999999\t3\t1c8600e3\taGVsbA==\n"),
            "records.txt:1: M record: SEQ \"99999999999999999999999\" is not a number");
}

TEST(RecordReader, RefusesSummaryThatIsNotAJsonObject) {
  EXPECT_EQ(ReadError("S\tloss=0.5\n"), "records.txt:1: S record does not hold a JSON object");
}

TEST(RecordReader, RefusesChunkWithWrongCrc) {
  // "hell" -> "helm": still valid base64, one byte changed.
  EXPECT_EQ(ReadError(Join({"M\t0\t3\t1c8600e3\taGVsbQ==", kChunk1, kChunk2, kEnd})),
            "records.txt:1: model chunk 0 of 3 is corrupt (crc32 6b813075, record says "
            "1c8600e3)");
}

TEST(RecordReader, RefusesCorruptedByteInWrittenChunk) {
  std::vector<std::string> lines = Lines(WrittenModel(ModelBytes(2 * kModelChunkBytes + 7)));
  ASSERT_EQ(lines.size(), 4u);
  std::string& chunk = lines[1];
  const std::string crc = chunk.substr(std::string("M\t1\t3\t").size(), 8);
  char& c = chunk[chunk.size() / 2];
  c = (c == 'A') ? 'B' : 'A';
  const std::string message = ReadError("P\t1\n" + Join(lines));
  EXPECT_TRUE(StartsWith(message, "records.txt:3: model chunk 1 of 3 is corrupt (crc32 "))
      << message;
  EXPECT_NE(message.find(", record says " + crc + ")"), std::string::npos) << message;
}

TEST(RecordReader, RefusesSwappedChunks) {
  EXPECT_EQ(ReadError(Join({kChunk0, kChunk2, kChunk1, kEnd})),
            "records.txt:2: model chunk 2 arrived after chunk 0: chunk 1 is missing");
}

TEST(RecordReader, RefusesMissingChunk) {
  EXPECT_EQ(ReadError(Join({"M\t0\t4\t1c8600e3\taGVsbA==", "M\t1\t4\tc73fed51\tbyB3bw==",
                            "M\t3\t4\tec473bb2\tcmxkIQ=="})),
            "records.txt:3: model chunk 3 arrived after chunk 1: chunk 2 is missing");
}

TEST(RecordReader, RefusesMissingFirstChunks) {
  EXPECT_EQ(ReadError(Join({kChunk2})),
            "records.txt:1: model chunk 2 arrived first: chunks 0 to 1 are missing");
}

TEST(RecordReader, RefusesRepeatedChunk) {
  EXPECT_EQ(ReadError(Join({kChunk0, kChunk1, kChunk1})),
            "records.txt:3: model chunk 1 arrived again after chunk 1");
}

TEST(RecordReader, RefusesChunkCountThatChanges) {
  EXPECT_EQ(ReadError(Join({kChunk0, "M\t1\t4\tc73fed51\tbyB3bw=="})),
            "records.txt:2: model chunk 1 says the model has 4 chunks, earlier chunks said 3");
}

TEST(RecordReader, RefusesChunkBeyondItsCount) {
  EXPECT_EQ(ReadError("M\t3\t3\t1c8600e3\taGVsbA==\n"),
            "records.txt:1: model chunk 3 of 3 is out of range (SEQ counts from 0)");
}

TEST(RecordReader, RefusesTruncatedBase64) {
  EXPECT_EQ(ReadError(Join({kChunk0, "M\t1\t3\tc73fed51\tbyB3b"})),
            "records.txt:2: model chunk 1 of 3 is not valid base64 (its length, 5, is not a "
            "multiple of 4 or its padding is malformed)");
}

TEST(RecordReader, RefusesBadBase64Character) {
  EXPECT_EQ(ReadError(Join({kChunk0, "M\t1\t3\tc73fed51\tbyB*bw=="})),
            "records.txt:2: model chunk 1 of 3 is not valid base64 (\"*\" at offset 3)");
}

TEST(RecordReader, RefusesEndBeforeAllChunks) {
  EXPECT_EQ(ReadError(Join({kChunk0, kChunk1, kEnd})),
            "records.txt:3: model end record arrived after 2 of 3 chunks: chunk 2 is missing");
}

TEST(RecordReader, RefusesEndWithWrongChunkCount) {
  EXPECT_EQ(ReadError(Join({kChunk0, kChunk1, kChunk2, "E\t4\t12\t03b4c26d"})),
            "records.txt:4: model end record says 4 chunks, 3 arrived");
  EXPECT_EQ(ReadError("E\t1\t0\t00000000\n"),
            "records.txt:1: model end record says 1 chunk, 0 arrived");
}

TEST(RecordReader, RefusesEndWithWrongByteCount) {
  EXPECT_EQ(ReadError(Join({kChunk0, kChunk1, kChunk2, "E\t3\t13\t03b4c26d"})),
            "records.txt:4: model end record says 13 bytes, 12 arrived");
}

TEST(RecordReader, RefusesEndWithWrongCrc) {
  EXPECT_EQ(ReadError(Join({kChunk0, kChunk1, kChunk2, "E\t3\t12\t03b4c26e"})),
            "records.txt:4: model is corrupt (crc32 03b4c26d, end record says 03b4c26e)");
}

TEST(RecordReader, RefusesSecondModel) {
  EXPECT_EQ(ReadError(Join({kChunk0, kChunk1, kChunk2, kEnd, "P\t1", kChunk0})),
            "records.txt:6: a second model begins after the first ended on line 4");
  EXPECT_EQ(ReadError(Join({"E\t0\t0\t00000000", "E\t0\t0\t00000000"})),
            "records.txt:2: a second model ends after the first ended on line 1");
}

TEST(RecordReader, RefusesModelWithoutEndRecord) {
  EXPECT_EQ(ReadError(Join({kChunk0, kChunk1, kChunk2, "P\t1"})),
            "records.txt: the model has no end record (3 of 3 chunks arrived)");
}

TEST(RecordReader, RefusesModelWithChunksMissingAtTheEnd) {
  EXPECT_EQ(ReadError(Join({kChunk0, kChunk1})),
            "records.txt: the model is incomplete: 2 of 3 chunks arrived and no end record "
            "(chunk 2 is missing)");
}

}  // namespace
}  // namespace sparktorch
