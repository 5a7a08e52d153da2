#include "server-core/scheduler/schedule_spec.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/common/duration.h"
#include "lib/common/hashing.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::server::scheduler {
namespace {

enum class Mode { kInt, kYear, kMonth, kDow };

constexpr const char* kMonths[] = {"january", "february", "march",     "april",
                                   "may",     "june",     "july",      "august",
                                   "september", "october", "november", "december"};
constexpr const char* kDays[] = {"sunday",   "monday", "tuesday", "wednesday",
                                 "thursday", "friday", "saturday"};

absl::Status Invalid(absl::string_view why) { return absl::InvalidArgumentError(std::string(why)); }

// One value: a decimal integer, or a month (at least three letters) or day-of-week (at least
// two letters) name prefix. False when it is neither or out of [lo, hi].
bool ParseValue(absl::string_view s, int lo, int hi, Mode mode, int* out) {
  const std::string lower = absl::AsciiStrToLower(s);
  if (mode == Mode::kMonth && lower.size() >= 3) {
    for (int i = 0; i < 12; ++i) {
      if (absl::StartsWith(kMonths[i], lower)) {
        *out = i + 1;
        return *out >= lo && *out <= hi;
      }
    }
  } else if (mode == Mode::kDow && lower.size() >= 2) {
    for (int i = 0; i < 7; ++i) {
      if (absl::StartsWith(kDays[i], lower)) {
        *out = i;
        return *out >= lo && *out <= hi;
      }
    }
  }
  if (s.empty() || !absl::SimpleAtoi(s, out)) return false;
  return *out >= lo && *out <= hi;
}

// Temporal's makeRange: `*`, `x`, `x-z`, `x-z/y`, `x/y`, comma lists of them.
absl::StatusOr<std::vector<sched::Range>> MakeRange(absl::string_view text, absl::string_view field,
                                                    absl::string_view def, int lo, int hi,
                                                    Mode mode) {
  std::string s(absl::StripAsciiWhitespace(text));
  if (s.empty()) s = std::string(def);
  std::vector<sched::Range> ranges;
  if (s == "*" && mode == Mode::kYear) return ranges;  // every year: no ranges
  for (absl::string_view part : absl::StrSplit(s, ',')) {
    int step = 1;
    bool has_step = false;
    const size_t slashes = std::count(part.begin(), part.end(), '/');
    if (slashes > 1) return Invalid(absl::StrCat(field, " has too many slashes"));
    if (slashes == 1) {
      const size_t at = part.find('/');
      absl::string_view step_text = part.substr(at + 1);
      if (step_text.empty()) return Invalid(absl::StrCat(field, " missing step value"));
      part = part.substr(0, at);
      if (!absl::SimpleAtoi(step_text, &step) || step < 1) {
        return Invalid(absl::StrCat(field, " has invalid Step"));
      }
      has_step = true;
    }
    int start = lo, end = hi;
    if (part != "*") {
      if (part.find('-') != absl::string_view::npos) {
        if (std::count(part.begin(), part.end(), '-') > 1) {
          return Invalid(absl::StrCat(field, " has too many dashes"));
        }
        const size_t dash = part.find('-');
        if (!ParseValue(part.substr(0, dash), lo, hi, mode, &start)) {
          return Invalid(absl::StrCat(field, " Start is not in range [", lo, "-", hi, "]"));
        }
        if (!ParseValue(part.substr(dash + 1), start, hi, mode, &end)) {
          return Invalid(
              absl::StrCat(field, " End is before Start or not in range [", lo, "-", hi, "]"));
        }
      } else {
        if (!ParseValue(part, lo, hi, mode, &start)) {
          return Invalid(absl::StrCat(field, " is not in range [", lo, "-", hi, "]"));
        }
        if (!has_step) end = start;  // `x/y` runs from x to the end
      }
    }
    // Sunday may be written 7: it becomes 0 (with an extra range when needed).
    if (mode == Mode::kDow && end == 7) {
      if ((7 - start) % step == 0 && (step > 1 || (step == 1 && start > 1))) {
        sched::Range zero;
        zero.set_start(0);
        ranges.push_back(zero);
        if (start == 7) continue;
      }
      end = 6;
    }
    sched::Range r;
    r.set_start(start);
    if (end != start) r.set_end(end);
    if (step != 1) r.set_step(step);
    ranges.push_back(r);
  }
  if (ranges.size() > static_cast<size_t>(kMaxItems)) {
    return Invalid(absl::StrCat(field, " has more than ", kMaxItems, " ranges"));
  }
  return ranges;
}

void SetRanges(google::protobuf::RepeatedPtrField<sched::Range>* out,
               std::vector<sched::Range> ranges) {
  out->Clear();
  for (sched::Range& r : ranges) *out->Add() = std::move(r);
}

absl::StatusOr<sched::StructuredCalendarSpec> ParseCalendar(const sched::CalendarSpec& cal) {
  std::vector<std::string> errors;
  sched::StructuredCalendarSpec out;
  auto field = [&](const std::string& text, absl::string_view name, absl::string_view def, int lo,
                   int hi, Mode mode, google::protobuf::RepeatedPtrField<sched::Range>* into) {
    absl::StatusOr<std::vector<sched::Range>> r = MakeRange(text, name, def, lo, hi, mode);
    if (!r.ok()) {
      errors.emplace_back(r.status().message());
      return;
    }
    SetRanges(into, std::move(*r));
  };
  field(cal.second(), "Second", "0", 0, 59, Mode::kInt, out.mutable_second());
  field(cal.minute(), "Minute", "0", 0, 59, Mode::kInt, out.mutable_minute());
  field(cal.hour(), "Hour", "0", 0, 23, Mode::kInt, out.mutable_hour());
  field(cal.day_of_week(), "DayOfWeek", "*", 0, 7, Mode::kDow, out.mutable_day_of_week());
  field(cal.day_of_month(), "DayOfMonth", "*", 1, 31, Mode::kInt, out.mutable_day_of_month());
  field(cal.month(), "Month", "*", 1, 12, Mode::kMonth, out.mutable_month());
  field(cal.year(), "Year", "*", kMinCalendarYear, kMaxCalendarYear, Mode::kYear, out.mutable_year());
  out.set_comment(cal.comment());
  if (!errors.empty()) return Invalid(absl::StrJoin(errors, ", "));
  return out;
}

// Go's time.ParseDuration units plus d (Temporal's timestamp.ParseDuration).
absl::StatusOr<absl::Duration> ParseGoDuration(absl::string_view text) {
  absl::Duration d;
  if (absl::ParseDuration(text, &d)) return d;
  absl::StatusOr<absl::Duration> human = ParseHumanDuration(text);
  if (human.ok()) return *human;
  return Invalid(absl::StrCat("invalid duration \"", text, "\""));
}

struct CronParts {
  std::optional<sched::StructuredCalendarSpec> calendar;
  std::optional<sched::IntervalSpec> interval;
  std::string zone;
};

absl::StatusOr<CronParts> ParseCronString(absl::string_view text) {
  if (text.size() > kMaxCronStringBytes) {
    return Invalid(absl::StrCat("CronString is longer than ", kMaxCronStringBytes, " bytes"));
  }
  std::string c(absl::StripAsciiWhitespace(text));
  CronParts out;
  if (absl::StartsWith(c, "TZ=") || absl::StartsWith(c, "CRON_TZ=")) {
    const size_t space = c.find(' ');
    if (space == std::string::npos) return Invalid("CronString has time zone but missing fields");
    const std::string tz = c.substr(0, space);
    out.zone = tz.substr(tz.find('=') + 1);
    c = c.substr(space + 1);
  }
  std::string comment;
  if (const size_t hash = c.find('#'); hash != std::string::npos) {
    comment = std::string(absl::StripAsciiWhitespace(c.substr(hash + 1)));
    c = c.substr(0, hash);
  }
  c = std::string(absl::StripAsciiWhitespace(c));
  if (absl::StartsWith(c, "@every")) {
    const size_t space = c.find(' ');
    if (space == std::string::npos) return Invalid("CronString does not have interval after @every");
    std::string every = c.substr(space + 1);
    std::string phase;
    if (const size_t slash = every.find('/'); slash != std::string::npos) {
      phase = every.substr(slash + 1);
      every = every.substr(0, slash);
    }
    sched::IntervalSpec iv;
    absl::StatusOr<absl::Duration> d = ParseGoDuration(every);
    if (!d.ok()) return d.status();
    *iv.mutable_interval() = ToProtoDuration(*d);
    if (!phase.empty()) {
      absl::StatusOr<absl::Duration> p = ParseGoDuration(phase);
      if (!p.ok()) return p.status();
      *iv.mutable_phase() = ToProtoDuration(*p);
    }
    out.interval = iv;
    out.zone.clear();  // Temporal: an @every string carries no zone
    return out;
  }
  if (c == "@yearly" || c == "@annually") c = "0 0 1 1 *";
  else if (c == "@monthly") c = "0 0 1 * *";
  else if (c == "@weekly") c = "0 0 * * 0";
  else if (c == "@daily" || c == "@midnight") c = "0 0 * * *";
  else if (c == "@hourly") c = "0 * * * *";
  std::vector<std::string> fields = absl::StrSplit(c, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  sched::CalendarSpec cal;
  cal.set_comment(comment);
  if (fields.size() == 5 || fields.size() == 6) {
    cal.set_minute(fields[0]);
    cal.set_hour(fields[1]);
    cal.set_day_of_month(fields[2]);
    cal.set_month(fields[3]);
    cal.set_day_of_week(fields[4]);
    if (fields.size() == 6) cal.set_year(fields[5]);
  } else if (fields.size() == 7) {
    cal.set_second(fields[0]);
    cal.set_minute(fields[1]);
    cal.set_hour(fields[2]);
    cal.set_day_of_month(fields[3]);
    cal.set_month(fields[4]);
    cal.set_day_of_week(fields[5]);
    cal.set_year(fields[6]);
  } else {
    return Invalid("CronString does not have 5-7 fields");
  }
  absl::StatusOr<sched::StructuredCalendarSpec> structured = ParseCalendar(cal);
  if (!structured.ok()) return structured.status();
  out.calendar = std::move(*structured);
  return out;
}

absl::Status ValidateStructured(const sched::StructuredCalendarSpec& s) {
  std::vector<std::string> errors;
  auto check = [&](const google::protobuf::RepeatedPtrField<sched::Range>& ranges,
                   absl::string_view field, int lo, int hi) {
    if (ranges.size() > kMaxItems) {
      errors.push_back(absl::StrCat(field, " has more than ", kMaxItems, " ranges"));
    }
    for (const sched::Range& r : ranges) {
      if (r.start() < lo || r.start() > hi) {
        errors.push_back(absl::StrCat(field, " Start is not in range [", lo, "-", hi, "]"));
      }
      if (r.end() != 0 && (r.end() < r.start() || r.end() > hi)) {
        errors.push_back(
            absl::StrCat(field, " End is before Start or not in range [", lo, "-", hi, "]"));
      }
      if (r.step() < 0) errors.push_back(absl::StrCat(field, " has invalid Step"));
    }
  };
  check(s.second(), "Second", 0, 59);
  check(s.minute(), "Minute", 0, 59);
  check(s.hour(), "Hour", 0, 23);
  check(s.day_of_month(), "DayOfMonth", 1, 31);
  check(s.month(), "Month", 1, 12);
  check(s.year(), "Year", kMinCalendarYear, kMaxCalendarYear);
  check(s.day_of_week(), "DayOfWeek", 0, 6);
  if (s.comment().size() > kMaxCommentBytes) errors.push_back("comment is too long");
  if (!errors.empty()) return Invalid(absl::StrCat("invalid calendar spec: ", absl::StrJoin(errors, ", ")));
  return absl::OkStatus();
}

absl::Status ValidateInterval(const sched::IntervalSpec& i) {
  const absl::Duration iv = FromProtoDuration(i.interval());
  const absl::Duration phase = FromProtoDuration(i.phase());
  if (iv < absl::Seconds(1)) return Invalid("interval is too small");
  if (phase < absl::ZeroDuration()) return Invalid("phase is negative");
  if (phase >= iv) return Invalid("phase cannot be greater than Interval");
  return absl::OkStatus();
}

template <typename Ranges, typename F>
void Iterate(const Ranges& ranges, F f) {
  for (const sched::Range& r : ranges) {
    const int step = r.step() <= 0 ? 1 : r.step();
    const int end = r.end() < r.start() ? r.start() : r.end();
    for (int v = r.start(); v <= end; v += step) f(v);
  }
}

template <typename Ranges>
uint64_t Bits(const Ranges& ranges) {
  uint64_t bits = 0;
  Iterate(ranges, [&](int v) {
    if (v >= 0 && v < 64) bits |= uint64_t{1} << v;
  });
  return bits;
}

bool Has(uint64_t bits, int v) { return v >= 0 && v < 64 && ((bits >> v) & 1) != 0; }

int DaysInMonth(int m, int y) {
  if (m == 2) return (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 29 : 28;
  return 30 + ((0b1010110101010 >> m) & 1);
}

int Weekday(int y, int m, int d) {
  switch (absl::GetWeekday(absl::CivilDay(y, m, d))) {
    case absl::Weekday::sunday: return 0;
    case absl::Weekday::monday: return 1;
    case absl::Weekday::tuesday: return 2;
    case absl::Weekday::wednesday: return 3;
    case absl::Weekday::thursday: return 4;
    case absl::Weekday::friday: return 5;
    case absl::Weekday::saturday: return 6;
  }
  return 0;
}

// Go's time.Date: a skipped local time takes the offset in force before the change, a
// repeated one the first.
absl::Time At(const absl::TimeZone& zone, int y, int mo, int d, int h, int m, int s) {
  return zone.At(absl::CivilSecond(y, mo, d, h, m, s)).pre;
}

}  // namespace

void CleanSpec(sched::ScheduleSpec& spec) {
  auto clean = [](google::protobuf::RepeatedPtrField<sched::Range>* ranges) {
    for (sched::Range& r : *ranges) {
      if (r.end() < r.start()) r.set_end(r.start());
      if (r.step() == 0) r.set_step(1);
    }
  };
  auto cal = [&](sched::StructuredCalendarSpec& c) {
    clean(c.mutable_second());
    clean(c.mutable_minute());
    clean(c.mutable_hour());
    clean(c.mutable_day_of_month());
    clean(c.mutable_month());
    clean(c.mutable_year());
    clean(c.mutable_day_of_week());
  };
  for (auto& c : *spec.mutable_structured_calendar()) cal(c);
  for (auto& c : *spec.mutable_exclude_structured_calendar()) cal(c);
}

// exclude_calendar is deprecated in the API (exclude_structured_calendar replaces it) but
// Temporal still reads it, and so does this.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
absl::StatusOr<sched::ScheduleSpec> CanonicalizeSpec(const sched::ScheduleSpec& in) {
  for (int n : {in.structured_calendar_size(), in.cron_string_size(), in.calendar_size(),
                in.interval_size(), in.exclude_calendar_size(),
                in.exclude_structured_calendar_size()}) {
    if (n > kMaxItems) return Invalid(absl::StrCat("a spec holds at most ", kMaxItems, " items of a kind"));
  }
  sched::ScheduleSpec spec = in;
  for (const sched::CalendarSpec& cal : in.calendar()) {
    absl::StatusOr<sched::StructuredCalendarSpec> s = ParseCalendar(cal);
    if (!s.ok()) return s.status();
    *spec.add_structured_calendar() = std::move(*s);
  }
  spec.clear_calendar();
  for (const sched::CalendarSpec& cal : in.exclude_calendar()) {
    absl::StatusOr<sched::StructuredCalendarSpec> s = ParseCalendar(cal);
    if (!s.ok()) return s.status();
    *spec.add_exclude_structured_calendar() = std::move(*s);
  }
  spec.clear_exclude_calendar();
  std::optional<std::string> cron_zone;
  for (const std::string& cs : in.cron_string()) {
    absl::StatusOr<CronParts> parts = ParseCronString(cs);
    if (!parts.ok()) return parts.status();
    if (cron_zone.has_value() && *cron_zone != parts->zone) {
      return Invalid("conflicting timezone names");  // all cron strings agree on the zone
    }
    cron_zone = parts->zone;
    if (parts->calendar) *spec.add_structured_calendar() = std::move(*parts->calendar);
    if (parts->interval) *spec.add_interval() = std::move(*parts->interval);
  }
  spec.clear_cron_string();
  if (cron_zone.has_value() && !cron_zone->empty()) {
    if ((!spec.timezone_name().empty() && spec.timezone_name() != *cron_zone) ||
        !spec.timezone_data().empty()) {
      return Invalid("conflicting timezone names");
    }
    spec.set_timezone_name(*cron_zone);
  }
  for (int n : {spec.structured_calendar_size(), spec.interval_size()}) {
    if (n > kMaxItems) return Invalid(absl::StrCat("a spec holds at most ", kMaxItems, " items of a kind"));
  }
  for (const auto& s : spec.structured_calendar()) {
    if (absl::Status st = ValidateStructured(s); !st.ok()) return st;
  }
  for (const auto& s : spec.exclude_structured_calendar()) {
    if (absl::Status st = ValidateStructured(s); !st.ok()) return st;
  }
  for (const auto& i : spec.interval()) {
    if (absl::Status st = ValidateInterval(i); !st.ok()) return st;
  }
  if (spec.has_jitter() && FromProtoDuration(spec.jitter()) < absl::ZeroDuration()) {
    return Invalid("jitter is negative");
  }
  return spec;
}

#pragma GCC diagnostic pop

absl::StatusOr<CompiledSpec> CompiledSpec::Compile(const sched::ScheduleSpec& in) {
  absl::StatusOr<sched::ScheduleSpec> spec = CanonicalizeSpec(in);
  if (!spec.ok()) return spec.status();
  CompiledSpec out;
  out.spec_ = std::move(*spec);
  if (!out.spec_.timezone_data().empty()) {
    return Invalid("timezone_data is not supported: give timezone_name (an IANA zone)");
  }
  const std::string& name = out.spec_.timezone_name();
  if (name.empty() || name == "UTC") {
    out.zone_ = absl::UTCTimeZone();
  } else if (name == "Local") {
    out.zone_ = absl::LocalTimeZone();
  } else if (name.size() > 255 || !absl::LoadTimeZone(name, &out.zone_)) {
    return Invalid(absl::StrCat("unknown time zone ", name));
  }
  for (const auto& c : out.spec_.structured_calendar()) out.calendars_.push_back(CompileCalendar(c));
  for (const auto& c : out.spec_.exclude_structured_calendar()) {
    out.excludes_.push_back(CompileCalendar(c));
  }
  for (const auto& i : out.spec_.interval()) {
    out.intervals_.emplace_back(std::max<int64_t>(absl::ToInt64Seconds(FromProtoDuration(i.interval())), 1),
                                std::max<int64_t>(absl::ToInt64Seconds(FromProtoDuration(i.phase())), 0));
  }
  if (out.spec_.has_start_time()) out.start_ = FromProtoTime(out.spec_.start_time());
  if (out.spec_.has_end_time()) out.end_ = FromProtoTime(out.spec_.end_time());
  out.jitter_ = FromProtoDuration(out.spec_.jitter());
  return out;
}

CompiledSpec::Calendar CompiledSpec::CompileCalendar(const sched::StructuredCalendarSpec& cal) {
  Calendar c;
  c.second = Bits(cal.second());
  c.minute = Bits(cal.minute());
  c.hour = Bits(cal.hour());
  c.day_of_month = Bits(cal.day_of_month());
  c.month = Bits(cal.month());
  c.day_of_week = Bits(cal.day_of_week());
  Iterate(cal.year(), [&](int v) { c.years.push_back(v); });
  return c;
}

bool CompiledSpec::Calendar::YearMatches(int y) const {
  return years.empty() || std::find(years.begin(), years.end(), y) != years.end();
}

bool CompiledSpec::Calendar::Matches(absl::Time t, const absl::TimeZone& zone) const {
  const absl::CivilSecond c = absl::ToCivilSecond(t, zone);
  return YearMatches(static_cast<int>(c.year())) && Has(month, c.month()) &&
         Has(day_of_month, c.day()) &&
         Has(day_of_week, Weekday(static_cast<int>(c.year()), c.month(), c.day())) &&
         Has(hour, c.hour()) && Has(minute, c.minute()) && Has(second, c.second());
}

// Temporal's compiledCalendar.next, field by field from the outside in.
std::optional<absl::Time> CompiledSpec::Calendar::Next(absl::Time t, const absl::TimeZone& zone) const {
  const absl::CivilSecond now = absl::ToCivilSecond(t, zone);
  int y = static_cast<int>(now.year()), mo = now.month(), d = now.day(), h = now.hour(),
      m = now.minute(), s = now.second();
  absl::Duration dst_offset = absl::ZeroDuration();
  if (absl::ToCivilSecond(t - absl::Hours(1), zone).hour() == h) {
    dst_offset = absl::Hours(1);  // in the second copy of a repeated hour
  }
  ++s;
  while (true) {
    if (s >= 60) m += 1, s = 0;
    if (m >= 60) {
      const absl::Time prev = At(zone, y, mo, d, h, 0, 0);
      h += 1, m = 0;
      const absl::Time next = At(zone, y, mo, d, h, 0, 0);
      // Two hours from one hour's start to the next: a repeated hour was stepped over; try
      // it again in its second copy.
      if (dst_offset == absl::ZeroDuration() && next - prev > absl::Hours(1)) {
        h -= 1;
        dst_offset = absl::Hours(1);
      } else {
        dst_offset = absl::ZeroDuration();
      }
    }
    if (h >= 24) d += 1, h = 0;
    if (d > DaysInMonth(mo, y)) mo += 1, d = 1;
    if (mo > 12) y += 1, mo = 1;
    if (y > kMaxCalendarYear) return std::nullopt;
    if (!YearMatches(y)) {
      y += 1, mo = 1, d = 1, h = 0, m = 0, s = 0;
      dst_offset = absl::ZeroDuration();
      continue;
    }
    bool again = false;
    while (!Has(month, mo)) {
      mo += 1, d = 1, h = 0, m = 0, s = 0;
      dst_offset = absl::ZeroDuration();
      if (mo > 12) {
        again = true;
        break;
      }
    }
    if (again) continue;
    while (!Has(day_of_month, d) || !Has(day_of_week, Weekday(y, mo, d))) {
      d += 1, h = 0, m = 0, s = 0;
      dst_offset = absl::ZeroDuration();
      if (d > DaysInMonth(mo, y)) {
        again = true;
        break;
      }
    }
    if (again) continue;
    while (!Has(hour, h)) {
      h += 1, m = 0, s = 0;
      dst_offset = absl::ZeroDuration();
      if (h >= 24) {
        again = true;
        break;
      }
    }
    if (again) continue;
    while (!Has(minute, m)) {
      m += 1, s = 0;
      if (m >= 60) {
        again = true;
        break;
      }
    }
    if (again) continue;
    while (!Has(second, s)) {
      s += 1;
      if (s >= 60) {
        again = true;
        break;
      }
    }
    if (again) continue;
    const absl::Time found = At(zone, y, mo, d, h, m, s);
    // A local time skipped by a DST change: its hour reads differently; go on after it.
    if (absl::ToCivilSecond(found, zone).hour() != h) {
      h += 1, m = 0, s = 0;
      continue;
    }
    return found + dst_offset;
  }
}

std::optional<absl::Time> CompiledSpec::RawNext(absl::Time after) const {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (const Calendar& c : calendars_) {
    if (std::optional<absl::Time> n = c.Next(after, zone_)) {
      best = std::min(best, absl::ToUnixSeconds(*n));
    }
  }
  const int64_t ts = absl::ToUnixSeconds(after);
  for (const auto& [interval, phase] : intervals_) {
    best = std::min(best, ((ts - phase) / interval + 1) * interval + phase);
  }
  if (best == std::numeric_limits<int64_t>::max()) return std::nullopt;
  return absl::FromUnixSeconds(best);
}

bool CompiledSpec::Excluded(absl::Time t) const {
  for (const Calendar& c : excludes_) {
    if (c.Matches(t, zone_)) return true;
  }
  return false;
}

std::optional<NextTime> CompiledSpec::GetNextTime(const std::string& jitter_seed,
                                                  absl::Time after) const {
  // Before the start: from just before it, so that its first second can match. Never before
  // 1970 nor after 2100 (a request's far times must not make the searches below long or
  // overflow).
  after = std::max(after, std::max(start_.value_or(absl::UnixEpoch()), absl::UnixEpoch()) -
                              absl::Seconds(1));
  if (absl::ToCivilYear(after, absl::UTCTimeZone()).year() > kMaxCalendarYear) return std::nullopt;
  auto past_end = [&](absl::Time t) {
    return (end_.has_value() && t > *end_) ||
           absl::ToCivilYear(t, absl::UTCTimeZone()).year() > kMaxCalendarYear;
  };
  std::optional<absl::Time> nominal;
  // Bounded: a spec excluding everything it matches stops after this many tries.
  for (int tries = 0; !nominal.has_value() || Excluded(*nominal); ++tries) {
    if (tries >= 100'000) return std::nullopt;
    nominal = RawNext(after);
    if (!nominal.has_value() || past_end(*nominal)) return std::nullopt;
    after = *nominal;
  }
  absl::Duration max_jitter = jitter_;
  if (std::optional<absl::Time> following = RawNext(*nominal)) {
    max_jitter = std::min(max_jitter, *following - *nominal);
  }
  return NextTime{*nominal, AddJitter(jitter_seed, *nominal, max_jitter)};
}

absl::Time AddJitter(const std::string& seed, absl::Time nominal, absl::Duration max_jitter) {
  if (max_jitter <= absl::ZeroDuration()) return nominal;
  // Go's time.Time.MarshalBinary of a UTC time: version 1, seconds since year 1 and
  // nanoseconds (big-endian), offset -1 (UTC).
  const int64_t unix_s = absl::ToUnixSeconds(nominal);
  const int64_t sec = unix_s + 62135596800LL;
  const int32_t nsec = static_cast<int32_t>(absl::ToInt64Nanoseconds(nominal - absl::FromUnixSeconds(unix_s)));
  std::string bin;
  bin.push_back(1);
  for (int i = 7; i >= 0; --i) bin.push_back(static_cast<char>((sec >> (8 * i)) & 0xff));
  for (int i = 3; i >= 0; --i) bin.push_back(static_cast<char>((nsec >> (8 * i)) & 0xff));
  bin.push_back(static_cast<char>(0xff));
  bin.push_back(static_cast<char>(0xff));
  bin += seed;
  const uint64_t fp = Fingerprint32(bin);
  const uint64_t ms = std::min<uint64_t>(absl::ToInt64Milliseconds(max_jitter), 0xffffffffULL);
  return nominal + absl::Milliseconds(static_cast<int64_t>((fp * ms) >> 32));
}

}  // namespace tock::server::scheduler
