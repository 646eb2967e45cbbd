#ifndef SPARKTORCH_CORE_JOBS_INSPECT_JOB_H_
#define SPARKTORCH_CORE_JOBS_INSPECT_JOB_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/jobs/row_options.h"

namespace sparktorch {

// What `sparktorch inspect` shows of a model file:
//   {"model": PATH, "parameters": N (trainable values),
//    "tensors": [{"name": "0.weight", "kind": "parameter"|"buffer", "shape": [...], "count": N}],
//    "manifest": {...} or null for a TorchScript model sparktorch did not train}
// Throws ModelError for a file that is not a TorchScript model.
nlohmann::json InspectModel(const std::string& model_path);

// What `sparktorch inspect --format parquet --input ...` shows of Parquet inputs (rows.inputs:
// files or directories of part files) read as `rows` say (features, label and id fields), from the
// files' footers and their first good row:
//   {"files": [{"path": P, "rows": N, "row_groups": G, "codecs": ["SNAPPY"]}], "rows": N,
//    "columns": [{"role": "features"|"label"|"id", "name": C, "kind": "vector"|"array"|
//                 "number"|"text"}],
//    "num_features": F (0: no good row among the first ones read),
//    "first_bad_row": "FILE: row N: why" for a bad row before the first good one, or null}
// Throws InputError, as training would before its first row, when a file cannot be read: not
// Parquet, a column missing or of a kind sparktorch cannot use, or a column chunk compressed or
// encoded in a way it does not read (checked in every row group); UsageError for stdin.
nlohmann::json InspectParquet(const RowOptions& rows);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_INSPECT_JOB_H_
