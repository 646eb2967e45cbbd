#include "formats/parquet/parquet_rows.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "formats/error.h"
#include "formats/parquet/parquet_file.h"

namespace sparktorch {
namespace parquet {
namespace {

using nlohmann::json;

// Fixtures written by Spark 2.4.4 (tests/formats/data/parquet/README.md).
std::string Fixture(const std::string& name) {
  return std::string(SPARKTORCH_TEST_DATA) + "/parquet/" + name;
}

std::vector<json> Expected(const std::string& name) {
  std::ifstream in(Fixture(name + ".expected.jsonl"));
  std::vector<json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
  return rows;
}

// A cell of the expected rows as the float32 values a Row holds.
std::vector<float> Values(const json& cell) {
  const json& values = cell.is_object() ? cell.at("dense") : cell;
  std::vector<float> out;
  if (values.is_array()) {
    for (const json& v : values) out.push_back(v.get<float>());
  } else {
    out.push_back(values.get<float>());
  }
  return out;
}

RowFormat Format(const std::string& features, const std::string& label = "label",
                 const std::string& id = "") {
  RowFormat f;
  f.kind = RowFormatKind::kParquet;
  f.features_field = features;
  f.label_field = label;
  f.id_field = id;
  return f;
}

std::vector<Row> ReadAll(ParquetRowReader& reader) {
  std::vector<Row> rows;
  Row row;
  while (reader.Next(&row)) rows.push_back(row);
  return rows;
}

// The message of the InputError that `f` throws; "" when it throws none.
template <typename F>
std::string InputErrorOf(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void ExpectVectorRows(const std::string& name) {
  ParquetRowReader reader(Fixture(name + ".parquet"), Format("features", "label", "id"), 0);
  std::vector<Row> rows = ReadAll(reader);
  std::vector<json> expected = Expected(name);
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i + 1));
    EXPECT_EQ(rows[i].features, Values(expected[i]["features"]));
    EXPECT_EQ(rows[i].label, Values(expected[i]["label"]));
    EXPECT_EQ(rows[i].id, expected[i]["id"].get<std::string>());
  }
  EXPECT_EQ(reader.num_features(), 6);
}

TEST(ParquetRowReader, ReadsSparksVectorsDenseAndSparseAcrossRowGroupsAndPages) {
  ParquetFile file(Fixture("vectors_snappy.parquet"));
  EXPECT_EQ(file.metadata().row_groups.size(), 3u);
  EXPECT_EQ(file.num_rows(), 330);
  ExpectVectorRows("vectors_snappy");
}

TEST(ParquetRowReader, ReadsPagesWhereTheDictionaryGaveWayToPlainValues) {
  ExpectVectorRows("vectors_plain_fallback");
}

TEST(ParquetRowReader, ReadsZstdPagesOfAnotherWriter) {
  // parquet-wasm (the Rust parquet crate): ZSTD pages, 3 row groups of several pages
  // (tests/formats/data/parquet/README.md).
  ParquetRowReader reader(Fixture("zstd_rust.parquet"), Format("x,e", "label", "id"), 0);
  std::vector<Row> rows = ReadAll(reader);
  std::vector<json> expected = Expected("zstd_rust");
  ASSERT_EQ(rows.size(), 60u);
  ASSERT_EQ(expected.size(), 60u);
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i + 1));
    std::vector<float> features = Values(expected[i]["x"]);
    for (float v : Values(expected[i]["e"])) features.push_back(v);
    EXPECT_EQ(rows[i].features, features);
    EXPECT_EQ(rows[i].label, Values(expected[i]["label"]));
    EXPECT_EQ(rows[i].id, expected[i]["id"].get<std::string>());
  }
}

