#include "formats/parquet/leaf_cursor.h"

#include "formats/error.h"
#include "formats/parquet/parquet_file.h"

namespace sparktorch {
namespace parquet {
namespace {

template <typename T>
void DropFront(std::vector<T>* v, size_t n) {
  if (n >= v->size()) {
    v->clear();
  } else if (n > 0) {
    v->erase(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(n));
  }
}

}  // namespace

LeafCursor::LeafCursor() = default;
LeafCursor::~LeafCursor() = default;
LeafCursor::LeafCursor(LeafCursor&&) noexcept = default;
LeafCursor& LeafCursor::operator=(LeafCursor&&) noexcept = default;

void LeafCursor::Load(std::unique_ptr<ColumnPages> chunk) {
  // clear() keeps the vectors' memory, a page's worth, for the next group's pages.
  values.def.clear();
  values.rep.clear();
  values.numbers.clear();
  values.integers.clear();
  values.texts.clear();
  values.entries = 0;
  level = 0;
  value = 0;
  rows_ = 0;
  chunk_ = std::move(chunk);
  size_t row_level = 0;
  if (Refill(&row_level) && max_rep > 0 && values.rep[0] != 0) {
    throw InputError(chunk_->where() + "repetition levels that start inside a row");
  }
}

bool LeafCursor::Refill(size_t* row_level) {
  DropFront(&values.def, *row_level);
  DropFront(&values.rep, *row_level);
  DropFront(&values.numbers, value);
  DropFront(&values.integers, value);
  DropFront(&values.texts, value);
  values.entries -= static_cast<int64_t>(*row_level);
  level -= *row_level;
  value = 0;
  *row_level = 0;
  while (level >= static_cast<size_t>(values.entries)) {
    if (!chunk_ || !chunk_->Next(&values)) return false;
  }
  return true;
}

void LeafCursor::Take(bool keep) {
  null_element = false;
  size_t row_level = level;
  if (level >= static_cast<size_t>(values.entries) && !Refill(&row_level)) {
    const std::string where = chunk_ ? chunk_->where() : std::string();
    throw InputError(where + "a column chunk of " + std::to_string(rows_) +
                     " rows in a row group of " + std::to_string(chunk_ ? chunk_->rows() : 0));
  }
  def = DefAt(level);
  // A row's present values are consecutive in the values: count them, then copy.
  size_t present = 0;
  for (;;) {
    int d = DefAt(level);
    if (d == max_def) {
      ++present;
    } else if (max_rep > 0 && d >= element_def) {
      null_element = true;
    }
    ++level;
    if (max_rep == 0) break;
    // The row may go on in the next page (a DATA_PAGE, unlike a DATA_PAGE_V2, can split one).
    if (level >= static_cast<size_t>(values.entries) && !Refill(&row_level)) break;
    if (values.rep[level] == 0) break;
  }
  if (keep) {
    if (kind == ValueKind::kNumber) {
      const float* from = values.numbers.data() + value;
      numbers.assign(from, from + present);
    } else if (kind == ValueKind::kInteger) {
      const int32_t* from = values.integers.data() + value;
      integers.assign(from, from + present);
    } else {
      text = present > 0 ? values.texts[value] : std::string();
    }
  }
  value += present;
  ++rows_;
}

void LeafCursor::Finish() {
  size_t row_level = level;
  if (level < static_cast<size_t>(values.entries) || Refill(&row_level)) {
    throw InputError(chunk_->where() + "a column chunk of more rows than its row group's " +
                     std::to_string(chunk_->rows()));
  }
}

}  // namespace parquet
}  // namespace sparktorch
