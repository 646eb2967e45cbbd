#include "formats/records.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "formats/base64.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

// zlib's crc32() takes a 32-bit length; crc32_z() takes a size_t.
unsigned long Crc32(unsigned long crc, std::string_view bytes) {
  return crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size());
}

void AppendCrc(unsigned long crc, std::string* out) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08lx", crc & 0xffffffffUL);
  out->append(hex, 8);
}

void AppendNumber(uint64_t n, std::string* out) { out->append(std::to_string(n)); }

bool HasLineBreakOrTab(std::string_view s) {
  return s.find_first_of("\t\n\r") != std::string_view::npos;
}

// A field quoted for a message: control bytes escaped, long text cut, so that a stray binary or
// log line makes a readable one-line message.
std::string Quote(std::string_view s) {
  constexpr size_t kMaxShown = 32;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char esc[5];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMaxShown) out += "...";
  out += '"';
  return out;
}

std::vector<std::string_view> SplitTabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t begin = 0;
  for (;;) {
    size_t tab = line.find('\t', begin);
    if (tab == std::string_view::npos) {
      fields.push_back(line.substr(begin));
      return fields;
    }
    fields.push_back(line.substr(begin, tab - begin));
    begin = tab + 1;
  }
}

// A non-negative decimal integer and nothing else (no sign, no spaces).
std::optional<uint64_t> ParseCount(std::string_view s) {
  uint64_t value = 0;
  if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// Exactly 8 hex digits (the writer uses lowercase; either case is read).
std::optional<unsigned long> ParseCrc(std::string_view s) {
  if (s.size() != 8) return std::nullopt;
  unsigned long value = 0;
  for (char c : s) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    value = value * 16 + static_cast<unsigned long>(digit);
  }
  return value;
}

std::string CrcText(unsigned long crc) {
  std::string s;
  AppendCrc(crc, &s);
  return s;
}

// "1 field", "5 fields".
std::string Plural(uint64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// "chunk 2 is missing", "chunks 2 to 4 are missing" for the chunks [first, end).
std::string Missing(uint64_t first, uint64_t end) {
  if (end - first == 1) return "chunk " + std::to_string(first) + " is missing";
  return "chunks " + std::to_string(first) + " to " + std::to_string(end - 1) + " are missing";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RecordWriter

RecordWriter::RecordWriter(std::FILE* out, std::string out_name)
    : out_(out), out_name_(std::move(out_name)) {}

void RecordWriter::WritePrediction(std::string_view id, std::string_view value) {
  if (HasLineBreakOrTab(id)) {
    throw Error(out_name_ + ": prediction id " + Quote(id) + " holds a tab or a line break");
  }
  if (HasLineBreakOrTab(value)) {
    throw Error(out_name_ + ": prediction " + Quote(value) + " holds a tab or a line break");
  }
  line_.assign("P\t");
  if (!id.empty()) {
    line_.append(id);
    line_ += '\t';
  }
  line_.append(value);
  if (line_.size() > kMaxRecordLineBytes) {
    throw Error(out_name_ + ": a prediction record of " + std::to_string(line_.size()) +
                " bytes is longer than the " + std::to_string(kMaxRecordLineBytes) +
                " a record line may hold");
  }
  line_ += '\n';
  Put(line_);
}

void ModelRecordLines(std::string_view model_bytes,
                      const std::function<void(std::string_view line)>& line) {
  const uint64_t count = (model_bytes.size() + kModelChunkBytes - 1) / kModelChunkBytes;
  unsigned long whole_crc = 0;
  std::string text;
  for (uint64_t seq = 0; seq < count; ++seq) {
    std::string_view chunk = model_bytes.substr(seq * kModelChunkBytes, kModelChunkBytes);
    const unsigned long crc = Crc32(0, chunk);
    whole_crc = Crc32(whole_crc, chunk);
    text.assign("M\t");
    AppendNumber(seq, &text);
    text += '\t';
    AppendNumber(count, &text);
    text += '\t';
    AppendCrc(crc, &text);
    text += '\t';
    Base64Encode(chunk, &text);
    text += '\n';
    line(text);
  }
  text.assign("E\t");
  AppendNumber(count, &text);
  text += '\t';
  AppendNumber(model_bytes.size(), &text);
  text += '\t';
  AppendCrc(whole_crc, &text);
  text += '\n';
  line(text);
}

void RecordWriter::WriteModel(std::string_view model_bytes) {
  ModelRecordLines(model_bytes, [this](std::string_view line) { Put(line); });
}

void RecordWriter::WriteSummary(std::string_view json) {
  if (json.find_first_of("\n\r") != std::string_view::npos) {
    throw Error(out_name_ + ": a summary must be one line of JSON, got a line break in " +
                Quote(json));
  }
  line_.assign("S\t");
  line_.append(json);
  if (line_.size() > kMaxRecordLineBytes) {
    throw Error(out_name_ + ": a summary record of " + std::to_string(line_.size()) +
                " bytes is longer than the " + std::to_string(kMaxRecordLineBytes) +
                " a record line may hold");
  }
  line_ += '\n';
  Put(line_);
}

void RecordWriter::Flush() {
  if (std::fflush(out_) != 0) {
    throw Error(out_name_ + ": cannot write records: " + std::strerror(errno));
  }
}

void RecordWriter::Put(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), out_) != bytes.size()) {
    throw Error(out_name_ + ": cannot write records: " + std::strerror(errno));
  }
}

