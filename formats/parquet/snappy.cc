#include "formats/parquet/snappy.h"

#include <cstring>

#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

[[noreturn]] void Corrupt(const char* what) {
  throw InputError(std::string("corrupt Snappy data: ") + what);
}

}  // namespace

void SnappyDecompress(const uint8_t* data, size_t size, size_t expected_size,
                      std::vector<uint8_t>* out) {
  const uint8_t* in = data;
  const uint8_t* end = data + size;
  uint64_t length = 0;
  for (int shift = 0;; shift += 7) {
    if (in >= end || shift > 28) Corrupt("bad length");
    length |= static_cast<uint64_t>(*in & 0x7f) << shift;
    if ((*in++ & 0x80) == 0) break;
  }
  if (length != expected_size) Corrupt("length differs from the page header's");
  out->resize(length);
  uint8_t* dst = out->data();
  size_t pos = 0;
  while (in < end) {
    uint8_t tag = *in++;
    size_t len = 0, offset = 0;
    switch (tag & 3) {
      case 0: {  // literal
        len = (tag >> 2) + 1;
        if (len > 60) {
          size_t bytes = len - 60;
          if (static_cast<size_t>(end - in) < bytes) Corrupt("truncated literal length");
          len = 0;
          for (size_t i = 0; i < bytes; ++i) len |= static_cast<size_t>(in[i]) << (8 * i);
          len += 1;
          in += bytes;
        }
        if (static_cast<size_t>(end - in) < len || length - pos < len) Corrupt("literal overflows");
        std::memcpy(dst + pos, in, len);
        in += len;
        pos += len;
        continue;
      }
      case 1:
        if (in >= end) Corrupt("truncated copy");
        len = 4 + ((tag >> 2) & 7);
        offset = (static_cast<size_t>(tag >> 5) << 8) | *in++;
        break;
      case 2:
        if (end - in < 2) Corrupt("truncated copy");
        len = (tag >> 2) + 1;
        offset = in[0] | (static_cast<size_t>(in[1]) << 8);
        in += 2;
        break;
      default:
        if (end - in < 4) Corrupt("truncated copy");
        len = (tag >> 2) + 1;
        offset = in[0] | (static_cast<size_t>(in[1]) << 8) | (static_cast<size_t>(in[2]) << 16) |
                 (static_cast<size_t>(in[3]) << 24);
        in += 4;
        break;
    }
    if (offset == 0 || offset > pos || length - pos < len) Corrupt("copy out of range");
    const uint8_t* from = dst + pos - offset;
    if (offset >= len) {
      std::memcpy(dst + pos, from, len);
    } else {
      for (size_t i = 0; i < len; ++i) dst[pos + i] = from[i];  // overlapping: a repeat
    }
    pos += len;
  }
  if (pos != length) Corrupt("shorter than its length");
}

}  // namespace parquet
}  // namespace sparktorch
