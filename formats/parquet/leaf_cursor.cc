#include "formats/parquet/leaf_cursor.h"

#include "formats/error.h"

namespace sparktorch {
namespace parquet {

void LeafCursor::Take(bool keep) {
  null_element = false;
  const size_t entries = static_cast<size_t>(values.entries);
  if (level >= entries) throw InputError("a column with fewer values than its row group's rows");
  def = DefAt(level);
  // A row's present values are consecutive in the chunk's values: count them, then copy.
  size_t present = 0;
  do {
    int d = DefAt(level);
    if (d == max_def) {
      ++present;
    } else if (max_rep > 0 && d >= element_def) {
      null_element = true;
    }
    ++level;
  } while (max_rep > 0 && level < entries && values.rep[level] != 0);
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
}

}  // namespace parquet
}  // namespace sparktorch