// ---------------------------------------------------------------------------------------------
// RecordReader

RecordReader::RecordReader(std::string name) : name_(std::move(name)) {}

void RecordReader::Fail(const std::string& what) const {
  throw ModelError(name_ + ":" + std::to_string(line_number_) + ": " + what);
}

std::optional<RecordReader::Prediction> RecordReader::Feed(std::string_view line) {
  ++line_number_;
  if (line.size() > kMaxRecordLineBytes) {
    Fail("line is " + std::to_string(line.size()) + " bytes, longer than the " +
         std::to_string(kMaxRecordLineBytes) + " a record line may hold");
  }
  if (line.empty()) Fail("not a sparktorch record (empty line)");

  const size_t tab = line.find('\t');
  const std::string_view tag = line.substr(0, tab);
  if (tag == "S") {
    // Everything after the first tab, tabs included, is the JSON.
    if (tab == std::string_view::npos) Fail("S record has 1 field, expected 2");
    std::string_view json = line.substr(tab + 1);
    if (json.empty() || json[0] != '{') Fail("S record does not hold a JSON object");
    summaries_.emplace_back(json);
    return std::nullopt;
  }
  if (tag != "P" && tag != "M" && tag != "E") {
    Fail("not a sparktorch record (tag " + Quote(tag) + ")");
  }

  const std::vector<std::string_view> fields = SplitTabs(line);
  if (tag == "P") {
    if (fields.size() == 2) return Prediction{{}, fields[1]};
    if (fields.size() == 3) return Prediction{fields[1], fields[2]};
    Fail("P record has " + Plural(fields.size(), "field") + ", expected 2 or 3");
  }
  if (tag == "M") {
    if (fields.size() != 5) Fail("M record has " + Plural(fields.size(), "field") + ", expected 5");
    FeedChunk(fields[1], fields[2], fields[3], fields[4]);
  } else {
    if (fields.size() != 4) Fail("E record has " + Plural(fields.size(), "field") + ", expected 4");
    FeedEnd(fields[1], fields[2], fields[3]);
  }
  return std::nullopt;
}

