#include "cmd/tock/repl/inspector.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tock/output/branch_format.h"
#include "cmd/tock/output/history_format.h"
#include "cmd/tock/repl/timeline.h"
#include "lib/admin/mutable_state_ops.h"
#include "lib/admin/workflow_ops.h"
#include "lib/common/json_flatten.h"
#include "lib/common/proto_json.h"

namespace tock::cli::repl {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;

absl::Status Usage(const std::string& text) {
  return absl::InvalidArgumentError(absl::StrCat("usage: ", text));
}

// Lower-case letters and digits only: "TimerFired", "timer_fired" and "TIMER_FIRED" match.
std::string Folded(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) {
      out += absl::ascii_tolower(static_cast<unsigned char>(c));
    }
  }
  return out;
}

// "N", "A..B", "A.." or "..B" (an open end is the first or `last` id); false otherwise.
bool ParseIdRange(const std::string& text, int64_t last, int64_t& from, int64_t& to) {
  const size_t dots = text.find("..");
  if (dots == std::string::npos) {
    if (!absl::SimpleAtoi(text, &from)) return false;
    to = from;
    return true;
  }
  const std::string a = text.substr(0, dots), b = text.substr(dots + 2);
  from = 1;
  to = last;
  return (a.empty() || absl::SimpleAtoi(a, &from)) && (b.empty() || absl::SimpleAtoi(b, &to));
}

}  // namespace

absl::StatusOr<std::unique_ptr<HistoryInspector>> HistoryInspector::Open(
    CommandContext& ctx, const std::string& workflow_id, const std::string& run_id) {
  std::unique_ptr<HistoryInspector> inspector(new HistoryInspector(ctx, workflow_id, run_id));
  if (absl::Status s = inspector->Load(); !s.ok()) return s;
  return inspector;
}

absl::Status HistoryInspector::Load() {
  auto c = ctx_.connection();
  if (!c.ok()) return c.status();
  events_.clear();
  absl::Status s = admin::ReadHistory(**c, namespace_, workflow_id_, run_id_, false,
                                      [this](const HistoryEvent& e) {
                                        events_.push_back(e);
                                        return absl::OkStatus();
                                      });
  if (!s.ok()) return s;
  if (run_id_.empty() && !events_.empty()) {
    // Pin the run that was read, so `follow` and `pending` stay on it.
    auto d = admin::DescribeWorkflow(**c, namespace_, workflow_id_, "");
    if (d.ok()) run_id_ = d->workflow_execution_info().execution().run_id();
  }
  return absl::OkStatus();
}

const std::vector<std::string>& HistoryInspector::CommandNames() {
  static const std::vector<std::string> names = {"events", "event",   "find",     "next",
                                                 "prev",   "pending", "timeline", "branches",
                                                 "follow", "export",  "back",     "help"};
  return names;
}

std::string HistoryInspector::Help() {
  return "History inspector commands:\n"
         "  events [FROM..TO]   events in a range of ids (default: the current page)\n"
         "  event N             every field of event N, payloads decoded\n"
         "  find TYPE|TEXT      events of a type (TimerFired, timer_fired) or containing TEXT\n"
         "  next, prev          the next or previous page of 20 events\n"
         "  pending             pending activities, timers and child workflows\n"
         "  timeline            activities, timers and children on a time axis\n"
         "  branches            every history branch (its version history: event ids and\n"
         "                      failover versions), the current one marked\n"
         "  follow              print new events until the run closes (Ctrl-C stops)\n"
         "  export FILE         write the history as JSON (for the SDK replayer)\n"
         "  back                leave the inspector\n";
}

absl::Status HistoryInspector::Execute(const std::vector<std::string>& words) {
  if (words.empty()) return absl::OkStatus();
  const std::string& command = words[0];
  const std::vector<std::string> args(words.begin() + 1, words.end());
  if (command == "events") return Events(args);
  if (command == "event") return Event(args);
  if (command == "find") return Find(args);
  if (command == "next") return Page(+1);
  if (command == "prev") return Page(-1);
  if (command == "pending") return Pending();
  if (command == "timeline") return Timeline();
  if (command == "branches") return Branches();
  if (command == "follow") return Follow();
  if (command == "export") return Export(args);
  if (command == "help") {
    ctx_.out << Help();
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown inspector command \"", command,
                                                 "\"; try: ", absl::StrJoin(CommandNames(), ", "),
                                                 " (or leave with back)"));
}

