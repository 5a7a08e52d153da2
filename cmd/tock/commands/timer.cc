#include "cmd/tock/commands/timer.h"

#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/confirm.h"
#include "lib/admin/timer_ops.h"
#include "lib/common/duration.h"
#include "lib/common/proto_json.h"
#include "lib/common/time_format.h"

namespace tock::cli {
namespace {

namespace tv1 = tock::timer::v1;

// What --payload-file may hold: the server's payload limit (100 KiB), and one byte to see past it.
constexpr size_t kMaxPayloadFileBytes = 100 * 1024;
// Table cells for long texts (the last error; JSON shows it whole).
constexpr size_t kMaxCellChars = 60;

struct Flags {
  admin::TimerFlags timer;
  std::string payload;
  std::string payload_file;
  std::string callback_url;
  std::string callback_timeout;
  std::string max_attempts_duration, initial_interval, max_interval;
  int32_t max_attempts = 0;
  double backoff_multiplier = 0;
  bool max_attempts_given = false, multiplier_given = false;
};

std::string Time(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return "-";
  return FormatTimestamp(FromProtoTime(t));
}

std::string Dur(const google::protobuf::Duration& d) {
  return FormatHumanDuration(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()));
}

std::string Cell(const std::string& text) {
  if (text.empty()) return "-";
  if (text.size() <= kMaxCellChars) return text;
  return text.substr(0, kMaxCellChars - 3) + "...";
}

std::string RetryText(const tv1::Timer& t) {
  if (!t.has_retry_policy()) return "defaults";
  const tv1::RetryPolicy& p = t.retry_policy();
  std::string out;
  auto add = [&out](const std::string& part) { absl::StrAppend(&out, out.empty() ? "" : ", ", part); };
  if (p.max_attempts() != 0) add(absl::StrCat("max attempts ", p.max_attempts()));
  if (p.has_max_attempts_duration()) add(absl::StrCat("for ", Dur(p.max_attempts_duration())));
  if (p.has_initial_interval()) add(absl::StrCat("initial ", Dur(p.initial_interval())));
  if (p.backoff_multiplier() != 0) add(absl::StrCat("x", p.backoff_multiplier()));
  if (p.has_max_interval()) add(absl::StrCat("max interval ", Dur(p.max_interval())));
  return out.empty() ? "defaults" : out;
}

absl::Status PrintTimer(CommandContext& ctx, const tv1::Timer& t, const std::string& result = "") {
  absl::StatusOr<Printer> printer = ctx.printer();
  if (!printer.ok()) return printer.status();
  CardRows card = {{"Id", t.id()},
                   {"Namespace", t.namespace_()},
                   {"State", admin::TimerStateLabel(t.state())},
                   {"Execute at", Time(t.execute_at())},
                   {"Callback URL", t.callback_url()},
                   {"Payload", t.payload_json().empty() ? "-" : t.payload_json()},
                   {"Attempts", std::to_string(t.attempts())},
                   {"Next attempt", Time(t.next_attempt_at())},
                   {"Last error", t.last_error().empty() ? "-" : t.last_error()},
                   {"First attempt", Time(t.executed_at())},
                   {"Retry policy", RetryText(t)},
                   {"Callback timeout", absl::StrCat(t.callback_timeout_seconds(), "s")},
                   {"Created", Time(t.created_at())},
                   {"Updated", Time(t.updated_at())}};
  if (!result.empty()) card.insert(card.begin(), {"Result", result});
  printer->Object(ProtoToJson(t), card);
  return absl::OkStatus();
}

// Reads --payload-file ("-": standard input), bounded.
absl::StatusOr<std::string> ReadPayloadFile(CommandContext& ctx, const std::string& path) {
  std::string text;
  std::ifstream file;
  std::istream* in = &ctx.in;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return absl::InvalidArgumentError(absl::StrCat("--payload-file: cannot read ", path));
    in = &file;
  }
  text.resize(kMaxPayloadFileBytes + 1);
  in->read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in->gcount()));
  if (text.size() > kMaxPayloadFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("--payload-file: more than ", kMaxPayloadFileBytes, " bytes (the payload limit)"));
  }
  return text;
}

// The typed flags into the request flags (payload file read, optionals set when given).
absl::Status Resolve(CommandContext& ctx, Flags& f) {
  if (!f.payload.empty() && !f.payload_file.empty()) {
    return absl::InvalidArgumentError("give --payload or --payload-file, not both");
  }
  if (!f.payload.empty()) f.timer.payload_json = f.payload;
  if (!f.payload_file.empty()) {
    absl::StatusOr<std::string> text = ReadPayloadFile(ctx, f.payload_file);
    if (!text.ok()) return text.status();
    f.timer.payload_json = *text;
  }
  if (!f.callback_url.empty()) f.timer.callback_url = f.callback_url;
  if (!f.callback_timeout.empty()) f.timer.callback_timeout = f.callback_timeout;
  if (f.max_attempts_given) f.timer.max_attempts = f.max_attempts;
  if (f.multiplier_given) f.timer.backoff_multiplier = f.backoff_multiplier;
  if (!f.max_attempts_duration.empty()) f.timer.max_attempts_duration = f.max_attempts_duration;
  if (!f.initial_interval.empty()) f.timer.initial_interval = f.initial_interval;
  if (!f.max_interval.empty()) f.timer.max_interval = f.max_interval;
  return absl::OkStatus();
}

