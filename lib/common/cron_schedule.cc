#include "lib/common/cron_schedule.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tock {
namespace {

absl::Status Invalid(absl::string_view spec, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("invalid CronSchedule. \"", spec, "\": ", why));
}

struct FieldRange {
  const char* name;
  int min;
  int max;
  const char* const* names;  // value names from `min` on (months, days of week), or null
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec", nullptr};
constexpr const char* kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", nullptr};

bool ParseValue(absl::string_view text, const FieldRange& r, int* out) {
  if (absl::SimpleAtoi(text, out)) return true;
  if (r.names == nullptr) return false;
  const std::string lower = absl::AsciiStrToLower(text);
  for (int i = 0; r.names[i] != nullptr; ++i) {
    if (lower == r.names[i]) {
      *out = r.min + i;
      return true;
    }
  }
  return false;
}

// One field: comma-separated `*`, `?`, `a`, `a-b`, each with an optional `/step`.
absl::StatusOr<uint64_t> ParseField(absl::string_view spec, absl::string_view field,
                                    const FieldRange& r, bool* star) {
  uint64_t bits = 0;
  *star = false;
  for (absl::string_view part : absl::StrSplit(field, ',')) {
    absl::string_view range = part;
    int step = 1;
    const size_t slash = part.find('/');
    if (slash != absl::string_view::npos) {
      range = part.substr(0, slash);
      if (!absl::SimpleAtoi(part.substr(slash + 1), &step) || step <= 0) {
        return Invalid(spec, absl::StrCat("bad step in ", r.name, " \"", part, "\""));
      }
    }
    int low = r.min;
    int high = r.max;
    if (range == "*" || range == "?") {
      if (slash == absl::string_view::npos) *star = true;
    } else {
      const size_t dash = range.find('-');
      if (dash == absl::string_view::npos) {
        if (!ParseValue(range, r, &low)) {
          return Invalid(spec, absl::StrCat("bad ", r.name, " \"", range, "\""));
        }
        // `a/step` runs from a to the end of the range (robfig).
        high = slash == absl::string_view::npos ? low : r.max;
      } else if (!ParseValue(range.substr(0, dash), r, &low) ||
                 !ParseValue(range.substr(dash + 1), r, &high)) {
        return Invalid(spec, absl::StrCat("bad ", r.name, " range \"", range, "\""));
      }
    }
    if (low < r.min || high > r.max || low > high) {
      return Invalid(spec, absl::StrCat(r.name, " \"", part, "\" is outside ", r.min, "-", r.max));
    }
    for (int v = low; v <= high; v += step) bits |= uint64_t{1} << v;
  }
  return bits;
}

// Go's time.ParseDuration for @every: sequences of <number><unit>, units h m s ms us ns.
bool ParseGoDuration(absl::string_view text, absl::Duration* out) {
  if (text.empty()) return false;
  absl::Duration total = absl::ZeroDuration();
  while (!text.empty()) {
    size_t i = 0;
    while (i < text.size() && (absl::ascii_isdigit(text[i]) || text[i] == '.')) ++i;
    double value = 0;
    if (i == 0 || !absl::SimpleAtod(text.substr(0, i), &value)) return false;
    text.remove_prefix(i);
    size_t j = 0;
    while (j < text.size() && absl::ascii_isalpha(text[j])) ++j;
    const absl::string_view unit = text.substr(0, j);
    text.remove_prefix(j);
    if (unit == "h") total += absl::Hours(value);
    else if (unit == "m") total += absl::Minutes(value);
    else if (unit == "s") total += absl::Seconds(value);
    else if (unit == "ms") total += absl::Milliseconds(value);
    else if (unit == "us") total += absl::Microseconds(value);
    else if (unit == "ns") total += absl::Nanoseconds(value);
    else return false;
  }
  *out = total;
  return true;
}

}  // namespace

