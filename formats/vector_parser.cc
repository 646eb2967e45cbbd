#include "formats/vector_parser.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "formats/base64.h"
#include "formats/error.h"
#include "formats/number_parse.h"

namespace sparktorch {
namespace {

// Larger sparse sizes are taken for garbage rather than allocated (1 GiB of floats).
constexpr int64_t kMaxVectorSize = int64_t{1} << 28;

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// The bytes that end a number or index token in a vector line.
bool EndsToken(char c) {
  return c == ',' || c == ']' || c == ')' || c == '[' || c == '(' || IsBlank(c);
}

const char* SkipBlanks(const char* p, const char* end) {
  while (p != end && IsBlank(*p)) ++p;
  return p;
}

std::string Indices(size_t n) { return n == 1 ? "1 index" : std::to_string(n) + " indices"; }

std::string Features(int64_t n) { return n == 1 ? "1 feature" : std::to_string(n) + " features"; }

// A position in a line, and the RowErrors that say what was expected there.
class Cursor {
 public:
  explicit Cursor(std::string_view line)
      : begin_(line.data()), p_(begin_), end_(begin_ + line.size()) {}

  bool AtEnd() const { return p_ == end_; }
  char Peek() const { return p_ == end_ ? '\0' : *p_; }
  const char* position() const { return p_; }
  const char* end() const { return end_; }
  size_t Column() const { return static_cast<size_t>(p_ - begin_) + 1; }

