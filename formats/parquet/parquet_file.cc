#include "formats/parquet/parquet_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "formats/error.h"
#include "formats/parquet/decompress.h"

namespace sparktorch {
namespace parquet {
namespace {

constexpr char kMagic[4] = {'P', 'A', 'R', '1'};
// A footer larger than this is not a footer but a corrupt length.
constexpr int64_t kMaxFooterBytes = int64_t{1} << 30;
// Levels are kept as bytes.
constexpr int kMaxLevel = 255;

void ReadAt(int fd, const std::string& path, int64_t offset, size_t size, uint8_t* out) {
  size_t done = 0;
  while (done < size) {
    ssize_t got = pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputError(path + ": cannot read: " + std::strerror(errno));
    if (got == 0) throw InputError(path + ": truncated Parquet file");
    done += static_cast<size_t>(got);
  }
}

// The zero bytes of `bytes`, 8 at a time: a vector column's repetition levels are a byte per
// value (47 million for 60,000 Fashion-MNIST rows), and std::count took 2% of a read.
int64_t CountZeros(const std::vector<uint8_t>& bytes) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
  const size_t words = bytes.size() / 8;
  int64_t zeros = 0;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + 8 * i, 8);
    // A byte's high bit ends up set unless the byte is 0.
    const uint64_t nonzero = ((w & kLow7) + kLow7) | w;
    // One bit a zero byte, at the byte's bottom; the multiplication sums the 8 into the top byte.
    zeros += static_cast<int64_t>((((~nonzero & ~kLow7) >> 7) * 0x0101010101010101ull) >> 56);
  }
  for (size_t i = words * 8; i < bytes.size(); ++i) zeros += bytes[i] == 0;
  return zeros;
}

// A column chunk's bytes as pread from the file, a range at a time into *buffer (which grows
// to the largest range asked for).
class FileChunk : public ChunkBytes {
 public:
  FileChunk(int fd, const std::string& path, int64_t start, size_t size,
            std::vector<uint8_t>* buffer)
      : fd_(fd), path_(path), start_(start), size_(size), buffer_(buffer) {}
  size_t size() const override { return size_; }
  const uint8_t* Read(size_t offset, size_t n) override {
    if (buffer_->size() < n) buffer_->resize(n);
    ReadAt(fd_, path_, start_ + static_cast<int64_t>(offset), n, buffer_->data());
    return buffer_->data();
  }

 private:
  int fd_;
  const std::string& path_;
  int64_t start_;
  size_t size_;
  std::vector<uint8_t>* buffer_;
};

}  // namespace

struct ColumnPages::Parts {
  std::vector<uint8_t> buffer;
  std::unique_ptr<FileChunk> bytes;
  std::unique_ptr<ColumnChunkPages> pages;
};

ColumnPages::ColumnPages() = default;
ColumnPages::~ColumnPages() = default;

bool ColumnPages::Next(ColumnValues* out) {
  if (!parts_) return false;  // an empty chunk
  try {
    return parts_->pages->Next(out);
  } catch (const InputError& e) {
    throw InputError(where_ + e.what());
  }
}

ParquetFile::ParquetFile(const std::string& path) : path_(path) {
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  try {
    struct stat st;
    if (fstat(fd_, &st) != 0) throw InputError(path + ": cannot stat: " + std::strerror(errno));
    size_ = st.st_size;
    uint8_t head[4] = {}, tail[8] = {};
    if (size_ < 12) throw InputError(path + ": not a Parquet file (" + std::to_string(size_) + " bytes)");
    ReadAt(fd_, path, 0, 4, head);
    ReadAt(fd_, path, size_ - 8, 8, tail);
    if (std::memcmp(head, kMagic, 4) != 0 || std::memcmp(tail + 4, kMagic, 4) != 0) {
      throw InputError(path + ": not a Parquet file (no PAR1 at its start and end)");
    }
    uint32_t footer_size;
    std::memcpy(&footer_size, tail, 4);
    if (footer_size > size_ - 12 || footer_size > kMaxFooterBytes) {
      throw InputError(path + ": corrupt Parquet footer length " + std::to_string(footer_size));
    }
    std::vector<uint8_t> footer(footer_size);
    ReadAt(fd_, path, size_ - 8 - footer_size, footer_size, footer.data());
    try {
      metadata_ = ParseFileMetaData(footer.data(), footer.size());
    } catch (const InputError& e) {
      throw InputError(path + ": corrupt Parquet footer: " + e.what());
    }
    BuildLeaves();
  } catch (...) {
    close(fd_);
    throw;
  }
}