TEST(ParquetRowReader, JoinsNumericAndArrayColumnsInTheOrderNamed) {
  ParquetRowReader reader(Fixture("numeric_gzip.parquet"), Format("e,a,b,c,d", "label", "name"),
                          0);
  std::vector<Row> rows = ReadAll(reader);
  std::vector<json> expected = Expected("numeric_gzip");
  ASSERT_EQ(rows.size(), 100u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& e = expected[i];
    std::vector<float> want = Values(e["e"]);
    for (const char* column : {"a", "b", "c", "d"}) want.push_back(e[column].get<float>());
    EXPECT_EQ(rows[i].features, want) << "row " << i + 1;
    EXPECT_EQ(rows[i].label, std::vector<float>{e["label"].get<float>()});
    EXPECT_EQ(rows[i].id, e["name"].get<std::string>());
  }
}

TEST(ParquetRowReader, AnIntegerIdColumnIsItsDecimalText) {
  ParquetRowReader reader(Fixture("numeric_gzip.parquet"), Format("a", "label", "c"), 0);
  std::vector<Row> rows = ReadAll(reader);
  std::vector<json> expected = Expected("numeric_gzip");
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].id, std::to_string(expected[i]["c"].get<int64_t>()));
  }
}

TEST(ParquetRowReader, AVectorLabelIsItsValues) {
  ParquetRowReader reader(Fixture("one_dense_vector_label.parquet"), Format("features"), 0);
  std::vector<Row> rows = ReadAll(reader);
  std::vector<json> expected = Expected("one_dense_vector_label");
  ASSERT_EQ(rows.size(), 5u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].label, Values(expected[i]["label"]));
    EXPECT_EQ(rows[i].features, Values(expected[i]["features"]));
  }
}

TEST(ParquetRowReader, ReadsARangeOfRowsThatStartsAndEndsInsideRowGroups) {
  // Row groups of 156, 160 and 14 rows: rows 150..319 span the first two and end in the second.
  ParquetRowReader reader(Fixture("vectors_snappy.parquet"), Format("features", "label", "id"), 0,
                          150, 320);
  std::vector<Row> rows = ReadAll(reader);
  std::vector<json> expected = Expected("vectors_snappy");
  ASSERT_EQ(rows.size(), 170u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].id, expected[150 + i]["id"].get<std::string>());
    EXPECT_EQ(rows[i].features, Values(expected[150 + i]["features"]));
  }
  EXPECT_EQ(reader.row_number(), 320);
}

// split_rows_v1.parquet (make_split_rows_fixture.py): pyarrow's DATA_PAGE pages of at most 6
// levels, most of which start inside a row of `e` (7 values a row) and of `f` (3 a row, row 4's
// second null).
size_t LeafOf(const ParquetFile& file, const std::string& path) {
  for (size_t i = 0; i < file.leaves().size(); ++i) {
    if (file.leaves()[i].path == path) return i;
  }
  ADD_FAILURE() << "no leaf " << path;
  return 0;
}

TEST(ParquetFile, OpenColumnDecodesAChunkAPageAtATimeAsReadColumnDoesWhole) {
  ParquetFile file(Fixture("split_rows_v1.parquet"));
  const size_t leaf = LeafOf(file, "e.list.element");
  ColumnValues whole;
  file.ReadColumn(0, leaf, ValueKind::kNumber, &whole);
  ASSERT_EQ(whole.entries, 350);
  std::unique_ptr<ColumnPages> pages = file.OpenColumn(0, leaf, ValueKind::kNumber);
  EXPECT_EQ(pages->rows(), 50);
  ColumnValues joined, page;
  int pages_read = 0, inside_a_row = 0;
  for (;;) {
    page = ColumnValues();
    if (!pages->Next(&page)) break;
    ++pages_read;
    ASSERT_GT(page.entries, 0);
    EXPECT_LE(page.entries, 6);
    inside_a_row += page.rep[0] != 0;
    joined.rep.insert(joined.rep.end(), page.rep.begin(), page.rep.end());
    joined.def.insert(joined.def.end(), page.def.begin(), page.def.end());
    joined.numbers.insert(joined.numbers.end(), page.numbers.begin(), page.numbers.end());
    joined.entries += page.entries;
  }
  EXPECT_EQ(pages_read, 59);  // 350 entries, 6 a page
  EXPECT_EQ(inside_a_row, 50);
  EXPECT_EQ(joined.entries, whole.entries);
  EXPECT_EQ(joined.rep, whole.rep);
  EXPECT_EQ(joined.def, whole.def);
  EXPECT_EQ(joined.numbers, whole.numbers);
  EXPECT_FALSE(pages->Next(&page));
}

