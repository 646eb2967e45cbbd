#include "formats/manifest.h"

#include <gtest/gtest.h>

#include "formats/error.h"
#include "formats/row_format_overrides.h"

namespace sparktorch {
namespace {

using nlohmann::json;

Manifest Example() {
  Manifest m;
  m.sparktorch_version = "0.1.0";
  m.source = "spec";
  m.spec = {{"layers", json::array({{{"type", "relu"}}})}};
  m.input_shape = {1, 28, 28};
  m.output_shape = {10};
  m.row_format.kind = RowFormatKind::kCompact;
  m.row_format.num_features = 784;
  m.row_format.label_col = -1;
  m.row_format.label_count = 2;
  m.row_format.id_col = 3;
  m.row_format.delimiter = ';';
  m.row_format.header = true;
  m.label_kind = "class";
  m.num_classes = 10;
  m.prediction = "probabilities";
  m.loss = {{"type", "cross_entropy"}};
  m.optimizer = {{"type", "adam"}, {"lr", 0.001}};
  m.training = {{"epochs", 3}};
  m.metrics = {{"train_loss", 0.25}};
  return m;
}

TEST(Manifest, RoundTripsThroughJson) {
  const Manifest m = Example();
  const json j = ManifestToJson(m);
  const Manifest back = ManifestFromJson(json::parse(j.dump()));
  EXPECT_EQ(ManifestToJson(back), j);
  EXPECT_EQ(back.input_shape, (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(back.row_format.kind, RowFormatKind::kCompact);
  EXPECT_EQ(back.row_format.label_col, -1);
  EXPECT_EQ(back.row_format.label_count, 2);
  EXPECT_EQ(back.row_format.id_col, std::optional<int64_t>(3));
  EXPECT_EQ(back.row_format.delimiter, ';');
  EXPECT_TRUE(back.row_format.header);
  EXPECT_EQ(back.prediction, "probabilities");
}

TEST(Manifest, HistoryRoundTripsAndIsEmptyInAnOlderManifest) {
  Manifest m = Example();
  m.history = json::array({{{"epoch", 1}, {"train_loss", 0.5}}, {{"epoch", 2}, {"train_loss", 0.25}}});
  const Manifest back = ManifestFromJson(json::parse(ManifestToJson(m).dump()));
  EXPECT_EQ(back.history, m.history);

  json older = ManifestToJson(Example());
  older.erase("history");  // written before the field existed
  EXPECT_EQ(ManifestFromJson(older).history, json::array());
  EXPECT_EQ(ManifestToJson(Example())["history"], json::array());
}

TEST(Manifest, HistoryMustBeAnArray) {
  json j = ManifestToJson(Example());
  j["history"] = {{"epoch", 1}};
  try {
    ManifestFromJson(j);
    FAIL() << "no error";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "manifest: manifest.history has the wrong type (object)");
  }
}

TEST(Manifest, RefusesAnotherFormatVersion) {
  json j = ManifestToJson(Example());
  j["format_version"] = 2;
  try {
    ManifestFromJson(j);
    FAIL() << "no error";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "manifest: format_version 2 is not one this sparktorch reads (it reads 1)");
  }
}

TEST(Manifest, NamesAFieldOfTheWrongType) {
  json j = ManifestToJson(Example());
  j["input_shape"] = "784";
  try {
    ManifestFromJson(j);
    FAIL() << "no error";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "manifest: manifest.input_shape has the wrong type (string)");
  }
}

TEST(Manifest, RefusesUnknownRowFormat) {
  json j = ManifestToJson(Example());
  j["row_format"]["format"] = "orc";
  try {
    ManifestFromJson(j);
    FAIL() << "no error";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "manifest: row_format.format \"orc\" is not a known format");
  }
}

TEST(Manifest, IgnoresUnknownFields) {
  json j = ManifestToJson(Example());
  j["added_by_a_later_version"] = 1;
  EXPECT_EQ(ManifestToJson(ManifestFromJson(j)), ManifestToJson(Example()));
}

TEST(RowFormatOverrides, ReplaceOnlyWhatIsSet) {
  RowFormat base = Example().row_format;
  RowFormatOverrides o;
  o.kind = RowFormatKind::kCsv;
  o.label = LabelPresence::kNone;
  RowFormat f = ApplyOverrides(base, o);
  EXPECT_EQ(f.kind, RowFormatKind::kCsv);
  EXPECT_EQ(f.label, LabelPresence::kNone);
  EXPECT_EQ(f.num_features, 784);
  EXPECT_EQ(f.delimiter, ';');
  EXPECT_EQ(f.id_col, std::optional<int64_t>(3));
}

}  // namespace
}  // namespace sparktorch
