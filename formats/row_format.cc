#include "formats/row_format.h"

namespace sparktorch {

std::optional<RowFormatKind> ParseRowFormatKind(std::string_view name) {
  if (name == "csv") return RowFormatKind::kCsv;
  if (name == "libsvm") return RowFormatKind::kLibsvm;
  if (name == "vector") return RowFormatKind::kVector;
  if (name == "jsonl") return RowFormatKind::kJsonl;
  if (name == "compact") return RowFormatKind::kCompact;
  if (name == "parquet") return RowFormatKind::kParquet;
  if (name == "float32") return RowFormatKind::kFloat32;
  return std::nullopt;
}

const char* RowFormatKindName(RowFormatKind kind) {
  switch (kind) {
    case RowFormatKind::kCsv:
      return "csv";
    case RowFormatKind::kLibsvm:
      return "libsvm";
    case RowFormatKind::kVector:
      return "vector";
    case RowFormatKind::kJsonl:
      return "jsonl";
    case RowFormatKind::kCompact:
      return "compact";
    case RowFormatKind::kParquet:
      return "parquet";
    case RowFormatKind::kFloat32:
      return "float32";
  }
  return "unknown";
}

}  // namespace sparktorch