TEST(ParquetRowReader, ReadsRowsThatPagesSplitAndGoesOnAfterABadOne) {
  ParquetRowReader reader(Fixture("split_rows_v1.parquet"), Format("e,f"), 0);
  Row row;
  std::vector<std::string> errors;
  int64_t good = 0;
  for (;;) {
    try {
      if (!reader.Next(&row)) break;
    } catch (const RowError& e) {
      errors.push_back("row " + std::to_string(reader.row_number()) + ": " + e.what());
      continue;
    }
    const int64_t r = reader.row_number() - 1;
    std::vector<float> expected;
    for (int k = 0; k < 7; ++k) expected.push_back(static_cast<float>(r * 10 + k));
    for (int k = 0; k < 3; ++k) expected.push_back(-static_cast<float>(r * 10 + k));
    ASSERT_EQ(row.features, expected) << "row " << r + 1;
    ASSERT_EQ(row.label, std::vector<float>{static_cast<float>(r)});
    ++good;
  }
  EXPECT_EQ(good, 49);
  EXPECT_EQ(errors, std::vector<std::string>{"row 5: column f holds a null"});
  // A range that starts and ends inside split rows' pages.
  ParquetRowReader range(Fixture("split_rows_v1.parquet"), Format("e"), 0, 17, 33);
  std::vector<Row> rows = ReadAll(range);
  ASSERT_EQ(rows.size(), 16u);
  EXPECT_EQ(rows.front().features[0], 170.0f);
  EXPECT_EQ(rows.back().features[6], 326.0f);
}

TEST(ParquetRowReader, ANullCellIsABadRowNamedByItsColumnAndReadingGoesOn) {
  ParquetRowReader reader(Fixture("nulls.parquet"), Format("features,x"), 0);
  Row row;
  std::vector<std::string> errors;
  std::vector<int64_t> good;
  for (;;) {
    try {
      if (!reader.Next(&row)) break;
      good.push_back(reader.row_number());
    } catch (const RowError& e) {
      errors.push_back("row " + std::to_string(reader.row_number()) + ": " + e.what());
    }
  }
  EXPECT_EQ(errors, (std::vector<std::string>{"row 4: column features is null",
                                              "row 6: column label is null",
                                              "row 8: column x is null"}));
  EXPECT_EQ(good, (std::vector<int64_t>{1, 2, 3, 5, 7, 9, 10}));
}

TEST(ParquetRowReader, ANullLabelIsNoLabelWhereLabelsAreOptional) {
  RowFormat format = Format("x");
  format.label = LabelPresence::kOptional;
  ParquetRowReader reader(Fixture("nulls.parquet"), format, 0);
  Row row;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(reader.Next(&row));
  EXPECT_EQ(reader.row_number(), 6);
  EXPECT_TRUE(row.label.empty());
  EXPECT_EQ(row.features, std::vector<float>{0.625f});
}

TEST(ParquetRowReader, WithoutALabelColumnOptionalLabelsAreAbsent) {
  RowFormat format = Format("a", "no_such_column");
  format.label = LabelPresence::kOptional;
  ParquetRowReader reader(Fixture("numeric_gzip.parquet"), format, 0);
  Row row;
  ASSERT_TRUE(reader.Next(&row));
  EXPECT_TRUE(row.label.empty());
}