absl::StatusOr<CronSchedule> CronSchedule::Parse(std::string_view given) {
  CronSchedule s;
  const absl::string_view input(given.data(), given.size());
  absl::string_view spec = absl::StripAsciiWhitespace(input);
  if (absl::StartsWith(spec, "CRON_TZ=") || absl::StartsWith(spec, "TZ=")) {
    const size_t eq = spec.find('=');
    const size_t space = spec.find(' ');
    if (space == absl::string_view::npos) return Invalid(input, "a time zone and nothing else");
    const std::string zone(spec.substr(eq + 1, space - eq - 1));
    if (!absl::LoadTimeZone(zone, &s.zone_)) {
      return Invalid(input, absl::StrCat("unknown time zone \"", zone, "\""));
    }
    spec = absl::StripLeadingAsciiWhitespace(spec.substr(space));
  }
  if (absl::StartsWith(spec, "@")) {
    if (absl::ConsumePrefix(&spec, "@every ")) {
      absl::Duration d;
      if (!ParseGoDuration(absl::StripAsciiWhitespace(spec), &d) || d <= absl::ZeroDuration()) {
        return Invalid(input, "@every needs a positive duration such as 90m or 1h30m");
      }
      // robfig/cron: at least a second, whole seconds.
      s.every_ = std::max(absl::Seconds(1), absl::Trunc(d, absl::Seconds(1)));
      return s;
    }
    static const std::pair<const char*, const char*> kDescriptors[] = {
        {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"}};
    bool known = false;
    for (const auto& [name, fields] : kDescriptors) {
      if (spec == name) {
        spec = fields;
        known = true;
        break;
      }
    }
    if (!known) return Invalid(input, "unknown descriptor");
  }
  std::vector<absl::string_view> fields = absl::StrSplit(spec, ' ', absl::SkipEmpty());
  if (fields.size() != 5) {
    return Invalid(input, "five fields are needed: minute hour day-of-month month day-of-week");
  }
  bool star = false;
  auto field = [&](int i, const FieldRange& r, uint64_t* bits, bool* star_out) -> absl::Status {
    absl::StatusOr<uint64_t> parsed = ParseField(input, fields[i], r, star_out);
    if (!parsed.ok()) return parsed.status();
    *bits = *parsed;
    return absl::OkStatus();
  };
  if (absl::Status st = field(0, {"minute", 0, 59, nullptr}, &s.minutes_, &star); !st.ok()) return st;
  if (absl::Status st = field(1, {"hour", 0, 23, nullptr}, &s.hours_, &star); !st.ok()) return st;
  if (absl::Status st = field(2, {"day of month", 1, 31, nullptr}, &s.days_of_month_, &s.dom_star_);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = field(3, {"month", 1, 12, kMonthNames}, &s.months_, &star); !st.ok()) return st;
  if (absl::Status st = field(4, {"day of week", 0, 6, kDayNames}, &s.days_of_week_, &s.dow_star_);
      !st.ok()) {
    return st;
  }
  return s;
}

bool CronSchedule::DayMatches(const absl::CivilDay& d) const {
  const bool dom = days_of_month_ >> d.day() & 1;
  // absl counts from Monday (0), cron from Sunday (0).
  const bool dow = days_of_week_ >> ((static_cast<int>(absl::GetWeekday(d)) + 1) % 7) & 1;
  return dom_star_ || dow_star_ ? dom && dow : dom || dow;
}

absl::Time CronSchedule::Next(absl::Time t) const {
  if (every_ > absl::ZeroDuration()) {
    // robfig's ConstantDelaySchedule: the delay from t with t's sub-second part dropped.
    return absl::FromUnixSeconds(absl::ToUnixSeconds(t)) + every_;
  }
  absl::CivilMinute m = absl::ToCivilMinute(t, zone_) + 1;
  const absl::CivilMinute limit = m + 5 * 366 * 24 * 60;
  while (m < limit) {
    if (!(months_ >> m.month() & 1)) {
      m = absl::CivilMinute(absl::CivilMonth(m) + 1);
      continue;
    }
    if (!DayMatches(absl::CivilDay(m))) {
      m = absl::CivilMinute(absl::CivilDay(m) + 1);
      continue;
    }
    if (!(hours_ >> m.hour() & 1)) {
      m = absl::CivilMinute(absl::CivilHour(m) + 1);
      continue;
    }
    if (!(minutes_ >> m.minute() & 1)) {
      m += 1;
      continue;
    }
    // A minute the clocks pass twice (the hour repeated when they go back) is its first
    // occurrence, or its second when the first is not after `t`; a skipped one is the instant
    // it would have been, after the jump (FromCivil's choice).
    const absl::TimeZone::TimeInfo at = zone_.At(absl::CivilSecond(m));
    if (at.pre > t) return at.pre;
    if (at.post > t) return at.post;
    m += 1;
  }
  return absl::InfiniteFuture();
}

absl::Duration CronBackoff(const CronSchedule& schedule, absl::Time scheduled, absl::Time now) {
  absl::Time next = scheduled;
  if (now >= scheduled) {
    next = schedule.Next(scheduled);
    for (int i = 0; i < 10'000'000 && next < now; ++i) next = schedule.Next(next);
  }
  if (next == absl::InfiniteFuture()) return absl::InfiniteDuration();
  return absl::Ceil(next - now, absl::Seconds(1));
}

}  // namespace tock
