#ifndef SPARKTORCH_FORMATS_FLOAT32_RECORDS_H_
#define SPARKTORCH_FORMATS_FLOAT32_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/csv_parser.h"
#include "formats/error.h"
#include "formats/line_reader.h"
#include "formats/row.h"
#include "formats/row_format.h"
#include "formats/row_parser.h"

namespace sparktorch {

// The float32 row format: the compact format's numbers without base64 and without lines, for
// programs that hold rows as numbers (sparktorch-spark.jar's PipeRows, Spark Connect's Arrow
// batches). A stream of records, each starting with a little-endian uint32 head:
//   N < 2^31         a dense row: N little-endian IEEE-754 float32 values follow;
//   2^31 + K         a sparse row: a uint32 SIZE, K uint32 indices (ascending, below SIZE),
//                    then K float32 values; the other values are 0;
//   kFloat32NullRow  a null row (a bad row: --on-bad-row decides);
//   kFloat32GroupEnd the end of a group of rows (predict --group-end).
// A row's values are its label columns and features as label_col and label_count say, as in
// the compact and csv formats.
inline constexpr uint32_t kFloat32SparseBit = 0x80000000u;
inline constexpr uint32_t kFloat32NullRow = 0xFFFFFFFFu;
inline constexpr uint32_t kFloat32GroupEnd = 0xFFFFFFFEu;

// Splits a byte stream into float32 records without copying them where it can: the analogue of
// LineReader for this format. Not thread-safe.
class Float32RecordReader {
 public:
  enum class Status {
    kRecord,    // *record holds the next record, its head included
    kGroupEnd,  // a group end record
    kEnd,       // no more records
  };

  // `name` is how messages refer to the stream ("stdin"). A record of more than
  // `max_record_bytes` bytes is an InputError.
  Float32RecordReader(std::unique_ptr<ByteReader> in, std::string name, size_t max_record_bytes);

  // Reads the next record. *record stays valid until the next call. Throws InputError
  // ("stdin: record 7: ...") when the stream ends inside a record or a record's head announces
  // more than max_record_bytes: what follows cannot be told apart as records any more.
  Status Next(std::string_view* record);

  // The 1-based number of the record last returned, group ends included.
  size_t record_number() const { return record_number_; }
  const std::string& name() const { return name_; }

 private:
  // Makes `n` bytes from begin_ available in buf_; false when the stream ends first.
  bool Have(size_t n);
  [[noreturn]] void Fail(const std::string& what, RowSetting setting = RowSetting::kNone) const;

  std::unique_ptr<ByteReader> in_;
  std::string name_;
  size_t max_record_bytes_;
  std::vector<char> buf_;
  size_t begin_ = 0;  // first unread byte in buf_
  size_t end_ = 0;    // one past the last valid byte in buf_
  size_t record_number_ = 0;
};

// Turns one record of Float32RecordReader into a Row: the analogue of CompactParser. Throws
// RowError for a null row, a row of no values, a sparse row whose indices are out of order or
// out of range, the wrong number of values, (unless the format allows them) NaN and Inf
// values, and bytes that are not one whole record.
class Float32Parser : public RowParser {
 public:
  // Throws UsageError for a layout that cannot work (see ColumnLayout); the format has no id.
  explicit Float32Parser(const RowFormat& format);

  void Parse(std::string_view record, Row* row) override;
  int64_t num_features() const override { return layout_.num_features(); }

 private:
  ColumnLayout layout_;
  bool allow_nan_;
};

// The float32 record of `values` (dense), for writers and tests.
std::string Float32Record(const std::vector<float>& values);

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_FLOAT32_RECORDS_H_
