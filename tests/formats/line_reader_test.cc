#include "formats/line_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/formats/byte_readers_testing.h"

namespace sparktorch {
namespace {

// Every line, with "<too long>" for a dropped one, and the line number of each.
struct ReadResult {
  std::vector<std::string> lines;
  std::vector<size_t> line_numbers;
};

ReadResult ReadAll(LineReader* reader) {
  ReadResult result;
  std::string_view line;
  for (;;) {
    const LineReader::Status status = reader->Next(&line);
    if (status == LineReader::Status::kEnd) break;
    result.lines.push_back(status == LineReader::Status::kLine ? std::string(line)
                                                               : std::string("<too long>"));
    result.line_numbers.push_back(reader->line_number());
  }
  // The end stays the end.
  EXPECT_EQ(reader->Next(&line), LineReader::Status::kEnd);
  return result;
}

std::vector<std::string> Lines(std::string data, size_t chunk, size_t max_line_bytes) {
  LineReader reader(std::make_unique<ChunkedByteReader>(std::move(data), chunk), "test",
                    max_line_bytes);
  return ReadAll(&reader).lines;
}

using Strings = std::vector<std::string>;

TEST(StringByteReader, ReadsItsStringThenZero) {
  StringByteReader reader("hello");
  char buf[3];
  EXPECT_EQ(reader.Read(buf, 3), 3u);
  EXPECT_EQ(std::string(buf, 3), "hel");
  EXPECT_EQ(reader.Read(buf, 3), 2u);
  EXPECT_EQ(std::string(buf, 2), "lo");
  EXPECT_EQ(reader.Read(buf, 3), 0u);
}

TEST(LineReader, SplitsLinesAndStripsNewlines) {
  LineReader reader(std::make_unique<StringByteReader>("a,1\nb,2\r\n\nlast"), "stdin", 100);
  EXPECT_EQ(reader.name(), "stdin");
  EXPECT_EQ(reader.max_line_bytes(), 100u);
  const ReadResult result = ReadAll(&reader);
  EXPECT_EQ(result.lines, (Strings{"a,1", "b,2", "", "last"}));
  EXPECT_EQ(result.line_numbers, (std::vector<size_t>{1, 2, 3, 4}));
}

TEST(LineReader, EmptyInputHasNoLines) { EXPECT_EQ(Lines("", 1, 10), Strings{}); }

TEST(LineReader, AFinalNewlineAddsNoLine) {
  EXPECT_EQ(Lines("x\n", 4096, 10), Strings{"x"});
  EXPECT_EQ(Lines("\n", 4096, 10), Strings{""});
  EXPECT_EQ(Lines("x\r\n", 4096, 10), Strings{"x"});
}

TEST(LineReader, KeepsACarriageReturnThatDoesNotEndTheLine) {
  EXPECT_EQ(Lines("a\rb\n", 4096, 10), Strings{"a\rb"});
}

TEST(LineReader, OneByteReadsGiveTheSameLines) {
  const std::string data = "first line\r\nsecond\n\nthird, no newline";
  const Strings expected = {"first line", "second", "", "third, no newline"};
  for (size_t chunk : {1, 2, 3, 5, 7, 64}) {
    EXPECT_EQ(Lines(data, chunk, 100), expected) << "chunk " << chunk;
  }
}

TEST(LineReader, CarriageReturnAndNewlineInSeparateReads) {
  EXPECT_EQ(Lines("ab\r\ncd\r\n", 3, 100), (Strings{"ab", "cd"}));
}

TEST(LineReader, DropsLinesOverTheLimitAndKeepsGoing) {
  const std::string data = "short\n" + std::string(11, 'x') + "\nok\n" + std::string(30, 'y') +
                           "\r\n" + std::string(10, 'z') + "\r\nend";
  for (size_t chunk : {1, 4, 4096}) {
    LineReader reader(std::make_unique<ChunkedByteReader>(data, chunk), "test", 10);
    const ReadResult result = ReadAll(&reader);
    EXPECT_EQ(result.lines,
              (Strings{"short", "<too long>", "ok", "<too long>", std::string(10, 'z'), "end"}))
        << "chunk " << chunk;
    EXPECT_EQ(result.line_numbers, (std::vector<size_t>{1, 2, 3, 4, 5, 6}));
  }
}

TEST(LineReader, DropsATooLongLastLineWithoutNewline) {
  EXPECT_EQ(Lines("ok\n" + std::string(20, 'x'), 3, 10), (Strings{"ok", "<too long>"}));
  EXPECT_EQ(Lines("ok\n" + std::string(20, 'x'), 4096, 10), (Strings{"ok", "<too long>"}));
}

TEST(LineReader, DropsLinesLongerThanItsBufferWithoutKeepingThem) {
  // Longer than the 1 MiB first buffer and than the limit: dropped while streaming.
  const std::string huge(3 << 20, 'h');
  EXPECT_EQ(Lines("a\n" + huge + "\nb\n", 65536, 1 << 20), (Strings{"a", "<too long>", "b"}));
}

TEST(LineReader, GrowsItsBufferForLinesUpToTheLimit) {
  // 3 MiB lines, read in odd chunks, cross the first 1 MiB buffer many times.
  std::string a(3 << 20, 'a');
  std::string b(3 << 20, 'b');
  a[12345] = 'A';
  b.back() = 'B';
  const Strings lines = Lines(a + "\n" + b + "\r\nc", 100003, 4 << 20);
  EXPECT_EQ(lines, (Strings{a, b, "c"}));
}

TEST(LineReader, NoLimitWithTheLargestMaximum) {
  EXPECT_EQ(Lines("a\r\nbb\nccc", 2, SIZE_MAX), (Strings{"a", "bb", "ccc"}));
}

TEST(LineReader, ManyLinesAcrossBufferBoundaries) {
  std::string data;
  Strings expected;
  for (int i = 0; i < 200000; ++i) {
    expected.push_back(std::to_string(i) + ",0.5,1");
    data += expected.back() + (i % 3 == 0 ? "\r\n" : "\n");
  }
  EXPECT_EQ(Lines(data, 777777, 1000), expected);
}

}  // namespace
}  // namespace sparktorch
