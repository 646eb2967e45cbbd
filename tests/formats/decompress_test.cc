#include "formats/parquet/decompress.h"

#include <brotli/encode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/error.h"
#include "formats/parquet/parquet_rows.h"
#include "formats/row.h"
#include "formats/row_format.h"

namespace sparktorch {
namespace parquet {
namespace {

using Bytes = std::vector<uint8_t>;

// 10,000 bytes with repeats (so every codec has back-references to make) and every byte value.
Bytes Page() {
  Bytes page(10000);
  for (size_t i = 0; i < page.size(); ++i) page[i] = static_cast<uint8_t>((i % 700) * 7 + i / 2500);
  return page;
}

// The libraries' own compressors write the pages the tests read.

Bytes SnappyCompress(const Bytes& in) {
  size_t size = snappy_max_compressed_length(in.size());
  std::vector<char> out(size);
  EXPECT_EQ(snappy_compress(reinterpret_cast<const char*>(in.data()), in.size(), out.data(), &size),
            SNAPPY_OK);
  return Bytes(out.begin(), out.begin() + size);
}

Bytes GzipCompress(const Bytes& in) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&z, in.size()));
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

Bytes ZstdCompress(const Bytes& in) {
  Bytes out(ZSTD_compressBound(in.size()));
  const size_t size = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  EXPECT_FALSE(ZSTD_isError(size));
  out.resize(size);
  return out;
}

Bytes Lz4Block(const Bytes& in) {
  Bytes out(LZ4_compressBound(static_cast<int>(in.size())));
  const int size = LZ4_compress_default(reinterpret_cast<const char*>(in.data()),
                                        reinterpret_cast<char*>(out.data()),
                                        static_cast<int>(in.size()), static_cast<int>(out.size()));
  EXPECT_GT(size, 0);
  out.resize(size);
  return out;
}

void AppendBigEndian32(uint32_t v, Bytes* out) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<uint8_t>(v >> shift));
}

// Hadoop's Lz4Codec framing: each part as [decompressed size][compressed size][raw block].
Bytes HadoopLz4(const std::vector<Bytes>& parts) {
  Bytes out;
  for (const Bytes& part : parts) {
    const Bytes block = Lz4Block(part);
    AppendBigEndian32(static_cast<uint32_t>(part.size()), &out);
    AppendBigEndian32(static_cast<uint32_t>(block.size()), &out);
    out.insert(out.end(), block.begin(), block.end());
  }
  return out;
}

Bytes BrotliCompress(const Bytes& in) {
  size_t size = BrotliEncoderMaxCompressedSize(in.size());
  Bytes out(size);
  EXPECT_TRUE(BrotliEncoderCompress(BROTLI_DEFAULT_QUALITY, BROTLI_DEFAULT_WINDOW,
                                    BROTLI_DEFAULT_MODE, in.size(), in.data(), &size, out.data()));
  out.resize(size);
  return out;
}

Bytes Compress(Codec codec, const Bytes& in) {
  switch (codec) {
    case Codec::kSnappy: return SnappyCompress(in);
    case Codec::kGzip: return GzipCompress(in);
    case Codec::kZstd: return ZstdCompress(in);
    case Codec::kLz4Raw: return Lz4Block(in);
    case Codec::kLz4: return HadoopLz4({in});
    case Codec::kBrotli: return BrotliCompress(in);
    default: return in;
  }
}

const Codec kCodecs[] = {Codec::kUncompressed, Codec::kSnappy, Codec::kGzip, Codec::kZstd,
                         Codec::kLz4Raw,       Codec::kLz4,    Codec::kBrotli};

Bytes Decompressed(Codec codec, const Bytes& page, size_t uncompressed_size) {
  Bytes out = {1, 2, 3};  // replaced, not appended to
  Decompress(codec, page.data(), page.size(), uncompressed_size, &out);
  return out;
}

TEST(Decompress, ReadsWhatEachCodecsLibraryWrote) {
  const Bytes page = Page();
  for (Codec codec : kCodecs) {
    const Bytes compressed = Compress(codec, page);
    EXPECT_EQ(Decompressed(codec, compressed, page.size()), page) << CodecName(codec);
    if (codec != Codec::kUncompressed) {
      EXPECT_LT(compressed.size(), page.size() / 2) << CodecName(codec);
    }
  }
}