// Every row of `reader`: "row N: MESSAGE" for a bad row, "[allow-nan]" after it when the error
// names that setting, and the good rows in *good.
std::vector<std::string> BadRows(ParquetRowReader& reader, std::vector<Row>* good) {
  std::vector<std::string> errors;
  Row row;
  for (;;) {
    try {
      if (!reader.Next(&row)) break;
      good->push_back(row);
    } catch (const RowError& e) {
      errors.push_back("row " + std::to_string(reader.row_number()) + ": " + e.what() +
                       (e.setting() == RowSetting::kAllowNan ? " [allow-nan]" : ""));
    }
  }
  return errors;
}

TEST(ParquetRowReader, NonFiniteValuesInSparseAndDenseVectorsAndLabelsAreBadRows) {
  ParquetRowReader reader(Fixture("nonfinite.parquet"), Format("features"), 0);
  std::vector<Row> good;
  EXPECT_EQ(BadRows(reader, &good),
            (std::vector<std::string>{
                "row 1: expected finite features, got nan [allow-nan]",
                "row 2: expected finite features, got inf [allow-nan]",
                "row 3: expected finite label, got nan [allow-nan]",
                "row 4: expected finite features, got -inf [allow-nan]"}));
  ASSERT_EQ(good.size(), 1u);
  EXPECT_EQ(good[0].features, (std::vector<float>{0.5f, 0.0f, 0.0f, 1.0f}));
  EXPECT_EQ(reader.num_features(), 4);
}

TEST(ParquetRowReader, AllowNanKeepsTheValuesWhereTheyStand) {
  RowFormat format = Format("features");
  format.allow_nan = true;
  ParquetRowReader reader(Fixture("nonfinite.parquet"), format, 0);
  std::vector<Row> good;
  EXPECT_TRUE(BadRows(reader, &good).empty());
  ASSERT_EQ(good.size(), 5u);
  EXPECT_EQ(good[0].features[0], 0.0f);
  EXPECT_TRUE(std::isnan(good[0].features[1]));  // the sparse vector's one value, at index 1
  EXPECT_EQ(good[0].features[3], 0.0f);
  EXPECT_EQ(good[1].features[1], INFINITY);
  EXPECT_TRUE(std::isnan(good[2].label[0]));
  EXPECT_EQ(good[3].features, (std::vector<float>{-INFINITY, 0.0f, 0.0f, 2.0f}));
}

TEST(ParquetRowReader, AWrongNumberOfFeaturesIsABadRow) {
  ParquetRowReader reader(Fixture("vectors_snappy.parquet"), Format("features"), 7);
  Row row;
  try {
    reader.Next(&row);
    FAIL() << "no error";
  } catch (const RowError& e) {
    EXPECT_STREQ(e.what(), "expected 7 features, got 6");
  }
}

TEST(ParquetRowReader, RefusesAMissingColumnListingTheFilesColumns) {
  const std::string path = Fixture("vectors_snappy.parquet");
  EXPECT_EQ(InputErrorOf([&] { ParquetRowReader(path, Format("pixels"), 0); }),
            path + ": no features column pixels; the columns are label, features, id");
  EXPECT_EQ(InputErrorOf([&] { ParquetRowReader(path, Format("features", "y"), 0); }),
            path + ": no label column y; the columns are label, features, id");
  // The setting that named the column, for the message's flag (core/jobs/failure.h).
  try {
    ParquetRowReader(path, Format("features", "label", "key"), 0);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.setting(), RowSetting::kIdField);
    EXPECT_EQ(e.what(), path + ": no id column key; the columns are label, features, id");
  }
}

TEST(ParquetRowReader, RefusesAStringColumnAsFeatures) {
  const std::string path = Fixture("vectors_snappy.parquet");
  EXPECT_EQ(InputErrorOf([&] { ParquetRowReader(path, Format("id"), 0); }),
            path + ": features column id holds strings or bytes, not numbers, an array of "
                   "numbers or a Spark ML vector");
}

TEST(ParquetRowReader, RefusesADecimalColumnRatherThanReadItsUnscaledIntegers) {
  const std::string path = Fixture("decimals.parquet");
  EXPECT_EQ(InputErrorOf([&] { ParquetRowReader(path, Format("price"), 0); }),
            path + ": features column price holds decimals, which sparktorch does not read: "
                   "cast the column to double before writing it");
}

