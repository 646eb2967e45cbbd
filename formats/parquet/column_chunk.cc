#include "formats/parquet/column_chunk.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "formats/error.h"
#include "formats/parquet/byte_stream_split.h"
#include "formats/parquet/decompress.h"
#include "formats/parquet/delta_binary_packed.h"
#include "formats/parquet/plain_values.h"
#include "formats/parquet/rle_hybrid.h"

namespace sparktorch {
namespace parquet {
namespace {

// A page of more values or bytes than this is not one a writer made (parquet-mr's pages hold
// at most 20,000 rows and about 1 MiB by default).
constexpr int32_t kMaxPageValues = 1 << 26;
constexpr uint64_t kMaxPageBytes = uint64_t{1} << 30;
// Values decoded at a time from DELTA_BINARY_PACKED and BYTE_STREAM_SPLIT data into PLAIN's
// layout, to be converted as PLAIN values are: a page's values never need a second copy.
constexpr size_t kBatchValues = 4096;

uint32_t LoadLe32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // Parquet is little-endian, as is every machine sparktorch builds for.
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
  DecodeRleHybrid(*p, *p + length, BitWidth(static_cast<uint32_t>(max_level)), n,
                  static_cast<uint32_t>(max_level), out);
  *p += length;
}

}  // namespace

// The decoder of one chunk's pages: its dictionary, and buffers reused from page to page.
class ChunkDecoder {
 public:
  ChunkDecoder(const ColumnChunk& meta, const LeafLayout& layout)
      : meta_(meta), layout_(layout) {}

  // Decodes a page, appending a data page's entries to *out.
  void Page(const PageHeader& h, const uint8_t* data, size_t size, ColumnValues* out);

 private:
  void Dictionary(const PageHeader& h, const uint8_t* data, size_t size);
  // Decodes `present` values at [p, end) in `encoding`, appending them to *out_.
  void Values(Encoding encoding, const uint8_t* p, const uint8_t* end, size_t present);
  void DictionaryValues(const uint8_t* p, const uint8_t* end, size_t present);
  void DeltaValues(const uint8_t* p, const uint8_t* end, size_t present);
  void SplitValues(const uint8_t* p, const uint8_t* end, size_t present);
  void RleBooleans(const uint8_t* p, const uint8_t* end, size_t present);
  ValueSink sink() const { return {&out_->numbers, &out_->integers, &out_->texts}; }