ParquetFile::~ParquetFile() { close(fd_); }

void ParquetFile::BuildLeaves() {
  const std::vector<SchemaElement>& schema = metadata_.schema;
  if (schema.empty()) throw InputError(path_ + ": a Parquet file without a schema");
  // Walks the depth-first list with a stack of the open groups' remaining children.
  struct Open {
    size_t element;
    int32_t children_left;
  };
  std::vector<Open> stack{{0, schema[0].num_children}};
  std::vector<size_t> path_elements;
  for (size_t i = 1; i < schema.size(); ++i) {
    while (!stack.empty() && stack.back().children_left == 0) {
      stack.pop_back();
      if (!path_elements.empty()) path_elements.pop_back();
    }
    if (stack.empty()) throw InputError(path_ + ": corrupt Parquet schema (too many elements)");
    --stack.back().children_left;
    const SchemaElement& e = schema[i];
    if (stack.size() == 1) fields_.push_back(Field{e.name, {}});
    path_elements.push_back(i);
    if (e.num_children > 0) {
      stack.push_back({i, e.num_children});
      continue;
    }
    if (!e.type) throw InputError(path_ + ": corrupt Parquet schema (" + e.name + " has no type)");
    Leaf leaf;
    leaf.field = fields_.size() - 1;
    leaf.type = *e.type;
    leaf.decimal = e.decimal;
    leaf.is_unsigned = e.is_unsigned;
    for (size_t k : path_elements) {
      const SchemaElement& node = schema[k];
      if (!leaf.path.empty()) leaf.path += '.';
      leaf.path += node.name;
      if (node.repetition != Repetition::kRequired) ++leaf.max_def;
      if (node.repetition == Repetition::kRepeated) ++leaf.max_rep;
      leaf.node_def.push_back(leaf.max_def);
      leaf.node_repetition.push_back(node.repetition);
    }
    if (leaf.max_def > kMaxLevel || leaf.max_rep > kMaxLevel) {
      throw InputError(path_ + ": column " + leaf.path + " is nested too deep");
    }
    fields_.back().leaves.push_back(leaves_.size());
    leaves_.push_back(std::move(leaf));
    path_elements.pop_back();
  }
  for (const RowGroup& group : metadata_.row_groups) {
    if (group.columns.size() != leaves_.size()) {
      throw InputError(path_ + ": corrupt Parquet footer (a row group has " +
                       std::to_string(group.columns.size()) + " columns, the schema " +
                       std::to_string(leaves_.size()) + ")");
    }
  }
}

int ParquetFile::FindField(const std::string& name) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string ParquetFile::Where(size_t row_group, size_t leaf) const {
  return path_ + ": row group " + std::to_string(row_group + 1) + ", column " +
         leaves_.at(leaf).path + ": ";
}

void ParquetFile::CheckColumn(size_t row_group, size_t leaf) const {
  const ColumnChunk& meta = metadata_.row_groups.at(row_group).columns.at(leaf);
  if (!CodecSupported(meta.codec)) {
    throw InputError(Where(row_group, leaf) + CodecRefusal(meta.codec));
  }
  // The list holds the levels' encodings too: RLE, and BIT_PACKED as parquet-mr lists it for
  // levels it never writes so (a page that does is refused when read).
  for (Encoding encoding : meta.encodings) {
    if (encoding != Encoding::kRle && encoding != Encoding::kBitPacked &&
        !ValueEncodingSupported(encoding, leaves_.at(leaf).type)) {
      throw InputError(Where(row_group, leaf) + EncodingRefusal(encoding, leaves_.at(leaf).type));
    }
  }
}