TEST(Decompress, ReadsConcatenatedGzipMembers) {
  // As parquet-testing's concatenated_gzip_members.parquet holds them: one page, two members.
  const Bytes page = Page();
  const Bytes first(page.begin(), page.begin() + page.size() / 3);
  const Bytes second(page.begin() + page.size() / 3, page.end());
  Bytes both = GzipCompress(first);
  const Bytes more = GzipCompress(second);
  both.insert(both.end(), more.begin(), more.end());
  EXPECT_EQ(Decompressed(Codec::kGzip, both, page.size()), page);
  EXPECT_THROW(Decompressed(Codec::kGzip, both, page.size() + 1), InputError);
  Bytes garbled = both;
  garbled.insert(garbled.end() - more.size(), 0xff);  // a byte that starts no member
  EXPECT_THROW(Decompressed(Codec::kGzip, garbled, page.size()), InputError);
}

TEST(Decompress, ReadsEmptyPages) {
  for (Codec codec : kCodecs) {
    EXPECT_EQ(Decompressed(codec, Compress(codec, {}), 0), Bytes()) << CodecName(codec);
  }
}

TEST(Decompress, RefusesAPageOfAnotherSizeThanItsHeaderSays) {
  const Bytes page = Page();
  for (Codec codec : kCodecs) {
    const Bytes compressed = Compress(codec, page);
    for (size_t size : {page.size() - 1, page.size() + 1, size_t{0}, 2 * page.size()}) {
      EXPECT_THROW(Decompressed(codec, compressed, size), InputError)
          << CodecName(codec) << " told " << size;
    }
  }
}

TEST(Decompress, RefusesTruncatedAndGarbledPages) {
  const Bytes page = Page();
  for (Codec codec : kCodecs) {
    if (codec == Codec::kUncompressed) continue;
    const Bytes compressed = Compress(codec, page);
    const Bytes truncated(compressed.begin(), compressed.begin() + compressed.size() / 2);
    EXPECT_THROW(Decompressed(codec, truncated, page.size()), InputError) << CodecName(codec);
    EXPECT_THROW(Decompressed(codec, Bytes(64, 0xff), page.size()), InputError)
        << CodecName(codec);
  }
}

TEST(Decompress, SaysWhichCodecsPageIsCorrupt) {
  const uint8_t garbage[] = {1, 2, 3, 4, 5, 6, 7, 8};
  Bytes out;
  try {
    Decompress(Codec::kZstd, garbage, sizeof garbage, 8, &out);
    FAIL() << "no error";
  } catch (const InputError& e) {
    // libzstd's own words follow (1.5.4: "Src size is incorrect").
    EXPECT_EQ(std::string(e.what()).rfind("corrupt ZSTD page (", 0), 0u) << e.what();
  }
  // `printf abc | zstd --no-check`: a frame of one raw block. Told it holds 2 bytes, the page is
  // refused, not overrun.
  const uint8_t frame[] = {0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58, 0x19, 0x00, 0x00, 'a', 'b', 'c'};
  Decompress(Codec::kZstd, frame, sizeof frame, 3, &out);
  EXPECT_EQ(std::string(out.begin(), out.end()), "abc");
  try {
    Decompress(Codec::kZstd, frame, sizeof frame, 2, &out);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("corrupt ZSTD page (", 0), 0u) << e.what();
  }
}

TEST(Decompress, ReadsHadoopLz4PagesOfSeveralFrames) {
  const Bytes page = Page();
  const Bytes first(page.begin(), page.begin() + 4000);
  const Bytes second(page.begin() + 4000, page.end());
  EXPECT_EQ(Decompressed(Codec::kLz4, HadoopLz4({first, second}), page.size()), page);
}

TEST(Decompress, ReadsAnLz4PageWithoutHadoopsFramingAsOneRawBlock) {
  // Older parquet-cpp wrote the deprecated LZ4 codec as a bare block, as LZ4_RAW now is.
  const Bytes page = Page();
  EXPECT_EQ(Decompressed(Codec::kLz4, Lz4Block(page), page.size()), page);
}

