#include "formats/parquet/column_chunk.h"

#include <algorithm>
#include <cstring>

#include "formats/error.h"
#include "formats/parquet/decompress.h"

namespace sparktorch {
namespace parquet {
namespace {

// A page of more values or bytes than this is not one a writer made (parquet-mr's pages hold
// at most 20,000 rows and about 1 MiB by default).
constexpr int32_t kMaxPageValues = 1 << 26;
constexpr uint64_t kMaxPageBytes = uint64_t{1} << 30;

int BitWidth(uint32_t max_value) {
  int bits = 0;
  while (max_value > 0) {
    ++bits;
    max_value >>= 1;
  }
  return bits;
}

uint32_t LoadLe32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // Parquet is little-endian, as is every machine sparktorch builds for.
}

// Decodes `n` values of the RLE/bit-packed hybrid encoding (the Parquet specification's
// Encodings.md) at [p, end) into out[0..n). Throws InputError when the data runs out first or
// a value exceeds `max_value`.
template <typename Out>
void DecodeHybrid(const uint8_t* p, const uint8_t* end, int bit_width, size_t n, uint32_t max_value,
                  Out* out) {
  const uint64_t mask = bit_width == 32 ? 0xffffffffu : (uint64_t{1} << bit_width) - 1;
  const size_t value_bytes = static_cast<size_t>(bit_width + 7) / 8;
  size_t done = 0;
  while (done < n) {
    uint64_t header = 0;
    for (int shift = 0;; shift += 7) {
      if (p >= end || shift > 35) throw InputError("truncated RLE/bit-packed run");
      header |= static_cast<uint64_t>(*p & 0x7f) << shift;
      if ((*p++ & 0x80) == 0) break;
    }
    if (header & 1) {  // bit-packed: (header >> 1) groups of 8 values, least significant bit first
      size_t count = (header >> 1) * 8;
      size_t bytes = (header >> 1) * static_cast<size_t>(bit_width);
      if (static_cast<size_t>(end - p) < bytes) {
        // The last group may be cut short of its padding; the values needed must be there.
        bytes = static_cast<size_t>(end - p);
        count = std::min(count, bytes * 8 / std::max(bit_width, 1));
        if (done + count < n) throw InputError("truncated bit-packed run");
      }
      size_t take = std::min(count, n - done);
      uint32_t largest = 0;
      for (size_t i = 0; i < take; ++i) {
        size_t bit = i * static_cast<size_t>(bit_width);
        uint64_t word = 0;
        if (bytes - bit / 8 >= 8) {
          std::memcpy(&word, p + bit / 8, 8);  // a value of up to 32 bits, shifted by up to 7
        } else {
          std::memcpy(&word, p + bit / 8, bytes - bit / 8);
        }
        uint32_t v = static_cast<uint32_t>((word >> (bit % 8)) & mask);
        largest = std::max(largest, v);
        out[done + i] = static_cast<Out>(v);
      }
      if (largest > max_value) throw InputError("a level or dictionary index out of range");
      done += take;
      p += bytes;
    } else {  // run: (header >> 1) repeats of one value
      size_t count = header >> 1;
      if (static_cast<size_t>(end - p) < value_bytes) throw InputError("truncated RLE run");
      uint32_t v = 0;
      for (size_t i = 0; i < value_bytes; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
      p += value_bytes;
      if (v > max_value) throw InputError("a level or dictionary index out of range");
      size_t take = std::min(count, n - done);
      std::fill(out + done, out + done + take, static_cast<Out>(v));
      done += take;
    }
  }
}

// Decodes one page's levels (v1: RLE with a 4-byte length first) at *p; moves *p past them.
void DecodeLevels(const uint8_t** p, const uint8_t* end, bool length_prefixed, size_t length_v2,
                  Encoding encoding, int max_level, size_t n, uint8_t* out) {
  if (max_level == 0) return;
  if (encoding != Encoding::kRle) {
    throw InputError("levels encoded as " + EncodingName(encoding) + ", which sparktorch does not read");
  }
  size_t length = length_v2;
  if (length_prefixed) {
    if (end - *p < 4) throw InputError("truncated levels");
    length = LoadLe32(*p);
    *p += 4;
  }
  if (static_cast<size_t>(end - *p) < length) throw InputError("truncated levels");
  DecodeHybrid(*p, *p + length, BitWidth(static_cast<uint32_t>(max_level)), n,
               static_cast<uint32_t>(max_level), out);
  *p += length;
}

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

// Where decoded values go, by ValueKind.
struct ValueSink {
  std::vector<float>* numbers;
  std::vector<int32_t>* integers;
  std::vector<std::string>* texts;
};

// Appends `n` PLAIN values at [p, end) of `type` to the sink of `kind`.
void DecodePlain(const uint8_t* p, const uint8_t* end, PhysicalType type, ValueKind kind, size_t n,
                 const ValueSink& sink) {
  if (n == 0) return;
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
      int64_t v;
      if (width == 4) {
        int32_t v32;
        std::memcpy(&v32, p, 4);
        v = v32;
      } else {
        std::memcpy(&v, p, 8);
      }
      texts->push_back(std::to_string(v));
    }
    return;
  }
  size_t at = numbers->size();
  numbers->resize(at + n);
  float* out = numbers->data() + at;
  for (size_t i = 0; i < n; ++i, p += width) {
    switch (type) {
      case PhysicalType::kInt32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        out[i] = static_cast<float>(v);
        break;
      }
      case PhysicalType::kInt64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        out[i] = static_cast<float>(v);
        break;
      }
      case PhysicalType::kFloat:
        std::memcpy(&out[i], p, 4);
        break;
      default: {
        double v;
        std::memcpy(&v, p, 8);
        out[i] = static_cast<float>(v);
        break;
      }
    }
  }
}