int64_t ParquetFile::ChunkStart(size_t row_group, size_t leaf) const {
  const ColumnChunk& meta = metadata_.row_groups.at(row_group).columns.at(leaf);
  int64_t start = meta.data_page_offset;
  if (meta.dictionary_page_offset && *meta.dictionary_page_offset > 0 &&
      *meta.dictionary_page_offset < start) {
    start = *meta.dictionary_page_offset;
  }
  if (start < 4 || meta.total_compressed_size < 0 ||
      meta.total_compressed_size > size_ - 8 - start) {
    throw InputError(Where(row_group, leaf) + "corrupt column chunk offsets");
  }
  CheckColumn(row_group, leaf);
  return start;
}

std::unique_ptr<ColumnPages> ParquetFile::OpenColumn(size_t row_group, size_t leaf,
                                                     ValueKind kind) {
  const ColumnChunk& meta = metadata_.row_groups.at(row_group).columns.at(leaf);
  const Leaf& l = leaves_.at(leaf);
  std::unique_ptr<ColumnPages> column(new ColumnPages());
  column->where_ = Where(row_group, leaf);
  column->rows_ = metadata_.row_groups[row_group].num_rows;
  if (meta.num_values == 0) {  // an empty row group's chunk, whose offsets writers leave at 0
    CheckColumn(row_group, leaf);
    return column;
  }
  const int64_t start = ChunkStart(row_group, leaf);
  column->parts_ = std::make_unique<ColumnPages::Parts>();
  ColumnPages::Parts& parts = *column->parts_;
  parts.bytes = std::make_unique<FileChunk>(
      fd_, path_, start, static_cast<size_t>(meta.total_compressed_size), &parts.buffer);
  parts.pages = std::make_unique<ColumnChunkPages>(
      parts.bytes.get(), meta, LeafLayout{l.type, l.max_def, l.max_rep, kind, l.is_unsigned});
  return column;
}

void ParquetFile::ReadColumn(size_t row_group, size_t leaf, ValueKind kind, ColumnValues* out) {
  const ColumnChunk& meta = metadata_.row_groups.at(row_group).columns.at(leaf);
  const Leaf& l = leaves_.at(leaf);
  const std::string where = Where(row_group, leaf);
  if (meta.num_values == 0) {  // an empty row group's chunk, whose offsets writers leave at 0
    CheckColumn(row_group, leaf);
    *out = ColumnValues();
    return;
  }
  const int64_t start = ChunkStart(row_group, leaf);
  // The chunk is read a page at a time into page_, which grows to the largest page's bytes.
  FileChunk bytes(fd_, path_, start, static_cast<size_t>(meta.total_compressed_size), &page_);
  LeafLayout layout{l.type, l.max_def, l.max_rep, kind, l.is_unsigned};
  try {
    DecodeColumnChunk(bytes, meta, layout, out);
  } catch (const InputError& e) {
    throw InputError(where + e.what());
  }
  // A row starts at each repetition level 0: the first entry must start one, and the chunk
  // must hold its row group's rows, or its values would be taken for other rows'.
  const int64_t rows = l.max_rep == 0 ? out->entries : CountZeros(out->rep);
  if (l.max_rep > 0 && !out->rep.empty() && out->rep[0] != 0) {
    throw InputError(where + "repetition levels that start inside a row");
  }
  const int64_t expected = metadata_.row_groups[row_group].num_rows;
  if (rows != expected) {
    throw InputError(where + "a column chunk of " + std::to_string(rows) +
                     " rows in a row group of " + std::to_string(expected));
  }
}

}  // namespace parquet
}  // namespace sparktorch
