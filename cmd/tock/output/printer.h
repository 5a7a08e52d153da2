// Output of every command in the format the operator chose: an aligned table, cards
// (`Key: value` lines), pretty JSON, or JSON lines. Data goes to the given stream (stdout);
// nothing here writes diagnostics.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace tock::cli {

enum class OutputFormat { kTable, kCard, kJson, kJsonl };

absl::StatusOr<OutputFormat> ParseOutputFormat(const std::string& text);

using CardRows = std::vector<std::pair<std::string, std::string>>;

class Printer {
 public:
  Printer(std::ostream& out, OutputFormat format, bool color)
      : out_(out), format_(format), color_(color) {}

  OutputFormat format() const { return format_; }

  // One object: JSON formats print `json`; table and card print `card`.
  void Object(const nlohmann::json& json, const CardRows& card);

  // A list, streamed: json prints one array, jsonl one document per line (constant memory),
  // table aligned columns (rows buffered per page of kPageRows; the header is printed once
  // and a column only ever widens, so later pages stay aligned with it unless a cell is
  // wider than everything before), card one card per row, separated by a blank line.
  void BeginList(std::vector<std::string> headers);
  void Row(const nlohmann::json& json, std::vector<std::string> cells);
  void EndList();

  size_t rows_seen() const { return rows_seen_; }

  // "No namespaces." style note for an empty table (JSON formats print [] or nothing).
  void EmptyNote(const std::string& note);

  static constexpr size_t kPageRows = 100;

 private:
  void FlushTable();
  std::string Bold(const std::string& s) const;

  std::ostream& out_;
  OutputFormat format_;
  bool color_;
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> widths_;
  bool header_printed_ = false;
  size_t rows_seen_ = 0;
};

// "NAMESPACE_STATE_REGISTERED" -> "Registered" (drops `prefix`, capitalises words).
std::string EnumLabel(const std::string& enum_name, const std::string& prefix);

}  // namespace tock::cli
