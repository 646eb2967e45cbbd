#include "formats/compact_parser.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "formats/base64.h"
#include "formats/error.h"
#include "formats/number_parse.h"

namespace sparktorch {
namespace {

// The characters of base64 text before the one holding the first bit of decoded byte `byte`.
size_t CharacterOfByte(size_t byte) { return byte * 8 / 6; }

// Decodes base64 `text` into *values when it is valid and holds whole float32 values; returns
// false, with *values left in any state, otherwise.
bool TryDecode(std::string_view text, std::vector<float>* values) {
  const std::optional<size_t> bytes = Base64DecodedSize(text);
  if (!bytes || *bytes % 4 != 0) return false;
  values->resize(*bytes / 4);
  return !Base64Decode(text, reinterpret_cast<char*>(values->data()));
}

// TryDecode, throwing the RowError that says why `text`, which starts at `column`, cannot be
// decoded.
void Decode(std::string_view text, size_t column, std::vector<float>* values) {
  if (text.size() % 4 != 0) {
    throw RowError(
        "invalid base64: " + std::to_string(text.size()) + " characters, not a multiple of 4",
        column);
  }
  const std::optional<size_t> bytes = Base64DecodedSize(text);
  if (!bytes) {  // more than two '=' at the end
    throw RowError("invalid base64: unexpected \"=\"", column + text.find_last_not_of('=') + 1);
  }
  if (*bytes % 4 != 0) {
    throw RowError(
        "invalid float32 data: " + std::to_string(*bytes) + " bytes, not a multiple of 4", column);
  }
  values->resize(*bytes / 4);
  if (std::optional<size_t> bad = Base64Decode(text, reinterpret_cast<char*>(values->data()))) {
    throw RowError("invalid base64: unexpected " + DescribeByteForMessage(text[*bad]),
                   column + *bad);
  }
}

}  // namespace

CompactParser::CompactParser(const RowFormat& format)
    : layout_(format, "compact", "values", std::nullopt), allow_nan_(format.allow_nan) {}

void CompactParser::Parse(std::string_view line, Row* row) {
  if (line.empty()) throw RowError("empty line", 0);
  row->id.clear();
  std::vector<float>& f = row->features;
  // Most lines have no id: decode the whole line without first searching it for a tab. A tab is
  // not base64, so a line with an id fails early and is decoded again after its id.
  size_t column = 1;  // of the base64 text
  if (!TryDecode(line, &f)) {
    if (const void* tab = std::memchr(line.data(), '\t', line.size())) {
      const size_t id_size = static_cast<size_t>(static_cast<const char*>(tab) - line.data());
      row->id.assign(line.data(), id_size);
      column = id_size + 2;
    }
    Decode(line.substr(column - 1), column, &f);
  }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  for (float& v : f) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits = __builtin_bswap32(bits);
    std::memcpy(&v, &bits, 4);
  }
#endif
  if (!allow_nan_) {
    CheckFloatsFinite(f, [column](size_t i) { return column + CharacterOfByte(4 * i); });
  }
  layout_.Split(static_cast<int64_t>(f.size()), -1, row);
}

}  // namespace sparktorch
