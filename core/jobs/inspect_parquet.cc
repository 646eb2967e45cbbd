#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/data/parquet_source.h"
#include "core/jobs/failure.h"
#include "core/jobs/inspect_job.h"
#include "core/jobs/row_plan.h"
#include "formats/error.h"
#include "formats/parquet/metadata.h"
#include "formats/parquet/parquet_rows.h"
#include "formats/row.h"

namespace sparktorch {
namespace {

// Rows read at most, all bad, while looking for the first good row's number of features.
constexpr int kRowsToLearnFrom = 1000;

}  // namespace

nlohmann::json InspectParquet(const RowOptions& rows_given) {
  RowFormat format = ApplyOverrides(RowFormat(), FormatOverrides(rows_given));
  format.kind = RowFormatKind::kParquet;
  const std::vector<std::string> files = ParquetSource::Files(rows_given.inputs);
  nlohmann::json described = nlohmann::json::array();
  nlohmann::json columns = nlohmann::json::array();
  int64_t rows = 0;
  for (const std::string& path : files) {
    parquet::ParquetRowReader reader(path, format, format.num_features);
    reader.CheckColumns();
    if (columns.empty()) {
      for (const auto& c : reader.columns()) {
        columns.push_back({{"role", c.role}, {"name", c.name}, {"kind", c.kind}});
      }
    }
    std::set<std::string> codecs;
    for (const parquet::RowGroup& group : reader.file().metadata().row_groups) {
      for (const parquet::ColumnChunk& chunk : group.columns) {
        codecs.insert(parquet::CodecName(chunk.codec));
      }
    }
    described.push_back({{"path", path},
                         {"rows", reader.file().num_rows()},
                         {"row_groups", reader.file().metadata().row_groups.size()},
                         {"codecs", codecs}});
    rows += reader.file().num_rows();
  }
  // The first good row says how many features a row has.
  ParquetSource source(files, format, 0, 1);
  Row row;
  int64_t num_features = 0;
  nlohmann::json first_bad_row;
  for (int read = 0; read < kRowsToLearnFrom; ++read) {
    try {
      if (!source.Next(&row)) break;
      num_features = static_cast<int64_t>(row.features.size());
      break;
    } catch (const RowError& e) {
      if (first_bad_row.is_null()) first_bad_row = source.where() + ": " + MessageOf(e);
    }
  }
  return {{"files", described},
          {"rows", rows},
          {"columns", columns},
          {"num_features", num_features},
          {"first_bad_row", first_bad_row}};
}

}  // namespace sparktorch
