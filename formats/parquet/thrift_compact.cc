#include "formats/parquet/thrift_compact.h"


#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

// Nesting deeper than this is not Parquet metadata but a corrupt or hostile file.
constexpr int kMaxDepth = 64;

}  // namespace

uint8_t ThriftReader::ReadByte() {
  if (at_ >= end_) throw InputError("truncated Thrift data");
  return *at_++;
}

uint64_t ThriftReader::ReadVarint() {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = ReadByte();
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return value;
  }
  throw InputError("malformed Thrift varint");
}

int32_t ThriftReader::ReadI32() {
  uint64_t v = ReadVarint();
  return static_cast<int32_t>((v >> 1) ^ -(v & 1));  // zigzag
}

int64_t ThriftReader::ReadI64() {
  uint64_t v = ReadVarint();
  return static_cast<int64_t>((v >> 1) ^ -(v & 1));
}

std::string ThriftReader::ReadBinary() {
  uint64_t size = ReadVarint();
  if (size > static_cast<uint64_t>(end_ - at_)) throw InputError("truncated Thrift data");
  std::string out(reinterpret_cast<const char*>(at_), size);
  at_ += size;
  return out;
}

void ThriftReader::BeginStruct() {
  if (last_ids_.size() >= kMaxDepth) throw InputError("Thrift structs nested too deep");
  last_ids_.push_back(last_id_);
  last_id_ = 0;
}

void ThriftReader::EndStruct() {
  last_id_ = last_ids_.back();
  last_ids_.pop_back();
}

ThriftReader::Type ThriftReader::NextField(int16_t* id) {
  uint8_t header = ReadByte();
  Type type = static_cast<Type>(header & 0x0f);
  if (type == kStop) {
    *id = 0;
    return kStop;
  }
  int delta = header >> 4;
  last_id_ = delta != 0 ? static_cast<int16_t>(last_id_ + delta) : static_cast<int16_t>(ReadI32());
  *id = last_id_;
  return type;
}

ThriftReader::Type ThriftReader::ReadListHeader(uint32_t* size) {
  uint8_t header = ReadByte();
  uint64_t n = header >> 4;
  if (n == 15) n = ReadVarint();
  // Every element takes at least one byte: a larger count is a corrupt header.
  if (n > static_cast<uint64_t>(end_ - at_)) throw InputError("truncated Thrift data");
  *size = static_cast<uint32_t>(n);
  return static_cast<Type>(header & 0x0f);
}

void ThriftReader::Skip(Type type, int depth) {
  if (depth > kMaxDepth) throw InputError("Thrift values nested too deep");
  switch (type) {
    case kTrue:
    case kFalse:
      return;  // a field's value is in its type; a list's bools take a byte (kByte below)
    case kByte:
      ReadByte();
      return;
    case kI16:
    case kI32:
    case kI64:
      ReadVarint();
      return;
    case kDouble:
      if (end_ - at_ < 8) throw InputError("truncated Thrift data");
      at_ += 8;
      return;
    case kBinary: {
      uint64_t size = ReadVarint();
      if (size > static_cast<uint64_t>(end_ - at_)) throw InputError("truncated Thrift data");
      at_ += size;
      return;
    }
    case kList:
    case kSet: {
      uint32_t n = 0;
      Type element = ReadListHeader(&n);
      if (element == kTrue || element == kFalse) element = kByte;
      for (uint32_t i = 0; i < n; ++i) Skip(element, depth + 1);
      return;
    }
    case kMap: {
      uint64_t n = ReadVarint();
      if (n == 0) return;
      uint8_t types = ReadByte();
      Type key = static_cast<Type>(types >> 4), value = static_cast<Type>(types & 0x0f);
      if (key == kTrue || key == kFalse) key = kByte;
      if (value == kTrue || value == kFalse) value = kByte;
      for (uint64_t i = 0; i < n; ++i) {
        Skip(key, depth + 1);
        Skip(value, depth + 1);
      }
      return;
    }
    case kStruct: {
      BeginStruct();
      int16_t id = 0;
      for (Type t = NextField(&id); t != kStop; t = NextField(&id)) Skip(t, depth + 1);
      EndStruct();
      return;
    }
    case kStop:
      break;
  }
  throw InputError("unknown Thrift type " + std::to_string(static_cast<int>(type)));
}

}  // namespace parquet
}  // namespace sparktorch
