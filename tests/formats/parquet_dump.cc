// parquet_dump: what sparktorch's Parquet reader makes of a file, column by column, for the
// conformance test (parquet_conformance.py) to hold against another reader.
//
//   parquet_dump FILE...    one JSON object a line, for each row group of each leaf column:
//     {"file", "row_group" (from 0), "leaf" (its index in the schema's leaves, from 0), "column"
//      (its dotted path), "type" (its physical type), "codec" (its chunk's), "rows": [...]}
//       for a column read as numbers: one entry a row, null, a number, or (a leaf inside one
//       list) a list of numbers and nulls; "NaN", "Infinity" and "-Infinity" as strings;
//     {"file", "row_group", "leaf", "column", "type", "codec", "reason", "refused": MESSAGE} for
//       one refused, where
//       MESSAGE starts as the reader's do ("FILE: row group G, column C: ", G from 1) and
//       "reason" is one of codec, encoding (with "encoding": the first one refused), type,
//       decimal, nested (lists in lists) or corrupt (the pages could not be decoded);
//     {"file", "row_group": null, "column": null, "reason": "file", "refused": MESSAGE} when the
//       file cannot be opened as Parquet at all, and nothing else for it.
//   parquet_dump --supported
//     {"codecs": [...], "encodings": {"INT32": [...], ...}}: what this build reads.
//
// It reads every numeric leaf (BOOLEAN, INT32, INT64, FLOAT, DOUBLE) at most one list deep, as
// the row reader reads numbers, arrays of numbers and Spark ML vectors, with the same decoder
// (ParquetFile::ReadColumn). Exit status 0 unless the arguments are wrong; a refusal is output.

#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/error.h"
#include "formats/parquet/column_chunk.h"
#include "formats/parquet/decompress.h"
#include "formats/parquet/metadata.h"
#include "formats/parquet/parquet_file.h"