TEST(ParquetRowReader, ReadsParquetMrsV2PagesOfDeltaEncodedIntegers) {
  // parquet-mr's v2 writer without dictionaries: the label, the vector's type, size and
  // indices are DELTA_BINARY_PACKED (tests/formats/data/parquet/README.md).
  const std::string path = Fixture("delta_v2.parquet");
  ParquetFile file(path);
  EXPECT_EQ(file.metadata().row_groups.at(0).columns.at(0).encodings,
            std::vector<Encoding>{Encoding::kDeltaBinaryPacked});
  ParquetRowReader reader(path, Format("features"), 0);
  EXPECT_NO_THROW(reader.CheckColumns());
  std::vector<Row> rows = ReadAll(reader);
  std::vector<json> expected = Expected("delta_v2");
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i + 1));
    EXPECT_EQ(rows[i].features, Values(expected[i]["features"]));
    EXPECT_EQ(rows[i].label, Values(expected[i]["label"]));
  }
}

// The values of the flat column `name` of fixture `file`, every row group's, as ParquetFile
// reads them: NaN for a null.
std::vector<float> ColumnOf(const std::string& file, const std::string& name) {
  ParquetFile f(Fixture(file));
  const Field& field = f.fields().at(static_cast<size_t>(f.FindField(name)));
  const Leaf& leaf = f.leaves().at(field.leaves.at(0));
  std::vector<float> out;
  ColumnValues values;
  for (size_t g = 0; g < f.metadata().row_groups.size(); ++g) {
    f.ReadColumn(g, field.leaves.at(0), ValueKind::kNumber, &values);
    size_t v = 0;
    for (int64_t i = 0; i < values.entries; ++i) {
      const bool present = values.def.empty() || values.def[static_cast<size_t>(i)] == leaf.max_def;
      out.push_back(present ? values.numbers.at(v++) : NAN);
    }
  }
  return out;
}

std::vector<float> ExpectedColumn(const std::string& name, const std::string& column) {
  std::vector<float> out;
  for (const json& row : Expected(name)) {
    const json& cell = row.at(column);
    out.push_back(cell.is_null() ? NAN : cell.is_boolean() ? static_cast<float>(cell.get<bool>())
                                                           : cell.get<float>());
  }
  return out;
}

void ExpectSameValues(const std::vector<float>& got, const std::vector<float>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "row " << i + 1 << ": " << got[i];
    } else {
      EXPECT_EQ(got[i], expected[i]) << "row " << i + 1;
    }
  }
}

TEST(ParquetFile, ReadsDeltaBinaryPackedByteStreamSplitAndRleBooleansInV1AndV2Pages) {
  // pyarrow's pages (make_encodings_fixtures.py): nulls, 64-bit extremes whose deltas wrap.
  for (const std::string name : {"encodings_v1", "encodings_v2"}) {
    for (const char* column : {"label", "i64", "i32s", "i64s", "u32", "u64", "f32", "f64", "b"}) {
      SCOPED_TRACE(name + " " + column);
      ExpectSameValues(ColumnOf(name + ".parquet", column), ExpectedColumn(name, column));
    }
  }
}