  void SkipBlanks() { p_ = sparktorch::SkipBlanks(p_, end_); }
  void Skip(size_t n) { p_ += std::min(n, static_cast<size_t>(end_ - p_)); }
  bool Accept(char c) {
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  void Expect(char c) {
    if (!Accept(c)) Fail(std::string("\"") + c + "\"");
  }

  // Throws `expected WHAT, got "the rest of the line"`.
  [[noreturn]] void Fail(const std::string& what) const {
    throw RowError(
        "expected " + what + ", got " +
            (p_ == end_ ? std::string("the end of the line")
                        : QuoteForMessage(std::string_view(p_, static_cast<size_t>(end_ - p_)))),
        Column());
  }

  float Number(bool allow_nan) {
    float v;
    const char* q = ParsePlainDecimal(p_, end_, &v);
    if (q == nullptr || (q != end_ && !EndsToken(*q))) {
      q = TokenEnd();
      if (q == p_) Fail("a number");
      v = ParseFieldValue(std::string_view(p_, static_cast<size_t>(q - p_)), Column(), allow_nan);
    }
    p_ = q;
    return v;
  }

  // `what`: "an index", for messages.
  int64_t Index(const char* what) {
    const char* q = TokenEnd();
    if (q == p_) Fail(what);
    const std::string_view token(p_, static_cast<size_t>(q - p_));
    int64_t v;
    if (!ParseIndex(token, &v)) {
      throw RowError(std::string("expected ") + what + ", got " + QuoteForMessage(token), Column());
    }
    p_ = q;
    return v;
  }

  // After a list item: consumes "," and returns true, or "]" and returns false.
  bool NextItem() {
    SkipBlanks();
    if (Accept(',')) {
      SkipBlanks();
      return true;
    }
    if (Accept(']')) return false;
    Fail("\",\" or \"]\"");
  }

 private:
  const char* TokenEnd() const {
    const char* q = p_;
    while (q != end_ && !EndsToken(*q)) ++q;
    return q;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
};

// Just past the ']' closing the list that starts at p, or nullptr.
const char* AfterList(const char* p, const char* end) {
  const void* close = std::memchr(p, ']', static_cast<size_t>(end - p));
  return close != nullptr ? static_cast<const char*>(close) + 1 : nullptr;
}

// Just past the ')' closing the sparse vector "(size,[...],[...])" that starts at p, or nullptr
// when there is no such ')' (the parse then says what is wrong).
const char* AfterSparse(const char* p, const char* end) {
  p = AfterList(p, end);                     // the indices
  if (p != nullptr) p = AfterList(p, end);  // the values
  if (p == nullptr) return nullptr;
  p = SkipBlanks(p, end);
  return p != end && *p == ')' ? p + 1 : nullptr;
}

// Whether the '(' at p opens a LabeledPoint "(label,vector)" rather than a sparse vector
// "(size,[indices],[values])": a sparse vector has a second list right after its first.
bool IsLabeledPoint(const char* p, const char* end) {
  p = SkipBlanks(p + 1, end);
  if (p == end) return false;
  if (*p == '[' || *p == '(') return true;  // a vector label
  while (p != end && !EndsToken(*p)) ++p;
  p = SkipBlanks(p, end);
  if (p != end && *p == ',') p = SkipBlanks(p + 1, end);
  if (p == end || *p != '[') return true;  // "(label,(size,...))", or not a vector line at all
  p = AfterList(p, end);
  if (p == nullptr) return true;
  p = SkipBlanks(p, end);
  return p == end || *p != ',';
}

// Parses "[v,v,...]" into *values, replacing what it held and reusing its capacity.
void ParseDenseList(Cursor& c, bool allow_nan, std::vector<float>* values) {
  std::vector<float>& v = *values;
  if (v.size() < v.capacity() || v.size() < 16) v.resize(std::max<size_t>(v.capacity(), 16));
  size_t n = 0;
  c.Expect('[');
  c.SkipBlanks();
  if (!c.Accept(']')) {
    do {
      if (n == v.size()) v.resize(2 * n);
      v[n++] = c.Number(allow_nan);
    } while (c.NextItem());
  }
  v.resize(n);
}

// Parses "(size,[i,...],[v,...])" into *features, densified. `num_features`: 0 when unknown.
void ParseSparse(Cursor& c, int64_t num_features, bool allow_nan, std::vector<int64_t>* indices,
                 std::vector<float>* features) {
  c.Expect('(');
  c.SkipBlanks();
  const size_t size_column = c.Column();
  const int64_t size = c.Index("a vector size");
  if (num_features > 0 && size != num_features) {
    throw RowError("expected " + Features(num_features) + ", got a sparse vector of size " +
                       std::to_string(size),
                   size_column);
  }
  if (size < 1 || size > kMaxVectorSize) {
    throw RowError("expected a vector size from 1 to " + std::to_string(kMaxVectorSize) + ", got " +
                       std::to_string(size),
                   size_column);
  }
  c.SkipBlanks();
  c.Expect(',');
  c.SkipBlanks();
  c.Expect('[');
  indices->clear();
  c.SkipBlanks();
  if (!c.Accept(']')) {
    do {
      const size_t column = c.Column();
      const int64_t i = c.Index("an index");
      if (i >= size) {
        throw RowError(
            "index " + std::to_string(i) + " out of range 0.." + std::to_string(size - 1), column);
      }
      if (!indices->empty() && i <= indices->back()) {
        throw RowError("index " + std::to_string(i) + " after " + std::to_string(indices->back()) +
                           ": indices must be ascending",
                       column);
      }
      indices->push_back(i);
    } while (c.NextItem());
  }
  c.SkipBlanks();
  c.Expect(',');
  c.SkipBlanks();
  const size_t values_column = c.Column();
  c.Expect('[');
  features->assign(static_cast<size_t>(size), 0.0f);
  size_t k = 0;
  c.SkipBlanks();
  if (!c.Accept(']')) {
    do {
      const float v = c.Number(allow_nan);
      if (k < indices->size()) (*features)[static_cast<size_t>((*indices)[k])] = v;
      ++k;
    } while (c.NextItem());
  }
  if (k != indices->size()) {
    throw RowError("expected as many values as indices, got " + Indices(indices->size()) + " and " +
                       std::to_string(k) + (k == 1 ? " value" : " values"),
                   values_column);
  }
  c.SkipBlanks();
  c.Expect(')');
}

// Parses "<BASE64>", base64 of little-endian float32 values (what sparktorch's Spark layer
// writes instead of decimal text), into *values.
void ParseFloat32(Cursor& c, bool allow_nan, std::vector<float>* values) {
  c.Expect('<');
  const size_t column = c.Column();
  const void* close =
      std::memchr(c.position(), '>', static_cast<size_t>(c.end() - c.position()));
  if (close == nullptr) c.Fail("base64 float32 values and \">\"");
  const std::string_view text(c.position(),
                              static_cast<size_t>(static_cast<const char*>(close) - c.position()));
  const std::optional<size_t> bytes = Base64DecodedSize(text);
  if (!bytes) {
    throw RowError("invalid base64: " + std::to_string(text.size()) +
                       " characters, not a multiple of 4 or badly padded",
                   column);
  }
  if (*bytes % 4 != 0 || *bytes == 0) {
    throw RowError("invalid float32 data: " + std::to_string(*bytes) +
                       " bytes, not a positive multiple of 4",
                   column);
  }
  values->resize(*bytes / 4);
  if (std::optional<size_t> bad = Base64Decode(text, reinterpret_cast<char*>(values->data()))) {
    throw RowError("invalid base64: unexpected " + DescribeByteForMessage(text[*bad]),
                   column + *bad);
  }
  for (float& v : *values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    bits = __builtin_bswap32(bits);
    std::memcpy(&v, &bits, 4);
#endif
    if (!allow_nan && (bits & 0x7f800000u) == 0x7f800000u) {
      const size_t i = static_cast<size_t>(&v - values->data());
      throw RowError(std::string("expected a finite number, got ") +
                         (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf") + " in feature " +
                         std::to_string(i),
                     column + 4 * i * 8 / 6);  // the character holding its first bit
    }
  }
  c.Skip(text.size());
  c.Expect('>');
}

}  // namespace

VectorParser::VectorParser(const RowFormat& format)
    : num_features_(format.num_features), label_(format.label), allow_nan_(format.allow_nan) {}

void VectorParser::Parse(std::string_view line, Row* row) {
  Cursor c(line);
  c.SkipBlanks();
  if (c.AtEnd()) throw RowError("empty line", 0);
  row->id.clear();
  row->label.clear();

  const bool wrapped =
      label_ != LabelPresence::kNone && c.Peek() == '(' && IsLabeledPoint(c.position(), c.end());
  if (wrapped) {
    c.Expect('(');
    c.SkipBlanks();
  }
  bool has_label = false;
  if (label_ != LabelPresence::kNone) {
    if (wrapped) {
      has_label = true;
    } else if (c.Peek() == '<') {
      has_label = false;  // float32 features; a label is never written so
    } else if (c.Peek() == '[' || c.Peek() == '(') {
      // A vector, dense or sparse: the label when more follows it.
      const char* after = c.Peek() == '[' ? AfterList(c.position(), c.end())
                                          : AfterSparse(c.position(), c.end());
      has_label = after != nullptr && SkipBlanks(after, c.end()) != c.end();
    } else {
      has_label = true;  // a number
    }
    if (!has_label && label_ == LabelPresence::kRequired) {
      throw RowError("expected a label and a vector, got only a vector", 0);
    }
  }
  if (has_label) {
    if (c.Peek() == '[') {
      const size_t column = c.Column();
      ParseDenseList(c, allow_nan_, &row->label);
      if (row->label.empty()) throw RowError("expected a label, got an empty vector", column);
    } else if (c.Peek() == '(') {
      // A sparse label, as Spark's cast(vector as string) prints it: its size is the label's.
      ParseSparse(c, 0, allow_nan_, &indices_, &row->label);
    } else {
      row->label.assign(1, c.Number(allow_nan_));
    }
    c.SkipBlanks();
    c.Accept(',');
    c.SkipBlanks();
  }

  int64_t size;
  if (c.Peek() == '[') {
    ParseDenseList(c, allow_nan_, &row->features);
    size = static_cast<int64_t>(row->features.size());
    if (num_features_ > 0 && size != num_features_) {
      throw RowError("expected " + Features(num_features_) + ", got " + std::to_string(size), 0);
    }
    if (size == 0) throw RowError("expected at least 1 feature, got 0", 0);
  } else if (c.Peek() == '(') {
    ParseSparse(c, num_features_, allow_nan_, &indices_, &row->features);
    size = static_cast<int64_t>(row->features.size());
  } else if (c.Peek() == '<') {
    const size_t column = c.Column();
    ParseFloat32(c, allow_nan_, &row->features);
    size = static_cast<int64_t>(row->features.size());
    if (num_features_ > 0 && size != num_features_) {
      throw RowError("expected " + Features(num_features_) + ", got " + std::to_string(size),
                     column);
    }
  } else {
    c.Fail("a vector ([...] or (size,[...],[...]))");
  }
  c.SkipBlanks();
  if (wrapped) {
    c.Expect(')');
    c.SkipBlanks();
  }
  if (!c.AtEnd()) c.Fail("the end of the line");
  num_features_ = size;
}

}  // namespace sparktorch
