#include "server-core/http_api/json_text.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace tock::server::http_api {
namespace {

constexpr std::string_view kShorthandType = "_protoMessageType";

// The length of the valid UTF-8 sequence starting at text[i] (a byte >= 0x80), or 0.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  size_t length;
  uint32_t min;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  uint32_t code = c & (0xFF >> (length + 1));
  for (size_t k = 1; k < length; ++k) {
    const auto d = static_cast<unsigned char>(text[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    code = (code << 6) | (d & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

// The proleptic Gregorian date of a day counted from 1970-01-01 (the usual era arithmetic:
// 400-year eras of 146,097 days, years starting in March so that leap days come last).
void CivilDate(int64_t days, int64_t* year, int* month, int* day) {
  days += 719'468;  // from 0000-03-01
  const int64_t era = (days >= 0 ? days : days - 146'096) / 146'097;
  const int64_t day_of_era = days - era * 146'097;
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1'460 + day_of_era / 36'524 - day_of_era / 146'096) / 365;
  const int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t shifted_month = (5 * day_of_year + 2) / 153;  // 0 = March
  *day = static_cast<int>(day_of_year - (153 * shifted_month + 2) / 5 + 1);
  *month = static_cast<int>(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
  *year = year_of_era + era * 400 + (*month <= 2 ? 1 : 0);
}

void Digits(std::string& out, int64_t value, int width) {
  char buf[8];
  for (int i = width - 1; i >= 0; --i, value /= 10) buf[i] = static_cast<char>('0' + value % 10);
  out.append(buf, width);
}

// Years 0001-9999, the range of a valid Timestamp (seconds of 0001-01-01 and 10000-01-01).
constexpr int64_t kMinTimestampSeconds = -62'135'596'800;
constexpr int64_t kEndTimestampSeconds = 253'402'300'800;

}  // namespace

void JsonText::String(std::string_view text) {
  out_.push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      // A run of plain ASCII at once.
      size_t j = i + 1;
      while (j < text.size()) {
        const auto d = static_cast<unsigned char>(text[j]);
        if (d < 0x20 || d >= 0x80 || d == '"' || d == '\\') break;
        ++j;
      }
      out_.append(text.data() + i, j - i);
      i = j;
      continue;
    }
    if (c < 0x80) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        case '\b': out_ += "\\b"; break;
        case '\f': out_ += "\\f"; break;
        default: {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out_ += buf;
        }
      }
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      out_ += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    } else {
      out_.append(text.data() + i, length);
      i += length;
    }
  }
  out_.push_back('"');
}

void JsonText::Base64(std::string_view bytes) {
  out_.push_back('"');
  out_ += absl::Base64Escape(absl::string_view(bytes.data(), bytes.size()));
  out_.push_back('"');
}

void JsonText::Double(double value) {
  if (std::isnan(value)) {
    out_ += "\"NaN\"";
  } else if (std::isinf(value)) {
    out_ += value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    out_ += nlohmann::json(value).dump();
  }
}

void JsonText::Enum(const std::string* name, int number) {
  if (name != nullptr) {
    String(*name);
  } else {
    absl::StrAppend(&out_, number);
  }
}

void JsonText::Timestamp(int64_t seconds, int32_t nanos) {
  out_.push_back('"');
  if (seconds >= kMinTimestampSeconds && seconds < kEndTimestampSeconds) {
    const int64_t days = (seconds >= 0 ? seconds : seconds - 86'399) / 86'400;
    const int64_t in_day = seconds - days * 86'400;
    int64_t year;
    int month, day;
    CivilDate(days, &year, &month, &day);
    Digits(out_, year, 4);
    out_.push_back('-');
    Digits(out_, month, 2);
    out_.push_back('-');
    Digits(out_, day, 2);
    out_.push_back('T');
    Digits(out_, in_day / 3600, 2);
    out_.push_back(':');
    Digits(out_, in_day / 60 % 60, 2);
    out_.push_back(':');
    Digits(out_, in_day % 60, 2);
  } else {  // out of a Timestamp's range: as absl writes it
    const absl::Time t = absl::FromUnixSeconds(seconds);
    out_ += absl::FormatTime("%Y-%m-%d%ET%H:%M:%S", t, absl::UTCTimeZone());
  }
  Fraction(nanos);
  out_ += "Z\"";
}

void JsonText::Duration(int64_t seconds, int32_t nanos) {
  out_.push_back('"');
  if (seconds < 0 || nanos < 0) out_.push_back('-');
  absl::StrAppend(&out_, seconds < 0 ? -static_cast<uint64_t>(seconds) : static_cast<uint64_t>(seconds));
  Fraction(nanos < 0 ? -nanos : nanos);
  out_ += "s\"";
}

// protobuf's rule: no fraction, or 3, 6 or 9 digits.
void JsonText::Fraction(int32_t nanos) {
  if (nanos <= 0 || nanos > 999'999'999) return;
  out_.push_back('.');
  if (nanos % 1'000'000 == 0) {
    Digits(out_, nanos / 1'000'000, 3);
  } else if (nanos % 1'000 == 0) {
    Digits(out_, nanos / 1'000, 6);
  } else {
    Digits(out_, nanos, 9);
  }
}

bool JsonText::ShortPayload(const temporal::api::common::v1::Payload& p) {
  auto encoding = p.metadata().find("encoding");
  if (encoding == p.metadata().end()) return false;
  if (encoding->second == "binary/null") {
    out_ += "null";
    return true;
  }
  if (encoding->second == "json/plain" && p.metadata().size() == 1) {
    if (!nlohmann::json::accept(p.data())) return false;
    out_ += p.data();
    return true;
  }
  if (encoding->second == "json/protobuf" && p.metadata().size() == 2) {
    auto type = p.metadata().find("messageType");
    if (type == p.metadata().end() || type->second.empty()) return false;
    const std::string& data = p.data();
    const size_t open = data.find_first_not_of(" \t\r\n");
    if (open == std::string::npos || data[open] != '{' || !nlohmann::json::accept(data)) return false;
    const size_t next = data.find_first_not_of(" \t\r\n", open + 1);
    out_.push_back('{');
    String(kShorthandType);
    out_.push_back(':');
    String(type->second);
    if (next != std::string::npos && data[next] != '}') out_.push_back(',');
    out_.append(data, open + 1, std::string::npos);
    return true;
  }
  return false;
}

bool JsonText::ShortPayloads(const temporal::api::common::v1::Payloads& list) {
  const size_t mark = out_.size();
  out_.push_back('[');
  for (int i = 0; i < list.payloads_size(); ++i) {
    if (i > 0) out_.push_back(',');
    if (!ShortPayload(list.payloads(i))) {
      out_.resize(mark);  // one without keeps the whole list in the proto form
      return false;
    }
  }
  out_.push_back(']');
  return true;
}

}  // namespace tock::server::http_api
