#ifndef SPARKTORCH_CLI_COMMANDS_H_
#define SPARKTORCH_CLI_COMMANDS_H_

#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace sparktorch {

// "default V" for a flag's help, from the value its options struct starts with: each default is
// written once, beside its field (core/jobs/*.h), and the help reads it from there.
template <typename T>
std::string DefaultIs(const T& value) {
  std::ostringstream text;
  text << "default " << value;
  return text.str();
}

// A flag whose value is one of an enum's, by the names of its table (formats/enum_names.h: an
// array of {value, name}): parsed once, here, into *value (the enum, or a std::optional of it
// that stays empty without the flag; nothing below compares the text). The help shows
// TEXT:{a,b,c}; any other text is a usage error, "--flag: x not in {a,b,c}".
template <typename T, typename Table>
CLI::Option* AddEnumOption(CLI::App* command, const std::string& flags, T* value,
                           const Table& table, const std::string& help) {
  using E = decltype(table[0].value);
  std::vector<std::pair<std::string, E>> names;
  std::string list;
  for (const auto& entry : table) {
    names.emplace_back(entry.name, entry.value);
    list += (list.empty() ? "" : ",") + std::string(entry.name);
  }
  CLI::Validator by_name(
      [names, list](std::string& text) -> std::string {
        for (const auto& [n, v] : names) {
          if (text == n) {
            text = std::to_string(static_cast<int>(v));
            return "";
          }
        }
        return text + " not in {" + list + "}";
      },
      "", "");
  return command->add_option(flags, *value, help)->transform(by_name)->type_name("TEXT:{" + list + "}");
}

// Each registers one subcommand on `app`, with its options and a callback that runs it. The
// callbacks throw sparktorch::Error kinds, which main turns into exit codes.
void SetupTrainCommand(CLI::App& app);
void SetupPredictCommand(CLI::App& app);
void SetupUnpackCommand(CLI::App& app);
void SetupInspectCommand(CLI::App& app);
void SetupServeCommand(CLI::App& app);

}  // namespace sparktorch

#endif  // SPARKTORCH_CLI_COMMANDS_H_