absl::Status HistoryInspector::PrintEvents(size_t from, size_t to) {
  auto printer = ctx_.printer();
  if (!printer.ok()) return printer.status();
  printer->BeginList({"ID", "TIME", "TYPE", "DETAILS"});
  for (size_t i = from; i < to && i < events_.size(); ++i) {
    printer->Row(DecodedJson(events_[i]), EventRow(events_[i]));
  }
  printer->EndList();
  return absl::OkStatus();
}

absl::Status HistoryInspector::Events(const std::vector<std::string>& args) {
  if (args.empty()) return PrintEvents(page_start_, page_start_ + kPageSize);
  if (args.size() != 1) return Usage("events [FROM..TO]");
  // Event ids are dense from 1, so id N is at index N-1.
  int64_t from = 0, to = 0;
  if (!ParseIdRange(args[0], static_cast<int64_t>(events_.size()), from, to)) {
    return Usage(absl::StrCat("events [FROM..TO], e.g. events 5..12 (got \"", args[0], "\")"));
  }
  if (from < 1 || to < from) {
    return absl::InvalidArgumentError(
        absl::StrCat("the range ", args[0], " is empty; event ids run from 1 to ", events_.size()));
  }
  page_start_ = std::min(static_cast<size_t>(from - 1), events_.size());
  return PrintEvents(static_cast<size_t>(from - 1), static_cast<size_t>(to));
}

absl::Status HistoryInspector::Event(const std::vector<std::string>& args) {
  int64_t id = 0;
  if (args.size() != 1 || !absl::SimpleAtoi(args[0], &id)) return Usage("event N");
  if (id < 1 || id > static_cast<int64_t>(events_.size())) {
    return absl::NotFoundError(
        absl::StrCat("no event ", args[0], " in this history (events 1 to ", events_.size(), ")"));
  }
  auto printer = ctx_.printer();
  if (!printer.ok()) return printer.status();
  const nlohmann::json json = DecodedJson(events_[id - 1]);
  CardRows card;
  for (auto& [path, value] : FlattenJson(json)) card.emplace_back(path, value);
  printer->Object(json, card);
  return absl::OkStatus();
}

absl::Status HistoryInspector::Find(const std::vector<std::string>& args) {
  if (args.empty()) return Usage("find TYPE|TEXT");
  std::string needle = args[0];
  for (size_t i = 1; i < args.size(); ++i) absl::StrAppend(&needle, " ", args[i]);
  const std::string folded = Folded(needle);
  auto printer = ctx_.printer();
  if (!printer.ok()) return printer.status();
  printer->BeginList({"ID", "TIME", "TYPE", "DETAILS"});
  for (const HistoryEvent& e : events_) {
    const nlohmann::json json = DecodedJson(e);
    const bool type_match = !folded.empty() && absl::StrContains(Folded(EventTypeLabel(e)), folded);
    if (type_match || absl::StrContains(json.dump(), needle)) printer->Row(json, EventRow(e));
  }
  const size_t found = printer->rows_seen();
  printer->EndList();
  if (found == 0) {
    return absl::NotFoundError(absl::StrCat("no event of type or containing \"", needle, "\""));
  }
  return absl::OkStatus();
}

absl::Status HistoryInspector::Page(int direction) {
  if (direction > 0) {
    if (page_start_ + kPageSize >= events_.size()) {
      return absl::OutOfRangeError(
          absl::StrCat("no next page: the history has ", events_.size(), " events"));
    }
    page_start_ += kPageSize;
  } else {
    if (page_start_ == 0) return absl::OutOfRangeError("no previous page: this is the first");
    page_start_ = page_start_ >= kPageSize ? page_start_ - kPageSize : 0;
  }
  return PrintEvents(page_start_, page_start_ + kPageSize);
}

