#include "formats/parquet/parquet_rows.h"

#include <cmath>
#include <string_view>

#include "formats/error.h"
#include "formats/parquet/leaf_cursor.h"

namespace sparktorch {
namespace parquet {
namespace {

// A Spark ML vector's size is an int; more features than this is a corrupt size.
constexpr int64_t kMaxVectorSize = int64_t{1} << 28;

std::string Features(int64_t n) { return n == 1 ? "1 feature" : std::to_string(n) + " features"; }

bool IsNumeric(PhysicalType type) {
  return type == PhysicalType::kInt32 || type == PhysicalType::kInt64 ||
         type == PhysicalType::kFloat || type == PhysicalType::kDouble ||
         type == PhysicalType::kBoolean;
}

std::vector<std::string> SplitNames(const std::string& names) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = names.find(',', start);
    std::string name = names.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!name.empty()) out.push_back(name);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

enum class Shape { kNumber, kArray, kVector, kText };

}  // namespace

struct SelectedColumn {
  std::string name;
  Shape shape = Shape::kNumber;
  // kVector: type, size, indices, values; the others: one leaf.
  std::vector<LeafCursor> leaves;
  int present_def = 0;  // the definition level at which the column's value is not null
};

namespace {

// What a leaf of physical type `type` holds, for a message that refuses it.
std::string Describe(PhysicalType type) {
  if (IsNumeric(type)) return "numbers";
  switch (type) {
    case PhysicalType::kByteArray: return "strings or bytes";
    case PhysicalType::kInt96: return "INT96 timestamps";
    case PhysicalType::kFixedLenByteArray: return "fixed-length bytes (decimals?)";
    default: return "values of " + TypeName(type) + ", which is no Parquet type (a corrupt schema)";
  }
}

// How messages name a column's role, and the setting that named the column.
const char* RoleText(ParquetRowReader::ColumnRole role) {
  switch (role) {
    case ParquetRowReader::ColumnRole::kLabel:
      return "label";
    case ParquetRowReader::ColumnRole::kId:
      return "id";
    case ParquetRowReader::ColumnRole::kFeatures:
      break;
  }
  return "features";
}

RowSetting RoleSetting(ParquetRowReader::ColumnRole role) {
  switch (role) {
    case ParquetRowReader::ColumnRole::kLabel:
      return RowSetting::kLabelField;
    case ParquetRowReader::ColumnRole::kId:
      return RowSetting::kIdField;
    case ParquetRowReader::ColumnRole::kFeatures:
      break;
  }
  return RowSetting::kFeaturesField;
}

}  // namespace

std::unique_ptr<SelectedColumn> ParquetRowReader::Select(const std::string& name,
                                                         ColumnRole column_role) {
  const std::string role = RoleText(column_role);
  const RowSetting setting = RoleSetting(column_role);
  int index = file_.FindField(name);
  if (index < 0) {
    std::string columns;
    for (const Field& f : file_.fields()) columns += (columns.empty() ? "" : ", ") + f.name;
    throw InputError(
        file_.path() + ": no " + role + " column " + name + "; the columns are " + columns,
        setting);
  }
  const Field& field = file_.fields()[static_cast<size_t>(index)];
  auto column = std::make_unique<SelectedColumn>();
  column->name = name;
  auto cursor = [&](size_t leaf, ValueKind kind) {
    const Leaf& l = file_.leaves()[leaf];
    LeafCursor c;
    c.leaf = leaf;
    c.kind = kind;
    c.max_def = l.max_def;
    c.max_rep = l.max_rep;
    for (size_t k = 0; k < l.node_def.size(); ++k) {
      if (l.node_repetition[k] == Repetition::kRepeated) c.element_def = l.node_def[k];
    }
    return c;
  };
  const bool is_id = column_role == ColumnRole::kId;
  for (size_t leaf : field.leaves) {
    if (file_.leaves()[leaf].decimal) {
      throw InputError(file_.path() + ": " + role + " column " + name +
                           " holds decimals, which sparktorch does not read: cast the column to "
                           "double before writing it",
                       setting);
    }
  }
  if (field.leaves.size() == 1) {
    const Leaf& l = file_.leaves()[field.leaves[0]];
    column->present_def = l.node_def[0];
    if (is_id && l.max_rep == 0 && l.node_def.size() == 1 &&
        (l.type == PhysicalType::kByteArray || l.type == PhysicalType::kInt32 ||
         l.type == PhysicalType::kInt64)) {
      column->shape = Shape::kText;
      column->leaves.push_back(cursor(field.leaves[0], ValueKind::kText));
      return column;
    }
    if (!is_id && IsNumeric(l.type) && l.max_rep == 0 && l.node_def.size() == 1) {
      column->shape = Shape::kNumber;
      column->leaves.push_back(cursor(field.leaves[0], ValueKind::kNumber));
      return column;
    }
    if (!is_id && IsNumeric(l.type) && l.max_rep == 1) {
      column->shape = Shape::kArray;
      column->leaves.push_back(cursor(field.leaves[0], ValueKind::kNumber));
      return column;
    }
    if (is_id) {
      throw InputError(file_.path() + ": " + role + " column " + name + " holds " +
                           (l.max_rep > 0 ? "lists" : Describe(l.type)) +
                           ", not strings or integers",
                       setting);
    }
    const std::string what = l.max_rep > 1                               ? "nested lists"
                             : l.max_rep == 0 && l.node_def.size() > 1 ? "a struct"
                                                                       : Describe(l.type);
    throw InputError(file_.path() + ": " + role + " column " + name + " holds " + what +
                         ", not numbers, an array of numbers or a Spark ML vector",
                     setting);
  }
  // A Spark ML vector (VectorUDT's sqlType): struct<type: tinyint, size: int,
  // indices: array<int>, values: array<double>>.
  static const char* const kParts[] = {"type", "size", "indices", "values"};
  std::vector<size_t> parts(4, SIZE_MAX);
  for (size_t leaf : field.leaves) {
    const std::string& path = file_.leaves()[leaf].path;
    for (size_t k = 0; k < 4; ++k) {
      std::string prefix = name + "." + kParts[k];
      if (path == prefix || path.rfind(prefix + ".", 0) == 0) parts[k] = leaf;
    }
  }
  bool vector = !is_id && field.leaves.size() == 4;
  for (size_t k = 0; vector && k < 4; ++k) {
    if (parts[k] == SIZE_MAX) {
      vector = false;
      break;
    }
    const Leaf& l = file_.leaves()[parts[k]];
    vector = l.type == (k == 3 ? PhysicalType::kDouble : PhysicalType::kInt32) &&
             l.max_rep == (k < 2 ? 0 : 1);
  }
  if (!vector) {
    throw InputError(file_.path() + ": " + role + " column " + name +
                         " is a struct but not a Spark ML vector (type, size, indices, values)",
                     setting);
  }
  column->shape = Shape::kVector;
  column->present_def = file_.leaves()[parts[0]].node_def[0];
  for (size_t k = 0; k < 4; ++k) {
    column->leaves.push_back(cursor(parts[k], k == 3 ? ValueKind::kNumber : ValueKind::kInteger));
  }
  return column;
}

ParquetRowReader::ParquetRowReader(const std::string& path, const RowFormat& format,
                                   int64_t num_features, int64_t first_row, int64_t end_row)
    : file_(path), format_(format), num_features_(num_features), end_row_(end_row) {
  std::vector<std::string> names = SplitNames(format.features_field);
  if (names.empty()) throw UsageError("no features column is named", RowSetting::kFeaturesField);
  for (const std::string& name : names) features_.push_back(Select(name, ColumnRole::kFeatures));
  for (const auto& f : features_) {
    if (f->shape == Shape::kText) throw InputError(path + ": column " + f->name + " is not numbers");
  }
  if (format.label != LabelPresence::kNone &&
      (format.label == LabelPresence::kRequired || file_.FindField(format.label_field) >= 0)) {
    label_ = Select(format.label_field, ColumnRole::kLabel);
  }
  if (!format.id_field.empty()) id_ = Select(format.id_field, ColumnRole::kId);
  row_ = std::max<int64_t>(first_row, 0) - 1;
}

ParquetRowReader::~ParquetRowReader() = default;

void ParquetRowReader::LoadRowGroup(size_t group) {
  auto load = [&](SelectedColumn& column) {
    for (LeafCursor& c : column.leaves) c.Load(file_.OpenColumn(group, c.leaf, c.kind));
  };
  for (auto& f : features_) load(*f);
  if (label_) load(*label_);
  if (id_) load(*id_);
  group_ = group;
  loaded_ = true;
}

void ParquetRowReader::CheckColumns() const {
  auto check = [&](const SelectedColumn& column) {
    for (size_t g = 0; g < file_.metadata().row_groups.size(); ++g) {
      for (const LeafCursor& c : column.leaves) file_.CheckColumn(g, c.leaf);
    }
  };
  for (const auto& f : features_) check(*f);
  if (label_) check(*label_);
  if (id_) check(*id_);
}

std::vector<ParquetRowReader::Column> ParquetRowReader::columns() const {
  auto describe = [](const char* role, const SelectedColumn& c) {
    switch (c.shape) {
      case Shape::kNumber: return Column{role, c.name, "number"};
      case Shape::kArray: return Column{role, c.name, "array"};
      case Shape::kVector: return Column{role, c.name, "vector"};
      case Shape::kText: break;
    }
    return Column{role, c.name, "text"};
  };
  std::vector<Column> out;
  for (const auto& f : features_) out.push_back(describe("features", *f));
  if (label_) out.push_back(describe("label", *label_));
  if (id_) out.push_back(describe("id", *id_));
  return out;
}

void ParquetRowReader::TakeRow(bool keep) {
  auto take = [&](SelectedColumn& column) {
    for (LeafCursor& c : column.leaves) c.Take(keep);
  };
  for (auto& f : features_) take(*f);
  if (label_) take(*label_);
  if (id_) take(*id_);
}

namespace {

[[noreturn]] void Null(const std::string& name) {
  throw RowError("column " + name + " is null", 0);
}

void CheckFinite(const std::vector<float>& values, const char* what) {
  for (float v : values) {
    if (!std::isfinite(v)) {
      throw RowError(std::string("expected finite ") + what + ", got " +
                         (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"),
                     0, RowSetting::kAllowNan);
    }
  }
}

// Appends the values of `column`'s current row to *out; throws RowError for a null or a
// malformed vector, for a sparse vector larger than `max_size` (0: no bound but the size a
// vector may have), and, unless `allow_nan`, for a value that is not finite (`what` names the
// values). The values are checked as stored, a sparse vector whole before it is densified, so
// that a bad row costs the values it holds, never its size, and the zeros a sparse vector
// gains are never scanned.
void AppendValues(const SelectedColumn& column, int64_t max_size, bool allow_nan,
                  const char* what, std::vector<float>* out) {
  const std::vector<LeafCursor>& leaves = column.leaves;
  if (leaves[0].def < column.present_def) Null(column.name);
  switch (column.shape) {
    case Shape::kNumber:
    case Shape::kArray:
      if (leaves[0].null_element) throw RowError("column " + column.name + " holds a null", 0);
      if (!allow_nan) CheckFinite(leaves[0].numbers, what);
      out->insert(out->end(), leaves[0].numbers.begin(), leaves[0].numbers.end());
      return;
    case Shape::kText:
      return;
    case Shape::kVector:
      break;
  }
  const LeafCursor& type = leaves[0];
  const LeafCursor& size = leaves[1];
  const LeafCursor& indices = leaves[2];
  const LeafCursor& values = leaves[3];
  if (type.integers.empty() || values.null_element || indices.null_element) {
    throw RowError("column " + column.name + " is not a valid Spark ML vector", 0);
  }
  if (!allow_nan) CheckFinite(values.numbers, what);
  if (type.integers[0] == 1) {  // dense
    out->insert(out->end(), values.numbers.begin(), values.numbers.end());
    return;
  }
  if (size.integers.empty() || size.integers[0] < 0 || size.integers[0] > kMaxVectorSize ||
      indices.integers.size() != values.numbers.size()) {
    throw RowError("column " + column.name + " is not a valid sparse Spark ML vector", 0);
  }
  const int64_t n = size.integers[0];
  if (max_size > 0 && n > max_size) {
    throw RowError("expected " + Features(max_size) + ", got a sparse vector of size " +
                       std::to_string(n),
                   0);
  }
  int64_t previous = -1;
  for (int32_t i : indices.integers) {
    if (i <= previous || i >= n) {
      throw RowError("column " + column.name + ": sparse vector index " + std::to_string(i) +
                         (i <= previous ? " not ascending"
                                        : " out of range for size " + std::to_string(n)),
                     0);
    }
    previous = i;
  }
  const size_t at = out->size();
  out->resize(at + static_cast<size_t>(n), 0.0f);
  for (size_t k = 0; k < indices.integers.size(); ++k) {
    (*out)[at + static_cast<size_t>(indices.integers[k])] = values.numbers[k];
  }
}

}  // namespace

bool ParquetRowReader::Next(Row* row) {
  const std::vector<RowGroup>& groups = file_.metadata().row_groups;
  const int64_t next = row_ + 1;
  if (next >= end_row_ || next >= file_.num_rows()) return false;
  while (!loaded_ || next >= group_end_) {
    // The group holding row `next`, and the rows before it there to pass over.
    size_t group = loaded_ ? group_ + 1 : 0;
    int64_t start = loaded_ ? group_end_ : 0;
    while (group < groups.size() && start + groups[group].num_rows <= next) {
      start += groups[group].num_rows;
      ++group;
    }
    if (group >= groups.size()) throw InputError(file_.path() + ": fewer rows than its footer says");
    LoadRowGroup(group);
    group_end_ = start + groups[group].num_rows;
    for (int64_t skip = start; skip < next; ++skip) TakeRow(false);
  }
  TakeRow(true);
  if (next + 1 == group_end_) {  // the group's last row: its chunks must end with it
    auto finish = [](SelectedColumn& column) {
      for (LeafCursor& c : column.leaves) c.Finish();
    };
    for (auto& f : features_) finish(*f);
    if (label_) finish(*label_);
    if (id_) finish(*id_);
  }
  row_ = next;
  row->Clear();
  for (auto& f : features_) {
    AppendValues(*f, num_features_, format_.allow_nan, "features", &row->features);
  }
  const int64_t n = static_cast<int64_t>(row->features.size());
  if (num_features_ > 0 && n != num_features_) {
    throw RowError("expected " + Features(num_features_) + ", got " + std::to_string(n), 0);
  }
  if (n == 0) throw RowError("expected at least 1 feature, got 0", 0);
  if (label_) {
    if (label_->leaves[0].def >= label_->present_def) {
      AppendValues(*label_, 0, format_.allow_nan, "label", &row->label);
    } else if (format_.label == LabelPresence::kRequired) {
      Null(label_->name);
    }
  }
  if (id_) {
    if (id_->leaves[0].def < id_->present_def) Null(id_->name);
    row->id = id_->leaves[0].text;
  }
  if (num_features_ == 0) num_features_ = n;
  return true;
}

}  // namespace parquet
}  // namespace sparktorch
