#ifndef SPARKTORCH_FORMATS_PARQUET_LEAF_CURSOR_H_
#define SPARKTORCH_FORMATS_PARQUET_LEAF_CURSOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/parquet/column_chunk.h"

namespace sparktorch {
namespace parquet {

// A leaf column of a Parquet file being read row by row, from one row group's decoded chunk, and
// what it gave for the current row (its values, or its text, and whether it was null).
struct LeafCursor {
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

  // Moves past one row's entries, keeping its values when `keep`. Throws InputError when the
  // chunk has fewer entries than its row group has rows.
  void Take(bool keep);
};

}  // namespace parquet
}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PARQUET_LEAF_CURSOR_H_
