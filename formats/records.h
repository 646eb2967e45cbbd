#ifndef SPARKTORCH_FORMATS_RECORDS_H_
#define SPARKTORCH_FORMATS_RECORDS_H_

#include <cstddef>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparktorch {

// The record stream sparktorch writes on stdout: one tagged record per line, so that a Spark
// driver can split what `pipe` returns. Specified in sparktorch-formats(7), RECORDS:
//
//   P <TAB> VALUE                                  a prediction for one input row
//   P <TAB> ID <TAB> VALUE                         the same, for a row that carries an id
//   M <TAB> SEQ <TAB> COUNT <TAB> CRC <TAB> BASE64 model chunk SEQ (0-based) of COUNT
//   E <TAB> COUNT <TAB> BYTES <TAB> CRC            end of the model: chunks, bytes, CRC-32 of all
//   S <TAB> JSON                                   a summary, one JSON object
//
// CRC is zlib's CRC-32 (Python's zlib.crc32) as 8 lowercase hex digits. Every line, model chunks
// included, is at most kMaxRecordLineBytes long.

inline constexpr size_t kMaxRecordLineBytes = 1 << 20;
// Raw model bytes per chunk: its base64 plus the record's fields stays under 1 MiB.
inline constexpr size_t kModelChunkBytes = 786384;

// The M records and the E record of a model's bytes, in order, each passed to `line` with its
// '\n' (the view is valid during the call). RecordWriter::WriteModel writes them; the tracker's
// checkpoint lines carry them (sparktorch-formats(7), "Tracker protocol").
void ModelRecordLines(std::string_view model_bytes,
                      const std::function<void(std::string_view line)>& line);

// Writes records to a stream it does not own. Not thread-safe.
class RecordWriter {
 public:
  // `out_name` names the stream in error messages ("stdout").
  RecordWriter(std::FILE* out, std::string out_name);

  // `id` empty: the row has no id and the record has no id field. Neither may hold a tab or
  // a line break ('\n', '\r'), and the record must fit in kMaxRecordLineBytes: Error otherwise,
  // and nothing is written.
  //
  // Every Write* throws Error naming the stream when the stream refuses the bytes (errno's text).
  void WritePrediction(std::string_view id, std::string_view value);
  // Writes the model as M records followed by one E record.
  void WriteModel(std::string_view model_bytes);
  // `json` is one line of JSON (Error for a line break or a record over kMaxRecordLineBytes).
  void WriteSummary(std::string_view json);
  // Flushes the stream. Throws Error naming the stream when a write failed (a closed pipe).
  void Flush();

 private:
  void Put(std::string_view bytes);

  std::FILE* out_;
  std::string out_name_;
  std::string line_;  // reused buffer
};

// Reads a record stream line by line, verifying the model as it arrives. Not thread-safe.
class RecordReader {
 public:
  struct Prediction {
    std::string_view id;  // empty when the record had none
    std::string_view value;
  };

  // `name` names the stream in messages ("records.txt").
  explicit RecordReader(std::string name);

  // Takes the next line (without its newline). Returns the prediction when the line is one; its
  // views point into `line`. Throws ModelError "NAME:LINE: ..." for a line that is not a record
  // (unknown tag, wrong field count, bad number, longer than kMaxRecordLineBytes), a model chunk
  // out of sequence, a chunk whose CRC does not match, an E record that disagrees with the chunks,
  // a second model. After a throw the reader is spent.
  std::optional<Prediction> Feed(std::string_view line);

  // After the last line: the model's bytes, verified, or nullopt when the stream held none.
  // Throws ModelError saying what is wrong: chunks missing (which), the end record missing, the
  // size or the whole-model CRC not matching.
  std::optional<std::string> TakeModel();

  // The JSON of each S record, in order (one per rank that wrote one).
  const std::vector<std::string>& summaries() const { return summaries_; }

 private:
  // Throws ModelError "NAME:LINE: what" for the line last fed.
  [[noreturn]] void Fail(const std::string& what) const;
  // The fields of an M record and of an E record, after the tag.
  void FeedChunk(std::string_view seq, std::string_view count, std::string_view crc,
                 std::string_view base64);
  void FeedEnd(std::string_view count, std::string_view bytes, std::string_view crc);

  std::string name_;
  size_t line_number_ = 0;
  std::string model_;            // the verified chunks so far
  unsigned long model_crc_ = 0;  // CRC-32 of model_
  size_t chunks_expected_ = 0;   // COUNT of the model being read; 0 before the first chunk
  size_t chunks_seen_ = 0;
  bool model_ended_ = false;
  size_t end_line_ = 0;  // the line of the E record, once model_ended_
  std::vector<std::string> summaries_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_RECORDS_H_