void RecordReader::FeedChunk(std::string_view seq_text, std::string_view count_text,
                             std::string_view crc_text, std::string_view base64) {
  const std::optional<uint64_t> seq = ParseCount(seq_text);
  if (!seq) Fail("M record: SEQ " + Quote(seq_text) + " is not a number");
  const std::optional<uint64_t> count = ParseCount(count_text);
  if (!count) Fail("M record: COUNT " + Quote(count_text) + " is not a number");
  const std::optional<unsigned long> crc = ParseCrc(crc_text);
  if (!crc) Fail("M record: CRC " + Quote(crc_text) + " is not 8 hex digits");

  if (model_ended_) {
    Fail("a second model begins after the first ended on line " + std::to_string(end_line_));
  }
  const std::string chunk_name = "model chunk " + std::to_string(*seq);
  if (*seq >= *count) {
    Fail(chunk_name + " of " + std::to_string(*count) + " is out of range (SEQ counts from 0)");
  }
  if (chunks_expected_ == 0) {
    chunks_expected_ = *count;
  } else if (*count != chunks_expected_) {
    Fail(chunk_name + " says the model has " + std::to_string(*count) +
         " chunks, earlier chunks said " + std::to_string(chunks_expected_));
  }
  if (*seq > chunks_seen_) {
    const std::string after =
        chunks_seen_ == 0 ? " arrived first: "
                          : " arrived after chunk " + std::to_string(chunks_seen_ - 1) + ": ";
    Fail(chunk_name + after + Missing(chunks_seen_, *seq));
  }
  if (*seq < chunks_seen_) {
    Fail(chunk_name + " arrived again after chunk " + std::to_string(chunks_seen_ - 1));
  }

  const std::string of = chunk_name + " of " + std::to_string(chunks_expected_);
  const std::optional<size_t> size = Base64DecodedSize(base64);
  if (!size) {
    Fail(of + " is not valid base64 (its length, " + std::to_string(base64.size()) +
         ", is not a multiple of 4 or its padding is malformed)");
  }
  const size_t old_size = model_.size();
  model_.resize(old_size + *size);
  if (std::optional<size_t> bad = Base64Decode(base64, model_.data() + old_size)) {
    model_.resize(old_size);
    Fail(of + " is not valid base64 (" + Quote(base64.substr(*bad, 1)) + " at offset " +
         std::to_string(*bad) + ")");
  }
  const std::string_view chunk(model_.data() + old_size, *size);
  const unsigned long actual = Crc32(0, chunk);
  if (actual != *crc) {
    model_.resize(old_size);
    Fail(of + " is corrupt (crc32 " + CrcText(actual) + ", record says " + CrcText(*crc) + ")");
  }
  model_crc_ = Crc32(model_crc_, chunk);
  ++chunks_seen_;
}

void RecordReader::FeedEnd(std::string_view count_text, std::string_view bytes_text,
                           std::string_view crc_text) {
  const std::optional<uint64_t> count = ParseCount(count_text);
  if (!count) Fail("E record: COUNT " + Quote(count_text) + " is not a number");
  const std::optional<uint64_t> bytes = ParseCount(bytes_text);
  if (!bytes) Fail("E record: BYTES " + Quote(bytes_text) + " is not a number");
  const std::optional<unsigned long> crc = ParseCrc(crc_text);
  if (!crc) Fail("E record: CRC " + Quote(crc_text) + " is not 8 hex digits");

  if (model_ended_) {
    Fail("a second model ends after the first ended on line " + std::to_string(end_line_));
  }
  if (chunks_seen_ < chunks_expected_) {
    Fail("model end record arrived after " + std::to_string(chunks_seen_) + " of " +
         std::to_string(chunks_expected_) + " chunks: " + Missing(chunks_seen_, chunks_expected_));
  }
  if (*count != chunks_seen_) {
    Fail("model end record says " + Plural(*count, "chunk") + ", " + std::to_string(chunks_seen_) +
         " arrived");
  }
  if (*bytes != model_.size()) {
    Fail("model end record says " + Plural(*bytes, "byte") + ", " + std::to_string(model_.size()) +
         " arrived");
  }
  if (*crc != model_crc_) {
    Fail("model is corrupt (crc32 " + CrcText(model_crc_) + ", end record says " + CrcText(*crc) +
         ")");
  }
  model_ended_ = true;
  end_line_ = line_number_;
}

std::optional<std::string> RecordReader::TakeModel() {
  if (!model_ended_) {
    if (chunks_seen_ == 0) return std::nullopt;
    if (chunks_seen_ < chunks_expected_) {
      throw ModelError(name_ + ": the model is incomplete: " + std::to_string(chunks_seen_) +
                       " of " + std::to_string(chunks_expected_) +
                       " chunks arrived and no end record (" +
                       Missing(chunks_seen_, chunks_expected_) + ")");
    }
    throw ModelError(name_ + ": the model has no end record (" + std::to_string(chunks_seen_) +
                     " of " + std::to_string(chunks_expected_) + " chunks arrived)");
  }
  std::string model;
  model.swap(model_);
  return model;
}

}  // namespace sparktorch