void AddTimerId(CLI::App* cmd, std::string& id) {
  cmd->add_option("id", id, "Timer id (unique in the namespace, at most 255 bytes)")->required();
}

void AddTimerFlags(CLI::App* cmd, Flags& f) {
  cmd->add_option("--at", f.timer.at, "Fire at this time: RFC 3339, a date, or now");
  cmd->add_option("--in", f.timer.in, "Fire after this long from now: 90s, 15m, 1h30m, 2d");
  cmd->add_option("--callback-url", f.callback_url,
                  "POSTed when the timer is due: http:// or https://, at most 2048 bytes");
  cmd->add_option("--payload", f.payload, "JSON sent in the callback's \"payload\" (at most 100 KiB)");
  cmd->add_option("--payload-file", f.payload_file, "Read the payload JSON from this file (- for stdin)");
  cmd->add_option("--max-attempts", f.max_attempts, "Attempts in all, the first included (0: no limit; up to 1000)")
      ->each([&f](const std::string&) { f.max_attempts_given = true; });
  cmd->add_option("--max-attempts-duration", f.max_attempts_duration,
                  "Stop retrying this long after the first attempt (default 1h, up to 7d)");
  cmd->add_option("--initial-interval", f.initial_interval, "Wait before the first retry (default 1s)");
  cmd->add_option("--backoff-multiplier", f.backoff_multiplier,
                  "Each retry waits this many times longer (default 2, 1 to 100)")
      ->each([&f](const std::string&) { f.multiplier_given = true; });
  cmd->add_option("--max-interval", f.max_interval, "Longest wait between retries (default 5m, up to 1d)");
  cmd->add_option("--callback-timeout", f.callback_timeout,
                  "How long one callback may take, whole seconds 1s to 60s (default 10s)");
}

const char kProtocol[] =
    "When the timer is due, the server POSTs its callback URL with the JSON body {\"namespace\", "
    "\"id\", \"payload\", \"executeAt\", \"attempt\"}. An answer of 200 {\"ok\": true} completes it; "
    "200 {\"ok\": false, \"nextExecuteAt\": TIME} fires it again then; a 4xx fails it at once; "
    "anything else (5xx, a timeout, a refused connection, another body) is retried with "
    "exponential backoff until the retry policy runs out, then the timer is failed with the "
    "last error. A timer never fires before its time, and fires at least once.\n";

void AddCreate(CLI::App& group, CommandContext& ctx) {
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("create", "Create a timer (or replace the timer of that id)");
  AddTimerId(cmd, f->timer.id);
  AddTimerFlags(cmd, *f);
  cmd->footer(std::string(kProtocol) +
              "\n"
              "Creating an id that exists replaces that timer; the same content again changes "
              "nothing (Result: unchanged), so a retried create is safe. --at or --in and "
              "--callback-url are required.\n"
              "\n"
              "Examples:\n"
              "  tock timer create reminder-7 --in 15m --callback-url https://api.example.com/hooks/timer \\\n"
              "      --payload '{\"user\": 7}'\n"
              "  tock timer create invoice-42 --at 2026-12-01T09:00:00Z --callback-url http://billing:8080/due \\\n"
              "      --payload-file invoice.json --max-attempts 5 --initial-interval 30s --max-interval 10m\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      if (absl::Status s = Resolve(ctx, *f); !s.ok()) return s;
      absl::StatusOr<tv1::CreateTimerRequest> req =
          admin::MakeCreateTimerRequest(ctx.options.namespace_name, f->timer, absl::Now());
      if (!req.ok()) return req.status();
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      absl::StatusOr<tv1::CreateTimerResponse> created = admin::CreateTimer(**connection, *req);
      if (!created.ok()) return created.status();
      return PrintTimer(ctx, created->timer(), created->created() ? "created" : "unchanged (the same timer is stored)");
    };
  });
}

void AddGet(CLI::App& group, CommandContext& ctx) {
  auto id = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("get", "Show a timer: state, attempts, last error, next attempt");
  AddTimerId(cmd, *id);
  cmd->footer(
      "States: Pending (waiting for its time or its next attempt), Firing (a callback is in "
      "flight), Succeeded, Failed (a 4xx answer, or the retry policy ran out: see Last error), "
      "Deleted. Exit status 3 when there is no such timer.\n"
      "\n"
      "Examples:\n"
      "  tock timer get reminder-7\n"
      "  tock timer get reminder-7 -n orders -o json | jq -r .state\n");
  cmd->callback([&ctx, id] {
    ctx.action = [&ctx, id]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      absl::StatusOr<tv1::Timer> timer = admin::GetTimer(**connection, ctx.options.namespace_name, *id);
      if (!timer.ok()) return timer.status();
      return PrintTimer(ctx, *timer);
    };
  });
}