// The decoder of one chunk's pages: its dictionary, and buffers reused from page to page.
class ChunkDecoder {
 public:
  ChunkDecoder(const ColumnChunk& meta, const LeafLayout& layout, ColumnValues* out)
      : meta_(meta), layout_(layout), out_(out) {}

  void Page(const PageHeader& h, const uint8_t* data, size_t size);

 private:
  void Dictionary(const PageHeader& h, const uint8_t* data, size_t size);
  // Decodes `present` values at [p, end) in `encoding`.
  void Values(Encoding encoding, const uint8_t* p, const uint8_t* end, size_t present);

  const ColumnChunk& meta_;
  const LeafLayout& layout_;
  ColumnValues* out_;
  bool has_dictionary_ = false;
  std::vector<float> dict_numbers_;
  std::vector<int32_t> dict_integers_;
  std::vector<std::string> dict_texts_;
  std::vector<uint8_t> page_;
  std::vector<uint32_t> indices_;
};

void ChunkDecoder::Dictionary(const PageHeader& h, const uint8_t* data, size_t size) {
  if (h.encoding != Encoding::kPlain && h.encoding != Encoding::kPlainDictionary) {
    throw InputError("a dictionary encoded as " + EncodingName(h.encoding));
  }
  Decompress(meta_.codec, data, size, static_cast<size_t>(h.uncompressed_page_size), &page_);
  dict_numbers_.clear();
  dict_integers_.clear();
  dict_texts_.clear();
  DecodePlain(page_.data(), page_.data() + page_.size(), layout_.type, layout_.kind,
              static_cast<size_t>(h.num_values), {&dict_numbers_, &dict_integers_, &dict_texts_});
  has_dictionary_ = true;
}

void ChunkDecoder::Values(Encoding encoding, const uint8_t* p, const uint8_t* end, size_t present) {
  if (encoding == Encoding::kPlain) {
    DecodePlain(p, end, layout_.type, layout_.kind, present,
                {&out_->numbers, &out_->integers, &out_->texts});
    return;
  }
  if (encoding != Encoding::kPlainDictionary && encoding != Encoding::kRleDictionary) {
    throw InputError("values encoded as " + EncodingName(encoding) +
                     ", which sparktorch does not read (it reads PLAIN and dictionary encodings, "
                     "as Spark writes them)");
  }
  if (!has_dictionary_) throw InputError("dictionary-encoded values without a dictionary page");
  if (present == 0) return;
  if (p >= end) throw InputError("truncated dictionary indices");
  int bit_width = *p++;
  if (bit_width > 32) throw InputError("dictionary indices wider than 32 bits");
  size_t dict_size = layout_.kind == ValueKind::kNumber    ? dict_numbers_.size()
                     : layout_.kind == ValueKind::kInteger ? dict_integers_.size()
                                                           : dict_texts_.size();
  if (dict_size == 0) throw InputError("dictionary indices into an empty dictionary");
  indices_.resize(present);
  DecodeHybrid(p, end, bit_width, present, static_cast<uint32_t>(dict_size - 1), indices_.data());
  if (layout_.kind == ValueKind::kNumber) {
    size_t at = out_->numbers.size();
    out_->numbers.resize(at + present);
    float* dst = out_->numbers.data() + at;
    const float* dict = dict_numbers_.data();
    for (size_t i = 0; i < present; ++i) dst[i] = dict[indices_[i]];
  } else if (layout_.kind == ValueKind::kInteger) {
    for (size_t i = 0; i < present; ++i) out_->integers.push_back(dict_integers_[indices_[i]]);
  } else {
    for (size_t i = 0; i < present; ++i) out_->texts.push_back(dict_texts_[indices_[i]]);
  }
}