TEST(ParquetRowReader, ReadsVectorsAndArraysWhoseLeavesAreDeltaOrSplitEncoded) {
  for (const std::string name : {"encodings_v1", "encodings_v2"}) {
    SCOPED_TRACE(name);
    // features: indices DELTA_BINARY_PACKED, values BYTE_STREAM_SPLIT; label DELTA_BINARY_PACKED.
    ParquetRowReader reader(Fixture(name + ".parquet"), Format("features", "label", "label"), 0);
    EXPECT_NO_THROW(reader.CheckColumns());
    std::vector<Row> rows = ReadAll(reader);
    std::vector<json> expected = Expected(name);
    ASSERT_EQ(rows.size(), expected.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      SCOPED_TRACE("row " + std::to_string(i + 1));
      EXPECT_EQ(rows[i].features, Values(expected[i]["features"]));
      EXPECT_EQ(rows[i].label, Values(expected[i]["label"]));
      EXPECT_EQ(rows[i].id, std::to_string(expected[i]["label"].get<int>()));
    }
    // e: list<double> of BYTE_STREAM_SPLIT elements, 0 to 3 a row; those of 3 are read.
    ParquetRowReader arrays(Fixture(name + ".parquet"), Format("e", "label"), 3);
    Row row;
    int read = 0;
    for (const json& want : expected) {
      try {
        ASSERT_TRUE(arrays.Next(&row));
      } catch (const RowError&) {
        EXPECT_NE(want["e"].size(), 3u);
        continue;
      }
      EXPECT_EQ(row.features, Values(want["e"]));
      ++read;
    }
    EXPECT_EQ(read, 75);
  }
}

TEST(ParquetRowReader, ReadsUnsignedIntegersAsUnsignedNumbersAndIds) {
  // u64 holds INT64's extremes plus 2^63: 0 and 2^64 - 1 as stored bits -2^63 and 2^63 - 1.
  std::vector<float> got = ColumnOf("encodings_v2.parquet", "u64");
  EXPECT_EQ(got.at(0), 0.0f);
  EXPECT_EQ(got.at(1), 18446744073709551615.0f);
  ParquetRowReader reader(Fixture("encodings_v2.parquet"), Format("f64", "label", "u64"), 0);
  Row row;
  ASSERT_TRUE(reader.Next(&row));
  EXPECT_EQ(row.id, "0");
  ASSERT_TRUE(reader.Next(&row));
  EXPECT_EQ(row.id, "18446744073709551615");
}

TEST(ParquetRowReader, RefusesAnEncodingItDoesNotReadFromTheFooterBeforeAnyPage) {
  const std::string path = Fixture("encodings_v1.parquet");
  ParquetRowReader reader(path, Format("f64", "label", "id"), 0);
  const std::string why =
      path + ": row group 1, column id: encoded as DELTA_BYTE_ARRAY, which sparktorch does not "
             "read for BYTE_ARRAY values (it reads PLAIN and dictionary encodings, "
             "DELTA_BINARY_PACKED for INT32 and INT64, BYTE_STREAM_SPLIT for INT32, INT64, FLOAT "
             "and DOUBLE, and RLE for BOOLEAN)";
  EXPECT_EQ(InputErrorOf([&] { reader.CheckColumns(); }), why);
  EXPECT_EQ(InputErrorOf([&] {
              Row row;
              reader.Next(&row);
            }),
            why);
}

// Files of apache/parquet-testing that the reader once got wrong (README.md).
TEST(ParquetFile, ReadsV2PagesWhateverTheirLevelSectionsHold) {
  // RLE booleans in a DATA_PAGE_V2 whose repetition levels take 2 bytes, though the column
  // has none.
  std::vector<float> got = ColumnOf("parquet_testing_rle_boolean_encoding.parquet",
                                    "datatype_boolean");
  ASSERT_EQ(got.size(), 68u);
  EXPECT_EQ(std::vector<float>(got.begin(), got.begin() + 2), (std::vector<float>{1, 0}));
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_EQ(got[67], 1.0f);
  // A v2 page of one null: no values, which are not to be decompressed.
  got = ColumnOf("parquet_testing_datapage_v2_empty_datapage.parquet", "value");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(std::isnan(got[0]));
  // A row group of no rows, whose chunks' offsets are 0.
  EXPECT_TRUE(ColumnOf("parquet_testing_column_chunk_key_value_metadata.parquet", "column1").empty());
}

TEST(ParquetFile, RefusesRepetitionLevelsThatStartInsideARow) {
  const std::string path = Fixture("parquet_testing_ARROW-GH-45185.parquet");
  ParquetFile file(path);
  ColumnValues values;
  EXPECT_EQ(InputErrorOf([&] { file.ReadColumn(0, 0, ValueKind::kNumber, &values); }),
            path + ": row group 1, column x.list.element: repetition levels that start inside a "
                   "row");
}

