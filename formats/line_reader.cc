#include "formats/line_reader.h"

#include <algorithm>
#include <cstring>

namespace sparktorch {
namespace {

constexpr size_t kInitialBufferBytes = size_t{1} << 20;

std::string_view WithoutCarriageReturn(const char* begin, size_t size) {
  if (size > 0 && begin[size - 1] == '\r') --size;
  return std::string_view(begin, size);
}

}  // namespace

size_t StringByteReader::Read(char* buf, size_t n) {
  size_t count = std::min(n, data_.size() - pos_);
  std::memcpy(buf, data_.data() + pos_, count);
  pos_ += count;
  return count;
}

LineReader::LineReader(std::unique_ptr<ByteReader> in, std::string name, size_t max_line_bytes)
    : in_(std::move(in)), name_(std::move(name)), max_line_bytes_(max_line_bytes) {
  buf_.resize(kInitialBufferBytes);
}

bool LineReader::Fill() {
  size_t n = in_->Read(buf_.data() + end_, buf_.size() - end_);
  if (n == 0) eof_ = true;
  end_ += n;
  return n > 0;
}

LineReader::Status LineReader::Next(std::string_view* line) {
  // A line may hold max_line_bytes plus "\r\n" before it is known to be too long (saturating:
  // SIZE_MAX means no limit).
  const size_t max_with_cr = std::max(max_line_bytes_, max_line_bytes_ + 1);
  const size_t max_buffer = std::max({kInitialBufferBytes, max_with_cr, max_with_cr + 1});
  size_t scan = begin_;  // bytes before this in [begin_, end_) hold no newline
  for (;;) {
    const char* data = buf_.data();
    if (const void* nl = std::memchr(data + scan, '\n', end_ - scan)) {
      size_t pos = static_cast<size_t>(static_cast<const char*>(nl) - data);
      std::string_view found = WithoutCarriageReturn(data + begin_, pos - begin_);
      begin_ = pos + 1;
      ++line_number_;
      if (found.size() > max_line_bytes_) return Status::kTooLong;
      *line = found;
      return Status::kLine;
    }
    scan = end_;
    if (eof_) {
      if (begin_ == end_) return Status::kEnd;
      std::string_view found = WithoutCarriageReturn(data + begin_, end_ - begin_);
      begin_ = end_;
      ++line_number_;
      if (found.size() > max_line_bytes_) return Status::kTooLong;
      *line = found;
      return Status::kLine;
    }
    if (end_ - begin_ > max_with_cr) {
      // Too long whatever follows: drop it up to and including its newline.
      ++line_number_;
      begin_ = end_ = 0;
      for (;;) {
        if (!Fill()) return Status::kTooLong;
        if (const void* nl = std::memchr(buf_.data(), '\n', end_)) {
          begin_ = static_cast<size_t>(static_cast<const char*>(nl) - buf_.data()) + 1;
          return Status::kTooLong;
        }
        end_ = 0;
      }
    }
    // Make room for more of this line: move it to the front, then grow when that is not enough.
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      scan -= begin_;
      begin_ = 0;
    }
    if (end_ == buf_.size()) buf_.resize(std::min(buf_.size() * 2, max_buffer));
    Fill();
  }
}

}  // namespace sparktorch