absl::Status HistoryInspector::Pending() {
  auto c = ctx_.connection();
  if (!c.ok()) return c.status();
  auto printer = ctx_.printer();
  if (!printer.ok()) return printer.status();
  printer->BeginList({"KIND", "ID", "NAME", "STATE", "DETAILS"});
  // Timers are not in DescribeWorkflowExecution: those started and neither fired nor
  // canceled, from the history.
  std::map<int64_t, const HistoryEvent*> timers;
  for (const HistoryEvent& e : events_) {
    if (e.event_type() == enums::EVENT_TYPE_TIMER_STARTED) timers[e.event_id()] = &e;
    if (e.event_type() == enums::EVENT_TYPE_TIMER_FIRED) {
      timers.erase(e.timer_fired_event_attributes().started_event_id());
    }
    if (e.event_type() == enums::EVENT_TYPE_TIMER_CANCELED) {
      timers.erase(e.timer_canceled_event_attributes().started_event_id());
    }
  }
  auto described = admin::DescribeWorkflow(**c, namespace_, workflow_id_, run_id_);
  if (described.ok()) {
    for (const auto& a : described->pending_activities()) {
      printer->Row(
          DecodedJson(a),
          {"activity", a.activity_id(), a.activity_type().name(),
           EnumLabel(enums::PendingActivityState_Name(a.state()), "PENDING_ACTIVITY_STATE_"),
           absl::StrCat(
               "attempt=", a.attempt(),
               a.has_last_failure() ? " last_failure=" + a.last_failure().message() : "")});
    }
    for (const auto& ch : described->pending_children()) {
      printer->Row(DecodedJson(ch), {"child", ch.workflow_id(), ch.workflow_type_name(), "Started",
                                     absl::StrCat("run_id=", ch.run_id())});
    }
  } else if (described.status().code() != absl::StatusCode::kNotFound) {
    return described.status();  // gone (archived, deleted): only the history's timers
  }
  for (const auto& [id, e] : timers) {
    const auto& t = e->timer_started_event_attributes();
    printer->Row(DecodedJson(*e), {"timer", t.timer_id(), "", "Started",
                                   absl::StrCat("started_event_id=", id, " fires_after=",
                                                ProtoToJson(t.start_to_fire_timeout()).dump())});
  }
  if (printer->rows_seen() == 0 && printer->format() == OutputFormat::kTable) {
    ctx_.out << "(nothing pending)\n";
    return absl::OkStatus();
  }
  printer->EndList();
  return absl::OkStatus();
}

absl::Status HistoryInspector::Timeline() {
  const std::vector<TimelineRow> rows = BuildTimeline(events_);
  auto printer = ctx_.printer();
  if (!printer.ok()) return printer.status();
  if (printer->format() == OutputFormat::kJson || printer->format() == OutputFormat::kJsonl) {
    printer->BeginList({});
    for (const TimelineRow& r : rows) {
      printer->Row({{"kind", r.kind},
                    {"name", r.name},
                    {"start", absl::FormatTime(absl::RFC3339_full, r.start, absl::UTCTimeZone())},
                    {"durationSeconds", absl::ToDoubleSeconds(r.end - r.start)},
                    {"attempts", r.attempts},
                    {"outcome", r.outcome}},
                   {});
    }
    printer->EndList();
    return absl::OkStatus();
  }
  ctx_.out << RenderTimeline(rows);
  return absl::OkStatus();
}

