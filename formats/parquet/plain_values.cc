#include "formats/parquet/plain_values.h"

#include <cstring>

#include "formats/error.h"

namespace sparktorch {
namespace parquet {
namespace {

uint32_t LoadLe32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // Parquet is little-endian, as is every machine sparktorch builds for.
}

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// out[i] = the i-th little-endian T at p, rounded to float32.
template <typename T>
void Convert(const uint8_t* p, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(Load<T>(p + i * sizeof(T)));
}

}  // namespace

size_t PlainSize(PhysicalType type) {
  switch (type) {
    case PhysicalType::kInt32:
    case PhysicalType::kFloat:
      return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble:
      return 8;
    default:
      return 0;
  }
}

void DecodePlain(const uint8_t* p, const uint8_t* end, const LeafLayout& layout, size_t n,
                 const ValueSink& sink) {
  if (n == 0) return;
  const PhysicalType type = layout.type;
  const ValueKind kind = layout.kind;
  std::vector<float>* numbers = sink.numbers;
  std::vector<std::string>* texts = sink.texts;
  if (kind == ValueKind::kInteger) {
    if (type != PhysicalType::kInt32) throw InputError("other values where 32-bit integers are needed");
    if (static_cast<size_t>(end - p) / 4 < n) throw InputError("truncated PLAIN values");
    size_t at = sink.integers->size();
    sink.integers->resize(at + n);
    std::memcpy(sink.integers->data() + at, p, 4 * n);
    return;
  }
  if (type == PhysicalType::kByteArray) {
    if (kind != ValueKind::kText) throw InputError("strings where numbers are needed");
    for (size_t i = 0; i < n; ++i) {
      if (end - p < 4) throw InputError("truncated PLAIN strings");
      uint32_t length = LoadLe32(p);
      p += 4;
      if (static_cast<size_t>(end - p) < length) throw InputError("truncated PLAIN strings");
      texts->emplace_back(reinterpret_cast<const char*>(p), length);
      p += length;
    }
    return;
  }
  if (type == PhysicalType::kBoolean) {
    if (static_cast<size_t>(end - p) < (n + 7) / 8) throw InputError("truncated PLAIN booleans");
    for (size_t i = 0; i < n; ++i) {
      int bit = (p[i / 8] >> (i % 8)) & 1;
      if (kind == ValueKind::kText) {
        texts->push_back(bit ? "true" : "false");
      } else {
        numbers->push_back(static_cast<float>(bit));
      }
    }
    return;
  }
  size_t width = PlainSize(type);
  if (width == 0) throw InputError("values of a type sparktorch does not read (INT96 or fixed-length)");
  if (static_cast<size_t>(end - p) / width < n) throw InputError("truncated PLAIN values");
  if (kind == ValueKind::kText) {
    if (type != PhysicalType::kInt32 && type != PhysicalType::kInt64) {
      throw InputError("floating-point values where strings or integers are needed");
    }
    for (size_t i = 0; i < n; ++i, p += width) {
      if (width == 4) {
        texts->push_back(layout.is_unsigned ? std::to_string(Load<uint32_t>(p))
                                            : std::to_string(Load<int32_t>(p)));
      } else {
        texts->push_back(layout.is_unsigned ? std::to_string(Load<uint64_t>(p))
                                            : std::to_string(Load<int64_t>(p)));
      }
    }
    return;
  }
  size_t at = numbers->size();
  numbers->resize(at + n);
  float* out = numbers->data() + at;
  switch (type) {
    case PhysicalType::kInt32:
      if (layout.is_unsigned) {
        Convert<uint32_t>(p, n, out);
      } else {
        Convert<int32_t>(p, n, out);
      }
      return;
    case PhysicalType::kInt64:
      if (layout.is_unsigned) {
        Convert<uint64_t>(p, n, out);
      } else {
        Convert<int64_t>(p, n, out);
      }
      return;
    case PhysicalType::kFloat:
      std::memcpy(out, p, 4 * n);
      return;
    default:
      Convert<double>(p, n, out);
      return;
  }
}

}  // namespace parquet
}  // namespace sparktorch