TEST(ParquetRowReader, NamesTheTypeOfALeafWhosePhysicalTypeIsNoParquetType) {
  const std::string path = Fixture("parquet_testing_PARQUET-1481.parquet");
  EXPECT_EQ(InputErrorOf([&] { ParquetRowReader(path, Format("Handle"), 0); }),
            path + ": features column Handle holds values of physical type -7, which is no "
                   "Parquet type (a corrupt schema), not numbers, an array of numbers or a Spark "
                   "ML vector");
}

TEST(ParquetRowReader, TheFixturesSparkWroteWithV1PassTheFootersCheck) {
  for (const char* name : {"vectors_snappy", "vectors_plain_fallback", "nulls", "nonfinite"}) {
    SCOPED_TRACE(name);
    ParquetRowReader reader(Fixture(std::string(name) + ".parquet"), Format("features"), 0);
    EXPECT_NO_THROW(reader.CheckColumns());
  }
  ParquetFile file(Fixture("vectors_snappy.parquet"));
  // parquet-mr lists BIT_PACKED for the levels of a required column, which it never writes so.
  EXPECT_EQ(file.metadata().row_groups.at(0).columns.at(0).encodings,
            (std::vector<Encoding>{Encoding::kPlainDictionary, Encoding::kBitPacked}));
}

TEST(ParquetRowReader, NamesTheColumnsItReadsAndTheirKinds) {
  ParquetRowReader reader(Fixture("numeric_gzip.parquet"), Format("e,a", "label", "name"), 0);
  std::vector<std::string> got;
  for (const auto& c : reader.columns()) got.push_back(c.role + " " + c.name + " " + c.kind);
  EXPECT_EQ(got, (std::vector<std::string>{"features e array", "features a number",
                                           "label label number", "id name text"}));
  ParquetRowReader vectors(Fixture("vectors_snappy.parquet"), Format("features", "label"), 0);
  EXPECT_EQ(vectors.columns().at(0).kind, "vector");
  EXPECT_EQ(vectors.columns().size(), 2u);
}

TEST(ParquetFile, RefusesAFileThatIsNotParquet) {
  const std::string path = Fixture("nulls.expected.jsonl");
  EXPECT_EQ(InputErrorOf([&] { ParquetFile file(path); }),
            path + ": not a Parquet file (no PAR1 at its start and end)");
}

// Writes the fixture `name` with `edit` applied to its bytes to a temporary file.
std::string EditedCopy(const std::string& name, void (*edit)(std::string*)) {
  std::ifstream in(Fixture(name), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  edit(&bytes);
  std::string path = ::testing::TempDir() + "/edited_" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(ParquetFile, RefusesACorruptFooterLength) {
  std::string path = EditedCopy("nulls.parquet", [](std::string* b) {
    (*b)[b->size() - 5] = '\x7f';  // the footer length's high byte
  });
  EXPECT_NE(InputErrorOf([&] { ParquetFile file(path); }).find(": corrupt Parquet footer length "),
            std::string::npos);
  std::remove(path.c_str());
}

TEST(ParquetRowReader, CorruptPagesThrowInputErrorNamingTheColumn) {
  // Overwrites the column data (after the magic, before the footer) with bytes no page header
  // or Snappy block can hold; every row must end in an InputError, never a crash.
  std::string path = EditedCopy("vectors_snappy.parquet", [](std::string* b) {
    for (size_t i = 4; i < 4000; ++i) (*b)[i] = static_cast<char>(0xff);
  });
  std::string error = InputErrorOf([&] {
    ParquetRowReader reader(path, Format("features", "label", "id"), 0);
    Row row;
    while (reader.Next(&row)) {
    }
  });
  EXPECT_EQ(error.rfind(path + ": row group 1, column ", 0), 0u) << error;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace parquet
}  // namespace sparktorch
