#ifndef SPARKTORCH_FORMATS_PARQUET_LEAF_CURSOR_H_
#define SPARKTORCH_FORMATS_PARQUET_LEAF_CURSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/parquet/column_chunk.h"

namespace sparktorch {
namespace parquet {

class ColumnPages;

// A leaf column of a Parquet file being read row by row, from one row group's chunk, a page at a
// time (ParquetFile::OpenColumn): `values` holds the entries of the page being read, and of the
// row that started on the page before. What it gave for the current row: its values, or its
// text, and whether it was null.
struct LeafCursor {
  LeafCursor();
  ~LeafCursor();
  LeafCursor(LeafCursor&&) noexcept;
  LeafCursor& operator=(LeafCursor&&) noexcept;

  size_t leaf = 0;
  ValueKind kind = ValueKind::kNumber;
  int max_def = 0;
  int max_rep = 0;
  int element_def = 0;  // the definition level of an element (present or null) of its list
  ColumnValues values;
  size_t level = 0;
  size_t value = 0;
  // The current row's: its first entry's definition level, whether a list held a null, its
  // values (kNumber, kInteger) or text (kText).
  int def = 0;
  bool null_element = false;
  std::vector<float> numbers;
  std::vector<int32_t> integers;
  std::string text;

  int DefAt(size_t i) const { return values.def.empty() ? max_def : values.def[i]; }

  // Starts on a row group's chunk.
  void Load(std::unique_ptr<ColumnPages> chunk);
  // Moves past one row's entries, keeping its values when `keep`. Throws InputError when the
  // chunk has fewer rows than its row group, or repetition levels that start inside a row.
  void Take(bool keep);
  // After the row group's last row: throws InputError unless the chunk has no more entries.
  void Finish();

 private:
  // Drops the entries before the current row's (from `*row_level`, and from `value`) and
  // appends the next page's; false at the chunk's end. Sets *row_level to 0.
  bool Refill(size_t* row_level);

  std::unique_ptr<ColumnPages> chunk_;
  int64_t rows_ = 0;  // rows taken from the chunk
};

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_LEAF_CURSOR_H_