absl::Status HistoryInspector::Branches() {
  auto c = ctx_.connection();
  if (!c.ok()) return c.status();
  // Every branch the server keeps for the run (a run forked by conflict resolution has
  // several), from Tock's DescribeMutableState. A Temporal frontend lacks that call, and a
  // run deleted after its retention has no state left: then the history's own items.
  auto state = admin::DescribeMutableState(**c, namespace_, workflow_id_, run_id_);
  if (state.ok()) return PrintBranches(*state);
  if (state.status().code() != absl::StatusCode::kUnimplemented &&
      state.status().code() != absl::StatusCode::kNotFound) {
    return state.status();
  }
  ctx_.err << (state.status().code() == absl::StatusCode::kUnimplemented
                   ? "(this server does not describe branches: the loaded history's version "
                     "items)\n"
                   : "(the run has no stored state: the loaded history's version items)\n");
  // The loaded history's version history: one item per run of equal failover versions, at
  // the last event id of that run (SPEC §2.3).
  auto printer = ctx_.printer();
  if (!printer.ok()) return printer.status();
  printer->BeginList({"ITEM", "EVENT ID", "VERSION"});
  int item = 0;
  for (size_t i = 0; i < events_.size(); ++i) {
    const bool last_of_run =
        i + 1 == events_.size() || events_[i + 1].version() != events_[i].version();
    if (!last_of_run) continue;
    printer->Row({{"eventId", std::to_string(events_[i].event_id())},
                  {"version", std::to_string(events_[i].version())}},
                 {std::to_string(++item), std::to_string(events_[i].event_id()),
                  std::to_string(events_[i].version())});
  }
  printer->EndList();
  return absl::OkStatus();
}

absl::Status HistoryInspector::PrintBranches(
    const tock::admin::v1::DescribeMutableStateResponse& state) {
  auto printer = ctx_.printer();
  if (!printer.ok()) return printer.status();
  printer->BeginList(BranchColumns());
  for (int i = 0; i < state.branches_size(); ++i) {
    const auto& branch = state.branches(i);
    std::vector<std::vector<std::string>> rows = BranchRows(branch, i);
    for (size_t k = 0; k < rows.size(); ++k) {
      nlohmann::json json = {{"branch", i},
                             {"isCurrent", branch.is_current()},
                             {"branchToken", branch.branch_token()}};
      if (k < static_cast<size_t>(branch.items_size())) {
        json["eventId"] = std::to_string(branch.items(static_cast<int>(k)).event_id());
        json["version"] = std::to_string(branch.items(static_cast<int>(k)).version());
      }
      printer->Row(json, std::move(rows[k]));
    }
  }
  printer->EndList();
  if (printer->format() == OutputFormat::kTable) {
    ctx_.out << "last write version " << state.last_write_version()
             << (state.zombie() ? "; the run is a zombie (kept, never run here)" : "") << "\n";
  }
  return absl::OkStatus();
}

absl::Status HistoryInspector::Follow() {
  auto c = ctx_.connection();
  if (!c.ok()) return c.status();
  auto printer = ctx_.printer();
  if (!printer.ok()) return printer.status();
  const int64_t known = static_cast<int64_t>(events_.size());
  printer->BeginList({"ID", "TIME", "TYPE", "DETAILS"});
  absl::Status s = admin::ReadHistory(
      **c, namespace_, workflow_id_, run_id_, true,
      [&](const HistoryEvent& e) {
        if (e.event_id() <= known) return absl::OkStatus();  // already loaded
        events_.push_back(e);
        printer->Row(DecodedJson(e), EventRow(e));
        if (printer->format() == OutputFormat::kTable) printer->EndList();
        ctx_.out << std::flush;
        return absl::OkStatus();
      },
      [this] { return ctx_.interrupted(); });
  printer->EndList();
  if (s.code() == absl::StatusCode::kCancelled && ctx_.interrupted()) return absl::OkStatus();
  return s;
}

absl::Status HistoryInspector::Export(const std::vector<std::string>& args) {
  if (args.size() != 1) return Usage("export FILE");
  temporal::api::history::v1::History history;
  for (const HistoryEvent& e : events_) *history.add_events() = e;
  // The history holds payloads: a new file is its owner's only (an existing one keeps its mode).
  if (const int fd = ::open(args[0].c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600); fd >= 0) {
    ::close(fd);
  }
  std::ofstream file(args[0], std::ios::trunc);
  if (!file) return absl::InvalidArgumentError(absl::StrCat("cannot write ", args[0]));
  file << ProtoToJson(history).dump(2) << "\n";
  file.close();
  if (!file) return absl::UnavailableError(absl::StrCat("writing ", args[0], " failed"));
  ctx_.err << "wrote " << events_.size() << " events to " << args[0] << "\n";
  return absl::OkStatus();
}

}  // namespace tock::cli::repl
