#ifndef SPARKTORCH_TESTS_FORMATS_BYTE_READERS_TESTING_H_
#define SPARKTORCH_TESTS_FORMATS_BYTE_READERS_TESTING_H_

// What the tests of stream readers (LineReader, Float32RecordReader) share: a ByteReader that
// hands out its bytes a few at a time, as a pipe may.

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "formats/line_reader.h"

namespace sparktorch {

// Hands out at most `chunk` bytes per Read, to split lines and records across reads.
class ChunkedByteReader : public ByteReader {
 public:
  ChunkedByteReader(std::string data, size_t chunk) : data_(std::move(data)), chunk_(chunk) {}
  size_t Read(char* buf, size_t n) override {
    const size_t count = std::min({n, chunk_, data_.size() - pos_});
    std::copy_n(data_.data() + pos_, count, buf);
    pos_ += count;
    return count;
  }

 private:
  std::string data_;
  size_t chunk_;
  size_t pos_ = 0;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_TESTS_FORMATS_BYTE_READERS_TESTING_H_
