#ifndef SPARKTORCH_FORMATS_ENUM_NAMES_H_
#define SPARKTORCH_FORMATS_ENUM_NAMES_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace sparktorch {

// An enum's values and their names, one table a type: what a flag accepts (cli/commands.h
// AddEnumOption), what a manifest or a job's key records, and what messages print all read it.
// The first entry is the name of any value the table lacks.
template <typename E>
struct Named {
  E value;
  const char* name;
};

template <typename E, std::size_t N>
constexpr const char* NameIn(const Named<E> (&table)[N], E value) {
  for (const Named<E>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return table[0].name;
}

// The value `name` names; nullopt for any other text.
template <typename E, std::size_t N>
constexpr std::optional<E> ValueIn(const Named<E> (&table)[N], std::string_view name) {
  for (const Named<E>& entry : table) {
    if (name == entry.name) return entry.value;
  }
  return std::nullopt;
}

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_ENUM_NAMES_H_