namespace sparktorch {
namespace parquet {
namespace {

std::string Quote(const std::string& s) { return nlohmann::json(s).dump(); }

void AppendNumber(float v, std::string* out) {
  if (std::isnan(v)) {
    *out += "\"NaN\"";
  } else if (std::isinf(v)) {
    *out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    *out += buf;
  }
}

bool IsNumeric(PhysicalType type) {
  return type == PhysicalType::kBoolean || type == PhysicalType::kInt32 ||
         type == PhysicalType::kInt64 || type == PhysicalType::kFloat ||
         type == PhysicalType::kDouble;
}

std::string Head(const std::string& file, size_t group, size_t index, const Leaf& leaf,
                 const ColumnChunk& meta) {
  return "{\"file\":" + Quote(file) + ",\"row_group\":" + std::to_string(group) +
         ",\"leaf\":" + std::to_string(index) + ",\"column\":" + Quote(leaf.path) +
         ",\"type\":" + Quote(TypeName(leaf.type)) + ",\"codec\":" + Quote(CodecName(meta.codec));
}

void Refuse(const std::string& head, const std::string& reason, const std::string& message,
            const std::string& extra = "") {
  std::printf("%s,\"reason\":\"%s\"%s,\"refused\":%s}\n", head.c_str(), reason.c_str(),
              extra.c_str(), Quote(message).c_str());
}

// The rows of one chunk as JSON: Dremel's levels turned back into values, nulls and lists.
std::string Rows(const Leaf& leaf, const ColumnValues& v) {
  auto def_at = [&](size_t i) { return v.def.empty() ? leaf.max_def : int{v.def[i]}; };
  std::string out = "[";
  size_t value = 0;
  const size_t entries = static_cast<size_t>(v.entries);
  if (leaf.max_rep == 0) {
    for (size_t i = 0; i < entries; ++i) {
      if (i > 0) out += ',';
      if (def_at(i) == leaf.max_def) {
        AppendNumber(v.numbers.at(value++), &out);
      } else {
        out += "null";
      }
    }
    return out + "]";
  }
  // The repeated node's level: an entry at it or above is an element; one below it, but at its
  // parent's level, an empty list; lower still, a null (the list or a group above it).
  int list_def = 0;
  for (size_t k = 0; k < leaf.node_def.size(); ++k) {
    if (leaf.node_repetition[k] == Repetition::kRepeated) list_def = leaf.node_def[k];
  }
  for (size_t i = 0; i < entries;) {
    if (i > 0) out += ',';
    const int first = def_at(i);
    if (first < list_def - 1) {
      out += "null";
      ++i;
      continue;
    }
    out += '[';
    bool any = false;
    do {
      const int d = def_at(i);
      if (d >= list_def) {
        if (any) out += ',';
        any = true;
        if (d == leaf.max_def) {
          AppendNumber(v.numbers.at(value++), &out);
        } else {
          out += "null";
        }
      }
      ++i;
    } while (i < entries && v.rep[i] != 0);
    out += ']';
  }
  return out + "]";
}

void DumpChunk(ParquetFile& file, size_t group, size_t index, ColumnValues* values) {
  const Leaf& leaf = file.leaves()[index];
  const ColumnChunk& meta = file.metadata().row_groups[group].columns[index];
  const std::string head = Head(file.path(), group, index, leaf, meta);
  const std::string where = file.Where(group, index);
  if (!IsNumeric(leaf.type)) {
    Refuse(head, "type", where + "holds " + TypeName(leaf.type) + " values, not numbers");
    return;
  }
  if (leaf.decimal) {
    Refuse(head, "decimal", where + "holds decimals, which sparktorch does not read");
    return;
  }
  if (leaf.max_rep > 1) {
    Refuse(head, "nested", where + "holds lists in lists, which sparktorch does not read");
    return;
  }
  try {
    file.CheckColumn(group, index);
  } catch (const InputError& e) {
    if (!CodecSupported(meta.codec)) {
      Refuse(head, "codec", e.what());
      return;
    }
    std::string encoding;
    for (Encoding en : meta.encodings) {
      if (en != Encoding::kRle && en != Encoding::kBitPacked &&
          !ValueEncodingSupported(en, leaf.type) && encoding.empty()) {
        encoding = EncodingName(en);
      }
    }
    Refuse(head, "encoding", e.what(), ",\"encoding\":" + Quote(encoding));
    return;
  }
  try {
    file.ReadColumn(group, index, ValueKind::kNumber, values);
  } catch (const InputError& e) {
    Refuse(head, "corrupt", e.what());
    return;
  }
  std::printf("%s,\"rows\":%s}\n", head.c_str(), Rows(leaf, *values).c_str());
}

void Dump(const std::string& path) {
  std::unique_ptr<ParquetFile> file;
  try {
    file = std::make_unique<ParquetFile>(path);
  } catch (const InputError& e) {
    std::printf("{\"file\":%s,\"row_group\":null,\"column\":null,\"reason\":\"file\",\"refused\":%s}\n",
                Quote(path).c_str(), Quote(e.what()).c_str());
    return;
  }
  ColumnValues values;
  for (size_t g = 0; g < file->metadata().row_groups.size(); ++g) {
    for (size_t leaf = 0; leaf < file->leaves().size(); ++leaf) DumpChunk(*file, g, leaf, &values);
  }
}

void Supported() {
  nlohmann::json codecs = nlohmann::json::array();
  for (int c = 0; c <= static_cast<int>(Codec::kLz4Raw); ++c) {
    if (CodecSupported(static_cast<Codec>(c))) codecs.push_back(CodecName(static_cast<Codec>(c)));
  }
  nlohmann::json encodings = nlohmann::json::object();
  for (int t = 0; t <= static_cast<int>(PhysicalType::kFixedLenByteArray); ++t) {
    nlohmann::json list = nlohmann::json::array();
    for (int e = 0; e <= static_cast<int>(Encoding::kByteStreamSplit); ++e) {
      if (ValueEncodingSupported(static_cast<Encoding>(e), static_cast<PhysicalType>(t))) {
        list.push_back(EncodingName(static_cast<Encoding>(e)));
      }
    }
    encodings[TypeName(static_cast<PhysicalType>(t))] = list;
  }
  std::printf("%s\n", nlohmann::json{{"codecs", codecs}, {"encodings", encodings}}.dump().c_str());
}

}  // namespace
}  // namespace parquet
}  // namespace sparktorch

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: parquet_dump FILE... | parquet_dump --supported\n");
    return 2;
  }
  if (std::string(argv[1]) == "--supported") {
    sparktorch::parquet::Supported();
    return 0;
  }
  for (int i = 1; i < argc; ++i) sparktorch::parquet::Dump(argv[i]);
  return 0;
}