void ChunkDecoder::Page(const PageHeader& h, const uint8_t* data, size_t size) {
  if (h.type == PageType::kDictionary) {
    Dictionary(h, data, size);
    return;
  }
  if (h.type != PageType::kData && h.type != PageType::kDataV2) return;  // an index page
  const size_t n = static_cast<size_t>(h.num_values);
  const size_t at = out_->def.size();
  if (layout_.max_def > 0) out_->def.resize(at + n);
  if (layout_.max_rep > 0) out_->rep.resize(at + n);
  uint8_t* def = layout_.max_def > 0 ? out_->def.data() + at : nullptr;
  uint8_t* rep = layout_.max_rep > 0 ? out_->rep.data() + at : nullptr;
  const uint8_t* p;
  const uint8_t* end;
  if (h.type == PageType::kData) {
    Decompress(meta_.codec, data, size, static_cast<size_t>(h.uncompressed_page_size), &page_);
    p = page_.data();
    end = p + page_.size();
    DecodeLevels(&p, end, true, 0, h.repetition_level_encoding, layout_.max_rep, n, rep);
    DecodeLevels(&p, end, true, 0, h.definition_level_encoding, layout_.max_def, n, def);
  } else {
    size_t levels = static_cast<size_t>(h.repetition_levels_byte_length) +
                    static_cast<size_t>(h.definition_levels_byte_length);
    if (levels > size) throw InputError("a DATA_PAGE_V2 whose levels exceed the page");
    const uint8_t* q = data;
    DecodeLevels(&q, data + levels, false, static_cast<size_t>(h.repetition_levels_byte_length),
                 Encoding::kRle, layout_.max_rep, n, rep);
    DecodeLevels(&q, data + levels, false, static_cast<size_t>(h.definition_levels_byte_length),
                 Encoding::kRle, layout_.max_def, n, def);
    size_t values_size = static_cast<size_t>(h.uncompressed_page_size) - std::min(
        levels, static_cast<size_t>(h.uncompressed_page_size));
    if (h.is_compressed && meta_.codec != Codec::kUncompressed) {
      Decompress(meta_.codec, data + levels, size - levels, values_size, &page_);
    } else {
      page_.assign(data + levels, data + size);
    }
    p = page_.data();
    end = p + page_.size();
  }
  size_t present = n;
  if (def != nullptr) {
    const uint8_t full = static_cast<uint8_t>(layout_.max_def);
    present = static_cast<size_t>(std::count(def, def + n, full));
  }
  Values(h.encoding, p, end, present);
  out_->entries += static_cast<int64_t>(n);
}

}  // namespace

void DecodeColumnChunk(const uint8_t* chunk, size_t size, const ColumnChunk& meta,
                       const LeafLayout& layout, ColumnValues* out) {
  out->def.clear();
  out->rep.clear();
  out->numbers.clear();
  out->integers.clear();
  out->texts.clear();
  out->entries = 0;
  ChunkDecoder decoder(meta, layout, out);
  size_t at = 0;
  while (out->entries < meta.num_values) {
    if (at >= size) throw InputError("the column chunk ends before its values");
    size_t header_size = 0;
    PageHeader h = ParsePageHeader(chunk + at, size - at, &header_size);
    at += header_size;
    if (static_cast<size_t>(h.compressed_page_size) > size - at) {
      throw InputError("a page runs past its column chunk");
    }
    // Sizes a corrupt header could make huge, bounded by what a real page can hold: values at
    // most the chunk's that are left (and kMaxPageValues), a page at most what its bytes can
    // decompress to (GZIP's best ratio is about 1032:1).
    if ((h.type == PageType::kData || h.type == PageType::kDataV2) &&
        (h.num_values > meta.num_values - out->entries || h.num_values > kMaxPageValues)) {
      throw InputError("a page with more values (" + std::to_string(h.num_values) +
                       ") than its column chunk has left");
    }
    if (static_cast<uint64_t>(h.uncompressed_page_size) >
        std::min<uint64_t>(kMaxPageBytes, 1100 * static_cast<uint64_t>(h.compressed_page_size) + 65536)) {
      throw InputError("a page whose size (" + std::to_string(h.uncompressed_page_size) +
                       " bytes) its compressed bytes cannot hold");
    }
    decoder.Page(h, chunk + at, static_cast<size_t>(h.compressed_page_size));
    at += static_cast<size_t>(h.compressed_page_size);
  }
  if (out->entries != meta.num_values) throw InputError("more values than the column chunk says");
}

}  // namespace parquet
}  // namespace sparktorch
