#include "cmd/tock/output/printer.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_replace.h"

namespace tock::cli {

absl::StatusOr<OutputFormat> ParseOutputFormat(const std::string& text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "card") return OutputFormat::kCard;
  if (text == "json") return OutputFormat::kJson;
  if (text == "jsonl") return OutputFormat::kJsonl;
  return absl::InvalidArgumentError("invalid output format \"" + text +
                                    "\"; allowed: table, card, json, jsonl");
}

std::string Printer::Bold(const std::string& s) const {
  return color_ ? "\033[1m" + s + "\033[0m" : s;
}

void Printer::Object(const nlohmann::json& json, const CardRows& card) {
  switch (format_) {
    case OutputFormat::kJson:
      out_ << json.dump(2) << "\n";
      return;
    case OutputFormat::kJsonl:
      out_ << json.dump() << "\n";
      return;
    case OutputFormat::kTable:
    case OutputFormat::kCard: {
      size_t width = 0;
      for (const auto& [key, value] : card) width = std::max(width, key.size());
      for (const auto& [key, value] : card) {
        out_ << Bold(key + ":");
        // No padding after a key with an empty value: no trailing blanks.
        if (!value.empty()) out_ << std::string(width - key.size() + 2, ' ') << value;
        out_ << "\n";
      }
      return;
    }
  }
}

void Printer::BeginList(std::vector<std::string> headers) {
  headers_ = std::move(headers);
  rows_.clear();
  widths_.assign(headers_.size(), 0);
  for (size_t i = 0; i < headers_.size(); ++i) widths_[i] = headers_[i].size();
  header_printed_ = false;
  rows_seen_ = 0;
}

void Printer::Row(const nlohmann::json& json, std::vector<std::string> cells) {
  switch (format_) {
    case OutputFormat::kJson:
      // Each element indented inside the array, as a whole-document dump(2) would print it.
      out_ << (rows_seen_ == 0 ? "[\n  " : ",\n  ")
           << absl::StrReplaceAll(json.dump(2), {{"\n", "\n  "}});
      break;
    case OutputFormat::kJsonl:
      out_ << json.dump() << "\n";
      break;
    case OutputFormat::kCard: {
      if (rows_seen_ > 0) out_ << "\n";
      CardRows card;
      for (size_t i = 0; i < headers_.size() && i < cells.size(); ++i) {
        card.emplace_back(EnumLabel(headers_[i], ""), cells[i]);
      }
      Object(json, card);
      break;
    }
    case OutputFormat::kTable:
      rows_.push_back(std::move(cells));
      if (rows_.size() >= kPageRows) FlushTable();
      break;
  }
  ++rows_seen_;
}

void Printer::EndList() {
  if (format_ == OutputFormat::kJson) out_ << (rows_seen_ == 0 ? "[]\n" : "\n]\n");
  if (format_ == OutputFormat::kTable) FlushTable();
}

void Printer::EmptyNote(const std::string& note) {
  if ((format_ == OutputFormat::kTable || format_ == OutputFormat::kCard) && rows_seen_ == 0) {
    out_ << note << "\n";
  }
}

void Printer::FlushTable() {
  if (rows_.empty()) return;
  std::vector<size_t>& widths = widths_;
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string text;
    for (size_t i = 0; i < widths.size(); ++i) {
      std::string cell = i < cells.size() ? cells[i] : "";
      if (i + 1 < widths.size()) cell += std::string(widths[i] - cell.size() + 2, ' ');
      text += cell;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out_ << (header ? Bold(text) : text) << "\n";
  };
  if (!header_printed_) line(headers_, true);
  header_printed_ = true;
  for (const auto& row : rows_) line(row, false);
  rows_.clear();
}

std::string EnumLabel(const std::string& enum_name, const std::string& prefix) {
  std::string name = enum_name.rfind(prefix, 0) == 0 ? enum_name.substr(prefix.size()) : enum_name;
  std::string out;
  bool start = true;
  for (char c : name) {
    if (c == '_') {
      out += ' ';
      start = true;
    } else {
      out += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                   : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      start = false;
    }
  }
  return out;
}

}  // namespace tock::cli
