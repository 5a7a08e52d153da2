#include "lib/common/duration.h"

#include <cctype>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace tock {
namespace {

absl::Status BadDuration(absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid duration \"", text,
      "\": use a whole number with a unit d, h, m, s or ms, for example 3d, 36h, 90m or 1d12h"));
}

// What a protobuf Duration (the wire form of every duration) can hold: 10,000 years.
constexpr absl::Duration kMaxDuration = absl::Seconds(315'576'000'000);

absl::StatusOr<absl::Duration> InRange(absl::string_view text, absl::Duration d) {
  if (absl::AbsDuration(d) <= kMaxDuration) return d;
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid duration \"", text, "\": longer than 10000 years, the most a duration can be"));
}

}  // namespace

absl::StatusOr<absl::Duration> ParseHumanDuration(absl::string_view text, BareNumberUnit bare) {
  absl::string_view rest = text;
  bool negative = false;
  if (!rest.empty() && (rest.front() == '-' || rest.front() == '+')) {
    negative = rest.front() == '-';
    rest.remove_prefix(1);
  }
  if (rest.empty()) return BadDuration(text);

  bool all_digits = true;
  for (char c : rest) all_digits = all_digits && std::isdigit(static_cast<unsigned char>(c));
  if (all_digits) {
    if (bare == BareNumberUnit::kNone || rest.size() > 12) return BadDuration(text);
    int64_t n = std::stoll(std::string(rest));
    absl::Duration d = bare == BareNumberUnit::kDays ? absl::Hours(24 * n) : absl::Seconds(n);
    return InRange(text, negative ? -d : d);
  }

  absl::Duration total = absl::ZeroDuration();
  while (!rest.empty()) {
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) {
      ++digits;
    }
    if (digits == 0 || digits > 12) return BadDuration(text);
    int64_t n = std::stoll(std::string(rest.substr(0, digits)));
    rest.remove_prefix(digits);
    size_t unit_len = 0;
    while (unit_len < rest.size() && std::isalpha(static_cast<unsigned char>(rest[unit_len]))) {
      ++unit_len;
    }
    absl::string_view unit = rest.substr(0, unit_len);
    rest.remove_prefix(unit_len);
    if (unit == "d") {
      total += absl::Hours(24 * n);
    } else if (unit == "h") {
      total += absl::Hours(n);
    } else if (unit == "m") {
      total += absl::Minutes(n);
    } else if (unit == "s") {
      total += absl::Seconds(n);
    } else if (unit == "ms") {
      total += absl::Milliseconds(n);
    } else {
      return BadDuration(text);
    }
  }
  return InRange(text, negative ? -total : total);
}

std::string FormatHumanDuration(absl::Duration d) {
  if (d == absl::ZeroDuration()) return "0s";
  if (d == absl::InfiniteDuration()) return "inf";
  if (d == -absl::InfiniteDuration()) return "-inf";
  std::string out;
  if (d < absl::ZeroDuration()) {
    out = "-";
    d = -d;
  }
  struct Unit {
    absl::Duration size;
    const char* name;
  };
  // us and ns are not accepted by ParseHumanDuration, but a protobuf Duration can carry them;
  // printing them keeps the form exact instead of silently dropping the remainder.
  static const Unit kUnits[] = {{absl::Hours(24), "d"},        {absl::Hours(1), "h"},
                                {absl::Minutes(1), "m"},       {absl::Seconds(1), "s"},
                                {absl::Milliseconds(1), "ms"}, {absl::Microseconds(1), "us"},
                                {absl::Nanoseconds(1), "ns"}};
  for (const Unit& unit : kUnits) {
    int64_t n = absl::IDivDuration(d, unit.size, &d);
    if (n > 0) absl::StrAppend(&out, n, unit.name);
  }
  return out;
}

}  // namespace tock
