#include "formats/row_format_overrides.h"

namespace sparktorch {
namespace {

template <typename T>
void Take(const std::optional<T>& value, T* field) {
  if (value) *field = *value;
}

}  // namespace

RowFormat ApplyOverrides(RowFormat base, const RowFormatOverrides& o) {
  Take(o.kind, &base.kind);
  Take(o.num_features, &base.num_features);
  Take(o.label, &base.label);
  Take(o.label_col, &base.label_col);
  Take(o.label_count, &base.label_count);
  if (o.id_col) base.id_col = *o.id_col;
  Take(o.delimiter, &base.delimiter);
  Take(o.header, &base.header);
  Take(o.zero_based, &base.zero_based);
  Take(o.features_field, &base.features_field);
  Take(o.label_field, &base.label_field);
  Take(o.id_field, &base.id_field);
  Take(o.allow_nan, &base.allow_nan);
  return base;
}

}  // namespace sparktorch