void AddUpdate(CLI::App& group, CommandContext& ctx) {
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("update", "Change a pending timer's time, callback, payload or policy");
  AddTimerId(cmd, f->timer.id);
  AddTimerFlags(cmd, *f);
  cmd->footer(
      "Only what is given changes; a retry flag replaces the whole retry policy (flags not "
      "given take their defaults). Only a Pending timer can be updated (exit status 1 "
      "otherwise; 3 when there is no such timer).\n"
      "\n"
      "Examples:\n"
      "  tock timer update reminder-7 --in 1h\n"
      "  tock timer update invoice-42 --callback-url https://billing.example.com/due --callback-timeout 30s\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      if (absl::Status s = Resolve(ctx, *f); !s.ok()) return s;
      absl::StatusOr<tv1::UpdateTimerRequest> req =
          admin::MakeUpdateTimerRequest(ctx.options.namespace_name, f->timer, absl::Now());
      if (!req.ok()) return req.status();
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      absl::StatusOr<tv1::Timer> timer = admin::UpdateTimer(**connection, *req);
      if (!timer.ok()) return timer.status();
      return PrintTimer(ctx, *timer);
    };
  });
}

void AddDelete(CLI::App& group, CommandContext& ctx) {
  auto id = std::make_shared<std::string>();
  auto yes = std::make_shared<bool>(false);
  CLI::App* cmd = group.add_subcommand("delete", "Delete a pending timer: it never fires");
  AddTimerId(cmd, *id);
  cmd->add_flag("-y,--yes", *yes, "Do not ask (required off a terminal)");
  cmd->footer(
      "The timer stays readable with state Deleted until an id is created again. Only a "
      "Pending timer can be deleted (exit status 1 otherwise; 3 when there is no such timer).\n"
      "\n"
      "Examples:\n"
      "  tock timer delete reminder-7 --yes\n"
      "  tock timer delete invoice-42 -n billing --yes -o json\n");
  cmd->callback([&ctx, id, yes] {
    ctx.action = [&ctx, id, yes]() -> absl::Status {
      if (absl::Status s = Confirm(ctx, *yes, absl::StrCat("delete timer ", *id)); !s.ok()) return s;
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      absl::StatusOr<tv1::Timer> timer = admin::DeleteTimer(**connection, ctx.options.namespace_name, *id);
      if (!timer.ok()) return timer.status();
      return PrintTimer(ctx, *timer);
    };
  });
}

void AddList(CLI::App& group, CommandContext& ctx) {
  struct ListFlags {
    std::string state;
    int64_t limit = 0;
  };
  auto f = std::make_shared<ListFlags>();
  CLI::App* cmd = group.add_subcommand("list", "List a namespace's timers by id");
  cmd->add_option("--state", f->state, "Only timers in this state")
      ->check(CLI::IsMember({"pending", "firing", "succeeded", "failed", "deleted"}, CLI::ignore_case));
  cmd->add_option("--limit", f->limit, "At most this many timers (default: all)");
  cmd->footer(
      "Examples:\n"
      "  tock timer list\n"
      "  tock timer list --state failed -n billing\n"
      "  tock timer list -o jsonl | jq -r 'select(.attempts > 1) | .id'\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      absl::StatusOr<tv1::TimerState> state = admin::ParseTimerState(f->state);
      if (!state.ok()) return state.status();
      if (f->limit < 0) return absl::InvalidArgumentError("--limit must be 0 (all) or more");
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList({"ID", "STATE", "EXECUTE AT", "ATTEMPTS", "NEXT ATTEMPT", "CALLBACK URL", "LAST ERROR"});
      absl::Status s = admin::ListTimers(
          **connection, ctx.options.namespace_name, *state,
          [&](const tv1::Timer& t) {
            printer->Row(ProtoToJson(t), {t.id(), admin::TimerStateLabel(t.state()), Time(t.execute_at()),
                                          std::to_string(t.attempts()), Time(t.next_attempt_at()),
                                          Cell(t.callback_url()), Cell(t.last_error())});
            return absl::OkStatus();
          },
          f->limit);
      // A list that failed before its first row prints nothing, only the error.
      if (!s.ok() && printer->rows_seen() == 0) return s;
      printer->EndList();
      printer->EmptyNote("No timers.");
      return s;
    };
  });
}

}  // namespace

void AddTimerCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand(
      "timer", "Durable timers of tock-server: a callback URL POSTed at a time, retried by a policy");
  group->require_subcommand(1);
  group->footer(std::string(kProtocol) +
                "\n"
                "The same timers are served over HTTP/JSON on tock-server --http-port "
                "(POST /api/v1/timers/create|get|update|delete|list).\n"
                "\n"
                "Examples:\n"
                "  tock timer create reminder-7 --in 15m --callback-url https://api.example.com/hooks/timer\n"
                "  tock timer get reminder-7\n"
                "  tock timer list --state pending\n");
  AddCreate(*group, ctx);
  AddGet(*group, ctx);
  AddUpdate(*group, ctx);
  AddDelete(*group, ctx);
  AddList(*group, ctx);
}

}  // namespace tock::cli