  const ColumnChunk& meta_;
  const LeafLayout layout_;
  ColumnValues* out_ = nullptr;
  bool has_dictionary_ = false;
  std::vector<float> dict_numbers_;
  std::vector<int32_t> dict_integers_;
  std::vector<std::string> dict_texts_;
  std::vector<uint8_t> page_;
  std::vector<uint32_t> indices_;
  // A batch of values in PLAIN's layout, decoded from another encoding.
  std::vector<int32_t> batch32_;
  std::vector<int64_t> batch64_;
  std::vector<uint8_t> batch_bytes_;
};

void ChunkDecoder::Dictionary(const PageHeader& h, const uint8_t* data, size_t size) {
  if (h.encoding != Encoding::kPlain && h.encoding != Encoding::kPlainDictionary) {
    throw InputError("a dictionary encoded as " + EncodingName(h.encoding));
  }
  Decompress(meta_.codec, data, size, static_cast<size_t>(h.uncompressed_page_size), &page_);
  dict_numbers_.clear();
  dict_integers_.clear();
  dict_texts_.clear();
  DecodePlain(page_.data(), page_.data() + page_.size(), layout_,
              static_cast<size_t>(h.num_values), {&dict_numbers_, &dict_integers_, &dict_texts_});
  has_dictionary_ = true;
}

void ChunkDecoder::Values(Encoding encoding, const uint8_t* p, const uint8_t* end, size_t present) {
  if (!ValueEncodingSupported(encoding, layout_.type)) {
    throw InputError("values " + EncodingRefusal(encoding, layout_.type));
  }
  switch (encoding) {
    case Encoding::kPlain:
      DecodePlain(p, end, layout_, present, sink());
      return;
    case Encoding::kPlainDictionary:
    case Encoding::kRleDictionary:
      DictionaryValues(p, end, present);
      return;
    case Encoding::kDeltaBinaryPacked:
      DeltaValues(p, end, present);
      return;
    case Encoding::kByteStreamSplit:
      SplitValues(p, end, present);
      return;
    default:  // kRle, which ValueEncodingSupported allows for booleans only
      RleBooleans(p, end, present);
      return;
  }
}

void ChunkDecoder::DeltaValues(const uint8_t* p, const uint8_t* end, size_t present) {
  if (present == 0) return;
  const bool wide = layout_.type == PhysicalType::kInt64;
  DeltaBinaryPackedDecoder decoder(p, end, wide ? 64 : 32);
  if (decoder.total() < present) {
    throw InputError("DELTA_BINARY_PACKED data of " + std::to_string(decoder.total()) +
                     " values in a page of " + std::to_string(present));
  }
  for (size_t done = 0; done < present;) {
    const size_t n = std::min(kBatchValues, present - done);
    const uint8_t* batch;
    if (wide) {
      batch64_.resize(kBatchValues);
      decoder.Next(n, batch64_.data());
      batch = reinterpret_cast<const uint8_t*>(batch64_.data());
    } else {
      batch32_.resize(kBatchValues);
      decoder.Next(n, batch32_.data());
      batch = reinterpret_cast<const uint8_t*>(batch32_.data());
    }
    DecodePlain(batch, batch + n * (wide ? 8 : 4), layout_, n, sink());
    done += n;
  }
}

void ChunkDecoder::SplitValues(const uint8_t* p, const uint8_t* end, size_t present) {
  const size_t width = PlainSize(layout_.type);
  ByteStreamSplit split(p, static_cast<size_t>(end - p), width);
  if (split.count() < present) {
    throw InputError("BYTE_STREAM_SPLIT data of " + std::to_string(split.count()) +
                     " values in a page of " + std::to_string(present));
  }
  batch_bytes_.resize(kBatchValues * width);
  for (size_t done = 0; done < present;) {
    const size_t n = std::min(kBatchValues, present - done);
    split.Gather(done, n, batch_bytes_.data());
    DecodePlain(batch_bytes_.data(), batch_bytes_.data() + n * width, layout_,
                n, sink());
    done += n;
  }
}

void ChunkDecoder::RleBooleans(const uint8_t* p, const uint8_t* end, size_t present) {
  // The RLE/bit-packed hybrid of 1-bit values after a 4-byte length, in v1 and v2 pages alike
  // (only DATA_PAGE_V2's levels go without the length).
  if (end - p < 4) throw InputError("truncated RLE booleans");
  const uint32_t length = LoadLe32(p);
  p += 4;
  if (static_cast<size_t>(end - p) < length) throw InputError("truncated RLE booleans");
  batch_bytes_.resize(present);
  DecodeRleHybrid(p, p + length, 1, present, 1, batch_bytes_.data());
  // PLAIN's layout for booleans: packed, the first value in the least significant bit.
  std::vector<uint8_t> packed((present + 7) / 8, 0);
  for (size_t i = 0; i < present; ++i) {
    packed[i / 8] = static_cast<uint8_t>(packed[i / 8] | (batch_bytes_[i] << (i % 8)));
  }
  DecodePlain(packed.data(), packed.data() + packed.size(), layout_, present,
              sink());
}

void ChunkDecoder::DictionaryValues(const uint8_t* p, const uint8_t* end, size_t present) {
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
  DecodeRleHybrid(p, end, bit_width, present, static_cast<uint32_t>(dict_size - 1),
                  indices_.data());
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

void ChunkDecoder::Page(const PageHeader& h, const uint8_t* data, size_t size,
                        ColumnValues* out) {
  out_ = out;
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
    const size_t rep_bytes = static_cast<size_t>(h.repetition_levels_byte_length);
    const size_t levels = rep_bytes + static_cast<size_t>(h.definition_levels_byte_length);
    if (levels > size) throw InputError("a DATA_PAGE_V2 whose levels exceed the page");
    // Each section where its length says, whether or not the column has such levels (writers
    // have written repetition levels for a column without lists).
    const uint8_t* q = data;
    DecodeLevels(&q, data + rep_bytes, false, rep_bytes, Encoding::kRle, layout_.max_rep, n, rep);
    q = data + rep_bytes;
    DecodeLevels(&q, data + levels, false, levels - rep_bytes, Encoding::kRle, layout_.max_def, n,
                 def);
    size_t values_size = static_cast<size_t>(h.uncompressed_page_size) - std::min(
        levels, static_cast<size_t>(h.uncompressed_page_size));
    if (size == levels) {
      page_.clear();  // no values (all null), which no codec was given to compress
    } else if (h.is_compressed && meta_.codec != Codec::kUncompressed) {
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

bool ValueEncodingSupported(Encoding encoding, PhysicalType type) {
  const bool integer = type == PhysicalType::kInt32 || type == PhysicalType::kInt64;
  switch (encoding) {
    case Encoding::kPlain:
    case Encoding::kPlainDictionary:
    case Encoding::kRleDictionary:
      return true;
    case Encoding::kDeltaBinaryPacked:
      return integer;
    case Encoding::kByteStreamSplit:
      return integer || type == PhysicalType::kFloat || type == PhysicalType::kDouble;
    case Encoding::kRle:
      return type == PhysicalType::kBoolean;
    default:
      return false;
  }
}

std::string EncodingRefusal(Encoding encoding, PhysicalType type) {
  return "encoded as " + EncodingName(encoding) + ", which sparktorch does not read for " +
         TypeName(type) +
         " values (it reads PLAIN and dictionary encodings, DELTA_BINARY_PACKED for INT32 and "
         "INT64, BYTE_STREAM_SPLIT for INT32, INT64, FLOAT and DOUBLE, and RLE for BOOLEAN)";
}

ColumnChunkPages::ColumnChunkPages(ChunkBytes* bytes, const ColumnChunk& meta,
                                   const LeafLayout& layout)
    : bytes_(bytes), meta_(meta), decoder_(std::make_unique<ChunkDecoder>(meta, layout)) {}

ColumnChunkPages::~ColumnChunkPages() = default;

bool ColumnChunkPages::Next(ColumnValues* out) {
  const size_t size = bytes_->size();
  while (decoded_ < meta_.num_values) {
    if (at_ >= size) throw InputError("the column chunk ends before its values");
    // A page header is a few dozen bytes (statistics can make it more): parsed from the next
    // KiB, or 16 times more of the chunk while that does not hold it.
    size_t header_size = 0;
    PageHeader h;
    for (size_t window = std::min<size_t>(size - at_, 1024);;
         window = std::min(size - at_, 16 * window)) {
      try {
        h = ParsePageHeader(bytes_->Read(at_, window), window, &header_size);
        break;
      } catch (const InputError&) {
        if (window == size - at_) throw;
      }
    }
    at_ += header_size;
    if (static_cast<size_t>(h.compressed_page_size) > size - at_) {
      throw InputError("a page runs past its column chunk");
    }
    // Sizes a corrupt header could make huge, bounded by what a real page can hold: values at
    // most the chunk's that are left (and kMaxPageValues), a page at most what its bytes can
    // decompress to (GZIP's best ratio is about 1032:1).
    const bool data = h.type == PageType::kData || h.type == PageType::kDataV2;
    if (data && (h.num_values > meta_.num_values - decoded_ || h.num_values > kMaxPageValues)) {
      throw InputError("a page with more values (" + std::to_string(h.num_values) +
                       ") than its column chunk has left");
    }
    if (static_cast<uint64_t>(h.uncompressed_page_size) >
        std::min<uint64_t>(kMaxPageBytes,
                           1100 * static_cast<uint64_t>(h.compressed_page_size) + 65536)) {
      throw InputError("a page whose size (" + std::to_string(h.uncompressed_page_size) +
                       " bytes) its compressed bytes cannot hold");
    }
    const size_t page_size = static_cast<size_t>(h.compressed_page_size);
    decoder_->Page(h, bytes_->Read(at_, page_size), page_size, out);
    at_ += page_size;
    if (data) {
      decoded_ += h.num_values;
      return true;
    }
  }
  return false;
}

void DecodeColumnChunk(ChunkBytes& bytes, const ColumnChunk& meta, const LeafLayout& layout,
                       ColumnValues* out) {
  out->def.clear();
  out->rep.clear();
  out->numbers.clear();
  out->integers.clear();
  out->texts.clear();
  out->entries = 0;
  // The values the chunk says it holds, reserved rather than grown by doubling (which held up
  // to twice them, and three times while a vector moved). A corrupt count reserves no more
  // than 64 values a byte of the chunk: address space, not memory, until values fill it.
  const size_t expected = static_cast<size_t>(std::max<int64_t>(
      0, std::min<int64_t>(meta.num_values,
                           64 * static_cast<int64_t>(std::min<size_t>(bytes.size(),
                                                                      size_t{1} << 30)))));
  if (layout.max_def > 0) out->def.reserve(expected);
  if (layout.max_rep > 0) out->rep.reserve(expected);
  if (layout.kind == ValueKind::kNumber) out->numbers.reserve(expected);
  ColumnChunkPages pages(&bytes, meta, layout);
  while (pages.Next(out)) {
  }
  if (out->entries != meta.num_values) throw InputError("more values than the column chunk says");
}

void DecodeColumnChunk(const uint8_t* chunk, size_t size, const ColumnChunk& meta,
                       const LeafLayout& layout, ColumnValues* out) {
  class InMemory : public ChunkBytes {
   public:
    InMemory(const uint8_t* chunk, size_t size) : chunk_(chunk), size_(size) {}
    size_t size() const override { return size_; }
    const uint8_t* Read(size_t offset, size_t) override { return chunk_ + offset; }

   private:
    const uint8_t* chunk_;
    size_t size_;
  };
  InMemory bytes(chunk, size);
  DecodeColumnChunk(bytes, meta, layout, out);
}

}  // namespace parquet
}  // namespace sparktorch
