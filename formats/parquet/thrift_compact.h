#ifndef SPARKTORCH_FORMATS_PARQUET_THRIFT_COMPACT_H_
#define SPARKTORCH_FORMATS_PARQUET_THRIFT_COMPACT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace sparktorch {
namespace parquet {

// A reader of Apache Thrift's compact protocol, the encoding of Parquet's footer and page
// headers: just enough to walk structs field by field and skip what the caller does not need.
// Reads from a byte range the caller owns; a read past its end, or a malformed value, throws
// InputError ("truncated Thrift data", without a file name: the caller adds it). Not
// thread-safe.
class ThriftReader {
 public:
  enum Type : uint8_t {
    kStop = 0, kTrue = 1, kFalse = 2, kByte = 3, kI16 = 4, kI32 = 5, kI64 = 6, kDouble = 7,
    kBinary = 8, kList = 9, kSet = 10, kMap = 11, kStruct = 12,
  };

  ThriftReader(const uint8_t* data, size_t size) : data_(data), end_(data + size), at_(data) {}

  // Starts reading a struct's fields (call once before its first field, EndStruct after kStop).
  void BeginStruct();
  void EndStruct();
  // The next field's id and type; kStop (id 0) at the struct's end. For a bool field the value
  // is in the type (kTrue or kFalse) and nothing is to be read.
  Type NextField(int16_t* id);

  int32_t ReadI32();
  int64_t ReadI64();
  std::string ReadBinary();
  // A list's element type and size; the elements follow.
  Type ReadListHeader(uint32_t* size);
  // Skips a value of `type` (a field of no interest).
  void Skip(Type type, int depth = 0);

  // Bytes read so far.
  size_t position() const { return static_cast<size_t>(at_ - data_); }

 private:
  uint64_t ReadVarint();
  uint8_t ReadByte();

  const uint8_t* data_;
  const uint8_t* end_;
  const uint8_t* at_;
  std::vector<int16_t> last_ids_;  // the previous field id of each open struct
  int16_t last_id_ = 0;
};

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_THRIFT_COMPACT_H_