TEST(Decompress, RefusesHadoopLz4FramesThatDoNotFillThePage) {
  const Bytes page = Page();
  const Bytes half(page.begin(), page.begin() + 5000);
  // Frames that hold 5,000 bytes of a page said to hold 10,000: neither Hadoop's framing of the
  // page nor a raw block.
  EXPECT_THROW(Decompressed(Codec::kLz4, HadoopLz4({half}), page.size()), InputError);
  // A frame whose compressed size runs past the page.
  Bytes framed = HadoopLz4({page});
  framed[7] = static_cast<uint8_t>(framed[7] + 1);
  EXPECT_THROW(Decompressed(Codec::kLz4, framed, page.size()), InputError);
}

TEST(CodecSupported, ReadsEveryCodecButLzo) {
  for (Codec codec : kCodecs) EXPECT_TRUE(CodecSupported(codec)) << CodecName(codec);
  EXPECT_FALSE(CodecSupported(Codec::kLzo));
  EXPECT_FALSE(CodecSupported(static_cast<Codec>(8)));
}

TEST(CodecRefusal, NamesTheCodecAndTheOnesSparktorchReads) {
  EXPECT_EQ(CodecRefusal(Codec::kLzo),
            "compressed with LZO, which sparktorch does not read (it reads UNCOMPRESSED, SNAPPY, "
            "GZIP, ZSTD, LZ4, LZ4_RAW and BROTLI: any of Spark's "
            "spark.sql.parquet.compression.codec but lzo)");
  const uint8_t byte = 0;
  Bytes out;
  EXPECT_THROW(Decompress(Codec::kLzo, &byte, 1, 1, &out), InputError);
}

// Pages that other writers compressed (tests/formats/data/parquet_codecs/README.md).

std::string CodecFixture(const std::string& name) {
  return std::string(SPARKTORCH_TEST_DATA) + "/parquet_codecs/" + name;
}

std::vector<Row> ReadRows(const std::string& name, const std::string& features,
                          const std::string& label, const std::string& id) {
  RowFormat format;
  format.kind = RowFormatKind::kParquet;
  format.features_field = features;
  format.label_field = label;
  format.id_field = id;
  if (label.empty()) format.label = LabelPresence::kNone;
  ParquetRowReader reader(CodecFixture(name), format, 0);
  std::vector<Row> rows;
  for (Row row; reader.Next(&row);) rows.push_back(row);
  return rows;
}

TEST(Decompress, ReadsTheLz4PagesOfParquetMrAndParquetCpp) {
  for (const char* name : {"hadoop_lz4_compressed.parquet", "non_hadoop_lz4_compressed.parquet",
                           "lz4_raw_compressed.parquet"}) {
    SCOPED_TRACE(name);
    const std::vector<Row> rows = ReadRows(name, "c0,v11", "", "c1");
    ASSERT_EQ(rows.size(), 4u);
    const std::vector<std::vector<float>> features = {
        {1593604800.0f, 42.0f}, {1593604800.0f, 7.7f}, {1593604801.0f, 42.125f},
        {1593604801.0f, 7.7f}};
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].features, features[i]) << "row " << i;
      EXPECT_EQ(rows[i].id, i % 2 == 0 ? "abc" : "def") << "row " << i;
    }
  }
}

TEST(Decompress, ReadsTheBrotliPagesOfArrowCpp) {
  const std::vector<Row> rows = ReadRows("brotli_arrow.parquet", "x,e", "label", "id");
  ASSERT_EQ(rows.size(), 12u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const float f = static_cast<float>(i);
    EXPECT_EQ(rows[i].features, (std::vector<float>{f / 2, f, -f / 4})) << "row " << i;
    EXPECT_EQ(rows[i].label, std::vector<float>{static_cast<float>(i % 3)}) << "row " << i;
    EXPECT_EQ(rows[i].id, (i < 10 ? "r0" : "r") + std::to_string(i)) << "row " << i;
  }
}

}  // namespace
}  // namespace parquet
}  // namespace sparktorch
