#include "formats/libsvm_parser.h"

#include <string>
#include <vector>

#include "formats/error.h"
#include "formats/number_parse.h"

namespace sparktorch {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

const char* TokenEnd(const char* p, const char* end) {
  while (p != end && !IsSpace(*p)) ++p;
  return p;
}

std::string_view Token(const char* p, const char* end) {
  return std::string_view(p, static_cast<size_t>(TokenEnd(p, end) - p));
}

}  // namespace

LibsvmParser::LibsvmParser(const RowFormat& format)
    : num_features_(format.num_features),
      label_(format.label),
      first_index_(format.zero_based ? 0 : 1),
      allow_nan_(format.allow_nan) {
  if (num_features_ <= 0) {
    throw UsageError("libsvm needs the number of features", RowSetting::kNumFeatures);
  }
}

void LibsvmParser::Parse(std::string_view line, Row* row) {
  const char* const begin = line.data();
  const char* const end = begin + line.size();
  auto column_of = [begin](const char* p) { return static_cast<size_t>(p - begin) + 1; };
  const char* p = begin;
  while (p != end && IsSpace(*p)) ++p;
  if (p == end || *p == '#') throw RowError("empty line", 0);

  row->id.clear();
  row->label.clear();
  const std::string_view first = Token(p, end);
  const bool first_is_pair = first.find(':') != std::string_view::npos;
  if (label_ == LabelPresence::kRequired ||
      (label_ == LabelPresence::kOptional && !first_is_pair)) {
    if (first_is_pair) {
      throw RowError("expected a label, got " + QuoteForMessage(first), column_of(p));
    }
    row->label.push_back(ParseFieldValue(first, column_of(p), allow_nan_));
    p += first.size();
  }

  std::vector<float>& f = row->features;
  f.assign(static_cast<size_t>(num_features_), 0.0f);
  int64_t previous = -1;  // the last index, as written
  for (;;) {
    while (p != end && IsSpace(*p)) ++p;
    if (p == end || *p == '#') break;
    const char* const pair = p;
    // 18 digits cannot overflow; a longer index is reported as not an INDEX:VALUE pair.
    int64_t index = 0;
    while (p != end && static_cast<unsigned>(*p - '0') <= 9 && p - pair < 18) {
      index = index * 10 + (*p - '0');
      ++p;
    }
    if (p == pair || p == end || *p != ':') {
      throw RowError("expected INDEX:VALUE, got " + QuoteForMessage(Token(pair, end)),
                     column_of(pair));
    }
    const char* const value = ++p;
    float v;
    p = ParsePlainDecimal(value, end, &v);
    if (p == nullptr || (p != end && !IsSpace(*p))) {
      const std::string_view text = Token(value, end);
      v = ParseFieldValue(text, column_of(value), allow_nan_);
      p = value + text.size();
    }
    if (index < first_index_ || index - first_index_ >= num_features_) {
      throw RowError("index " + std::to_string(index) + " out of range " +
                         std::to_string(first_index_) + ".." +
                         std::to_string(first_index_ + num_features_ - 1),
                     column_of(pair));
    }
    if (index <= previous) {
      throw RowError("index " + std::to_string(index) + " after " + std::to_string(previous) +
                         ": indices must be ascending",
                     column_of(pair));
    }
    f[static_cast<size_t>(index - first_index_)] = v;
    previous = index;
  }
}

}  // namespace sparktorch
