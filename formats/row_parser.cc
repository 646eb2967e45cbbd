#include "formats/row_parser.h"

#include <string>

#include "formats/compact_parser.h"
#include "formats/csv_parser.h"
#include "formats/error.h"
#include "formats/float32_records.h"
#include "formats/jsonl_parser.h"
#include "formats/libsvm_parser.h"
#include "formats/vector_parser.h"

namespace sparktorch {

std::unique_ptr<RowParser> MakeRowParser(const RowFormat& format) {
  if (format.num_features < 0) {
    throw UsageError("the number of features must be positive, got " +
                     std::to_string(format.num_features));
  }
  switch (format.kind) {
    case RowFormatKind::kCsv:
      return std::make_unique<CsvParser>(format);
    case RowFormatKind::kLibsvm:
      return std::make_unique<LibsvmParser>(format);
    case RowFormatKind::kVector:
      return std::make_unique<VectorParser>(format);
    case RowFormatKind::kJsonl:
      return std::make_unique<JsonlParser>(format);
    case RowFormatKind::kCompact:
      return std::make_unique<CompactParser>(format);
    case RowFormatKind::kFloat32:
      return std::make_unique<Float32Parser>(format);
    case RowFormatKind::kParquet:
      throw UsageError("parquet is not a line format: it has no row parser");
  }
  throw UsageError("unknown row format");
}

}  // namespace sparktorch
