#include "formats/csv_parser.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include "formats/error.h"
#include "formats/number_parse.h"

namespace sparktorch {
namespace {

std::string Count(int64_t n, const char* thing) {
  std::string text = std::to_string(n) + " " + thing;
  if (n != 1) text += "s";
  return text;
}

// "label column 3 is" or "label columns 3..4 are", for columns numbered as the user gave them.
std::string LabelColumnsAre(int64_t first, int64_t count) {
  if (count == 1) return "label column " + std::to_string(first) + " is";
  return "label columns " + std::to_string(first) + ".." + std::to_string(first + count - 1) +
         " are";
}

// "label column 3 is the id column 3" reads badly; "label columns 2..3 include ...".
std::string LabelColumnsIncludeId(int64_t first, int64_t count, int64_t id_col) {
  if (count == 1) return "label column " + std::to_string(first) + " is the id column";
  return "label columns " + std::to_string(first) + ".." + std::to_string(first + count - 1) +
         " include the id column " + std::to_string(id_col);
}

// "784 features + 1 label + 1 id"
std::string Parts(const std::string& features, int64_t labels, int64_t ids) {
  std::string text = features;
  if (labels > 0) text += " + " + Count(labels, "label");
  if (ids > 0) text += " + 1 id";
  return text;
}

}  // namespace

ColumnLayout::ColumnLayout(const RowFormat& format, const char* format_name, const char* unit,
                           std::optional<int64_t> id_col)
    : num_features_(format.num_features),
      label_(format.label),
      label_col_(format.label_col),
      label_count_(format.label == LabelPresence::kNone ? 0 : format.label_count),
      id_columns_(id_col ? 1 : 0),
      unit_(unit) {
  if (label_ == LabelPresence::kNone) {
    CheckIdColumn(id_col);
    return;
  }
  if (label_count_ < 1) {
    throw UsageError("the label count must be at least 1, got " + std::to_string(label_count_));
  }
  if (label_ == LabelPresence::kOptional && num_features_ == 0) {
    throw UsageError(
        std::string(format_name) + " rows with an optional label need the number of features",
        RowSetting::kNumFeatures);
  }
  if (label_col_ < 0 && label_col_ + label_count_ > 0) {
    throw UsageError(Count(label_count_, "label column") + " starting at column " +
                     std::to_string(label_col_) + " run past the last column");
  }
  if (num_features_ > 0) {
    const int64_t columns = num_features_ + label_count_ + id_columns_;
    const int64_t first = label_col_ >= 0 ? label_col_ : columns + label_col_;
    if (first < 0 || first + label_count_ > columns) {
      throw UsageError(LabelColumnsAre(label_col_, label_count_) + " outside rows of " +
                       std::to_string(columns) + " columns");
    }
  }
  CheckIdColumn(id_col);
}

void ColumnLayout::CheckIdColumn(std::optional<int64_t> id_col) const {
  if (!id_col) return;
  // Every column count a row may have: with and without its label.
  std::vector<int64_t> totals;
  if (num_features_ > 0) {
    if (label_ != LabelPresence::kRequired) totals.push_back(num_features_ + 1);
    if (label_ != LabelPresence::kNone) totals.push_back(num_features_ + label_count_ + 1);
  }
  for (int64_t columns : totals) {
    const int64_t id = *id_col >= 0 ? *id_col : columns + *id_col;
    if (id < 0 || id >= columns) {
      throw UsageError("id column " + std::to_string(*id_col) + " is outside rows of " +
                       std::to_string(columns) + " columns");
    }
  }
  if (label_ == LabelPresence::kNone) return;
  // Columns of the same sign compare as they are; otherwise compare them in each row shape.
  bool overlap = false;
  if ((*id_col >= 0) == (label_col_ >= 0)) {
    overlap = *id_col >= label_col_ && *id_col < label_col_ + label_count_;
  } else if (num_features_ > 0) {
    const int64_t columns = num_features_ + label_count_ + 1;
    const int64_t id = *id_col >= 0 ? *id_col : columns + *id_col;
    const int64_t first = label_col_ >= 0 ? label_col_ : columns + label_col_;
    overlap = id >= first && id < first + label_count_;
  }
  if (overlap) throw UsageError(LabelColumnsIncludeId(label_col_, label_count_, *id_col));
}

bool ColumnLayout::CheckCount(int64_t columns) const {
  if (num_features_ > 0) {
    const int64_t without_label = num_features_ + id_columns_;
    if (label_ != LabelPresence::kNone && columns == without_label + label_count_) return true;
    if (label_ != LabelPresence::kRequired && columns == without_label) return false;
    ThrowWrongCount(columns);
  }
  const bool has_label = label_ == LabelPresence::kRequired;
  if (columns - id_columns_ - (has_label ? label_count_ : 0) < 1) ThrowWrongCount(columns);
  return has_label;
}

void ColumnLayout::ThrowWrongCount(int64_t columns) const {
  const std::string got = ", got " + std::to_string(columns);
  const int64_t labels = label_ == LabelPresence::kNone ? 0 : label_count_;
  if (num_features_ == 0) {
    if (labels == 0 && id_columns_ == 0) throw RowError("expected at least 1 feature" + got, 0);
    throw RowError("expected at least " + std::to_string(1 + labels + id_columns_) + " " + unit_ +
                       " (" + Parts("at least 1 feature", labels, id_columns_) + ")" + got,
                   0);
  }
  const std::string features = Count(num_features_, "feature");
  const int64_t without_label = num_features_ + id_columns_;
  switch (label_) {
    case LabelPresence::kNone:
      if (id_columns_ == 0) throw RowError("expected " + features + got, 0);
      throw RowError("expected " + std::to_string(without_label) + " " + unit_ + " (" +
                         Parts(features, 0, id_columns_) + ")" + got,
                     0);
    case LabelPresence::kRequired:
      throw RowError("expected " + std::to_string(without_label + labels) + " " + unit_ + " (" +
                         Parts(features, labels, id_columns_) + ")" + got,
                     0);
    case LabelPresence::kOptional:
      break;
  }
  throw RowError("expected " + std::to_string(without_label) + " " + unit_ + " (" +
                     Parts(features, 0, id_columns_) + ") or " +
                     std::to_string(without_label + labels) + " (" +
                     Parts(features, labels, id_columns_) + ")" + got,
                 0);
}

void ColumnLayout::Split(int64_t columns, int64_t id_column, Row* row) {
  const bool has_label = CheckCount(columns);
  if (has_label) {
    const int64_t first = label_col_ >= 0 ? label_col_ : columns + label_col_;
    if (first < 0 || first + label_count_ > columns) {
      throw RowError(LabelColumnsAre(label_col_, label_count_) + " outside a row of " +
                         std::to_string(columns) + " " + unit_,
                     0);
    }
    if (id_column >= first && id_column < first + label_count_) {
      throw RowError(LabelColumnsIncludeId(first, label_count_, id_column), 0);
    }
    // Positions in row->features, which lacks the id column.
    const int64_t offset = first - (id_column >= 0 && id_column < first ? 1 : 0);
    std::vector<float>& f = row->features;
    row->label.assign(f.begin() + offset, f.begin() + offset + label_count_);
    f.erase(f.begin() + offset, f.begin() + offset + label_count_);
  } else {
    row->label.clear();
  }
  num_features_ = static_cast<int64_t>(row->features.size());
}

CsvParser::CsvParser(const RowFormat& format)
    : layout_(format, "csv", "columns", format.id_col),
      delimiter_(format.delimiter),
      blank_a_(' '),
      blank_b_('\t'),
      id_col_(format.id_col),
      allow_nan_(format.allow_nan) {
  const char d = delimiter_;
  if (std::isalnum(static_cast<unsigned char>(d)) || std::strchr("+-.\"\r\n", d) != nullptr) {
    // strchr also finds the terminating '\0'.
    throw UsageError("csv delimiter " + DescribeByteForMessage(d) +
                     " cannot be used: it can be part of a number, a quote or a line end");
  }
  if (d == ' ') blank_a_ = '\t';
  if (d == '\t') blank_b_ = ' ';
}

const char* CsvParser::FindDelimiter(const char* p, const char* end) const {
  const void* found = std::memchr(p, delimiter_, static_cast<size_t>(end - p));
  return found != nullptr ? static_cast<const char*>(found) : end;
}

const char* CsvParser::TrimEnd(const char* begin, const char* end) const {
  while (end != begin && IsBlank(end[-1])) --end;
  return end;
}

const char* CsvParser::SkipBlanks(const char* begin, const char* end) const {
  while (begin != end && IsBlank(*begin)) ++begin;
  return begin;
}

float CsvParser::ParseField(const char* field, const char* field_end,
                            const char* line_begin) const {
  field = SkipBlanks(field, field_end);
  field_end = TrimEnd(field, field_end);
  const size_t column = static_cast<size_t>(field - line_begin) + 1;
  if (field != field_end && *field == '"') {
    throw RowError("expected a number, got a quoted field (csv quoting is not supported)", column);
  }
  return ParseFieldValue(std::string_view(field, static_cast<size_t>(field_end - field)), column,
                         allow_nan_);
}

void CsvParser::Parse(std::string_view line, Row* row) {
  const char* const begin = line.data();
  const char* const end = begin + line.size();
  if (SkipBlanks(begin, end) == end) throw RowError("empty line", 0);

  row->id.clear();
  int64_t id_column = -1;
  if (id_col_) {
    id_column = *id_col_;
    if (id_column < 0) {
      const int64_t columns = std::count(begin, end, delimiter_) + 1;
      id_column += columns;
      if (id_column < 0) {
        layout_.CheckCount(columns);
        throw RowError("id column " + std::to_string(*id_col_) + " is outside a row of " +
                           std::to_string(columns) + " columns",
                       0);
      }
    }
  }

  // Write straight into the row's buffer, grown as needed and cut to size at the end.
  std::vector<float>& f = row->features;
  if (f.size() < f.capacity() || f.size() < 16) f.resize(std::max<size_t>(f.capacity(), 16));
  float* out = f.data();
  size_t capacity = f.size();
  size_t n = 0;
  const char delimiter = delimiter_;
  int64_t column = 0;
  const char* field = begin;
  for (;;) {
    const char* next;  // the delimiter after the field, or end
    if (column != id_column) {
      if (n == capacity) {
        f.resize(2 * n);
        out = f.data();
        capacity = f.size();
      }
      // A lone "0" is the most common field of real data (image backgrounds, one-hot and
      // sparse columns), and comes in runs that the branch predictor learns: taking it apart
      // from the general case lets the next field's start be known at once instead of after
      // the number's end is computed, which is what bounds this loop.
      if (end - field >= 2 && field[0] == '0' && field[1] == delimiter) {
        out[n++] = 0.0f;
        ++column;
        field += 2;
        continue;
      }
      // The common case, a plain decimal and then the delimiter, costs one pass over its bytes.
      next = ParsePlainDecimal(field, end, &out[n]);
      if (next == nullptr || (next != end && *next != delimiter)) {
        next = FindDelimiter(field, end);
        out[n] = ParseField(field, next, begin);
      }
      ++n;
    } else {
      next = FindDelimiter(field, end);
      const char* id = SkipBlanks(field, next);
      row->id.assign(id, static_cast<size_t>(TrimEnd(id, next) - id));
    }
    ++column;
    if (next == end) break;
    field = next + 1;
  }
  f.resize(n);
  if (id_column >= column) {
    layout_.CheckCount(column);
    throw RowError("id column " + std::to_string(*id_col_) + " is outside a row of " +
                       std::to_string(column) + " columns",
                   0);
  }
  layout_.Split(column, id_column, row);
}

}  // namespace sparktorch
