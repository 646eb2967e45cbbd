#ifndef SPARKTORCH_FORMATS_LINE_READER_H_
#define SPARKTORCH_FORMATS_LINE_READER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sparktorch {

// A source of bytes: a file descriptor, a gzip stream, a string in tests.
class ByteReader {
 public:
  virtual ~ByteReader() = default;
  // Reads up to `n` bytes into `buf`; returns how many, 0 at the end. Throws InputError on a
  // read error, naming the source.
  virtual size_t Read(char* buf, size_t n) = 0;
};

// A ByteReader over bytes held in memory (tests, benchmarks).
class StringByteReader : public ByteReader {
 public:
  explicit StringByteReader(std::string data) : data_(std::move(data)) {}
  size_t Read(char* buf, size_t n) override;

 private:
  std::string data_;
  size_t pos_ = 0;
};

// Splits a byte stream into lines without copying them where it can. Not thread-safe.
class LineReader {
 public:
  enum class Status {
    kLine,     // *line holds the next line, without "\n" or "\r\n"
    kTooLong,  // the next line was longer than max_line_bytes; it was consumed and dropped
    kEnd,      // no more lines
  };

  // `name` is how messages refer to the stream ("stdin", "train.csv.gz").
  LineReader(std::unique_ptr<ByteReader> in, std::string name, size_t max_line_bytes);

  // Reads the next line. *line stays valid until the next call. A last line without a newline
  // is returned as a line.
  Status Next(std::string_view* line);

  // The 1-based number of the line last returned (or dropped as too long).
  size_t line_number() const { return line_number_; }
  const std::string& name() const { return name_; }
  size_t max_line_bytes() const { return max_line_bytes_; }

 private:
  bool Fill();

  std::unique_ptr<ByteReader> in_;
  std::string name_;
  size_t max_line_bytes_;
  std::vector<char> buf_;
  size_t begin_ = 0;  // first unread byte in buf_
  size_t end_ = 0;    // one past the last valid byte in buf_
  bool eof_ = false;
  size_t line_number_ = 0;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_LINE_READER_H_
