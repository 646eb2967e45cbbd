#ifndef SPARKTORCH_CORE_JOBS_ROW_PLAN_H_
#define SPARKTORCH_CORE_JOBS_ROW_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/data/row_source.h"
#include "core/jobs/row_options.h"
#include "formats/row_format_overrides.h"

namespace sparktorch {

// The Rows flags that were given, as overrides of a row format (the defaults', or a model
// manifest's). Throws UsageError for a malformed value (--label-col 3:1, --delimiter ab).
RowFormatOverrides FormatOverrides(const RowOptions& rows);

// The reader's options for rows read with the defaults' format and the given flags laid over it.
RowSourceOptions ReaderOptions(const RowOptions& rows);

BadRowPolicy BadRowPolicyOf(const RowOptions& rows);

// "1,28,28" as {1, 28, 28}; empty for an empty string. Throws UsageError naming `flag`.
std::vector<int64_t> ParseShape(const std::string& text, const char* flag);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_ROW_PLAN_H_
