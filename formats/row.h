#ifndef SPARKTORCH_FORMATS_ROW_H_
#define SPARKTORCH_FORMATS_ROW_H_

#include <string>
#include <vector>

namespace sparktorch {

// One parsed input row. Parsers overwrite a Row in place so that its vectors keep their capacity
// from row to row: reading a partition allocates nothing per row once warm.
struct Row {
  std::vector<float> features;  // Dense, always num_features values (sparse rows are densified).
  std::vector<float> label;     // Empty when the row has no label; 1 value for a class or scalar.
  std::string id;               // Empty when the format or row carries no id.

  void Clear() {
    features.clear();
    label.clear();
    id.clear();
  }
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_ROW_H_
