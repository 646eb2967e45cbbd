#include "formats/float32_records.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "formats/error.h"
#include "formats/number_parse.h"

namespace sparktorch {
namespace {

constexpr size_t kInitialBufferBytes = size_t{1} << 16;  // grows for a larger record
constexpr size_t kHeadBytes = 4;
// The largest size of a sparse row, as the vector format's (a small record must not make a
// row of gigabytes).
constexpr uint32_t kMaxSparseSize = uint32_t{1} << 28;

uint32_t LoadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

float LoadF32(const char* p) {
  const uint32_t bits = LoadU32(p);
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

// The bytes a record with this head holds after its head.
size_t PayloadBytes(uint32_t head) {
  if (head == kFloat32NullRow || head == kFloat32GroupEnd) return 0;
  if (head & kFloat32SparseBit) return 4 + size_t{8} * (head & ~kFloat32SparseBit);
  return size_t{4} * head;
}

}  // namespace

Float32RecordReader::Float32RecordReader(std::unique_ptr<ByteReader> in, std::string name,
                                         size_t max_record_bytes)
    : in_(std::move(in)), name_(std::move(name)), max_record_bytes_(max_record_bytes) {
  buf_.resize(kInitialBufferBytes);
}

void Float32RecordReader::Fail(const std::string& what, RowSetting setting) const {
  throw InputError(name_ + ": record " + std::to_string(record_number_) + ": " + what, setting);
}

bool Float32RecordReader::Have(size_t n) {
  while (end_ - begin_ < n) {
    if (begin_ > 0) {  // move what is left to the front
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (buf_.size() < n) buf_.resize(std::max(n, buf_.size() * 2));
    const size_t got = in_->Read(buf_.data() + end_, buf_.size() - end_);
    if (got == 0) return false;
    end_ += got;
  }
  return true;
}

Float32RecordReader::Status Float32RecordReader::Next(std::string_view* record) {
  if (!Have(kHeadBytes)) {
    if (end_ == begin_) return Status::kEnd;
    ++record_number_;
    Fail("the input ends inside a record's head (" + std::to_string(end_ - begin_) +
         " of its 4 bytes)");
  }
  ++record_number_;
  const uint32_t head = LoadU32(buf_.data() + begin_);
  if (head == kFloat32GroupEnd) {
    begin_ += kHeadBytes;
    return Status::kGroupEnd;
  }
  const size_t size = kHeadBytes + PayloadBytes(head);
  if (size > max_record_bytes_) {
    Fail("a record of " + std::to_string(size) + " bytes, over the limit of " +
             std::to_string(max_record_bytes_) + "; is the input float32 records?",
         RowSetting::kMaxLineBytes);
  }
  if (!Have(size)) {
    Fail("the input ends inside a record (" + std::to_string(end_ - begin_) + " of its " +
         std::to_string(size) + " bytes)");
  }
  *record = std::string_view(buf_.data() + begin_, size);
  begin_ += size;
  return Status::kRecord;
}

Float32Parser::Float32Parser(const RowFormat& format)
    : layout_(format, "float32", "values", std::nullopt), allow_nan_(format.allow_nan) {}

void Float32Parser::Parse(std::string_view record, Row* row) {
  row->id.clear();
  if (record.size() < kHeadBytes) {
    throw RowError("not a float32 record: " + std::to_string(record.size()) + " bytes", 0);
  }
  const uint32_t head = LoadU32(record.data());
  if (head == kFloat32NullRow) throw RowError("a null row (its features are null)", 0);
  if (head == kFloat32GroupEnd) throw RowError("a group end record, not a row", 0);
  if (record.size() != kHeadBytes + PayloadBytes(head)) {
    throw RowError("not a float32 record: " + std::to_string(record.size()) +
                       " bytes, its head says " + std::to_string(kHeadBytes + PayloadBytes(head)),
                   0);
  }
  std::vector<float>& f = row->features;
  const char* p = record.data() + kHeadBytes;
  if (head & kFloat32SparseBit) {
    const size_t count = head & ~kFloat32SparseBit;
    const uint32_t size = LoadU32(p);
    if (size > kMaxSparseSize) {
      throw RowError("a sparse row of size " + std::to_string(size) + ", over 2^28", 0);
    }
    f.assign(size, 0.0f);
    const char* indices = p + 4;
    const char* values = indices + 4 * count;
    int64_t last = -1;
    for (size_t k = 0; k < count; ++k) {
      const uint32_t i = LoadU32(indices + 4 * k);
      if (i >= size) {
        throw RowError("sparse index " + std::to_string(i) + " out of range for size " +
                           std::to_string(size),
                       0);
      }
      if (static_cast<int64_t>(i) <= last) {
        throw RowError("sparse indices must be strictly ascending (" + std::to_string(i) +
                           " after " + std::to_string(last) + ")",
                       0);
      }
      last = i;
      f[i] = LoadF32(values + 4 * k);
    }
  } else {
    f.resize(head);
    if (head > 0) std::memcpy(f.data(), p, size_t{4} * head);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t k = 0; k < head; ++k) f[k] = LoadF32(p + 4 * k);
#endif
  }
  if (f.empty()) throw RowError("a row with no values", 0);
  if (!allow_nan_) CheckFloatsFinite(f, [](size_t) { return size_t{0}; });
  layout_.Split(static_cast<int64_t>(f.size()), -1, row);
}

std::string Float32Record(const std::vector<float>& values) {
  std::string record(kHeadBytes + 4 * values.size(), '\0');
  const uint32_t head = static_cast<uint32_t>(values.size());
  std::memcpy(record.data(), &head, 4);
  if (!values.empty()) std::memcpy(record.data() + kHeadBytes, values.data(), 4 * values.size());
  return record;
}

}  // namespace sparktorch
