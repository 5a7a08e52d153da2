#include "cmd/tock/context.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "lib/common/duration.h"

namespace tock::cli {
namespace {

std::string Env(std::initializer_list<const char*> names, const std::string& fallback) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  return fallback;
}

}  // namespace

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnavailable;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return kExitConflict;
    default:
      return kExitError;
  }
}

GlobalOptions DefaultGlobalOptions() {
  GlobalOptions o;
  o.address = Env({"TOCK_ADDRESS", "TEMPORAL_ADDRESS"}, "127.0.0.1:7233");
  o.namespace_name = Env({"TOCK_NAMESPACE", "TEMPORAL_NAMESPACE"}, "default");
  o.api_key = Env({"TOCK_API_KEY", "TEMPORAL_API_KEY"}, "");
  o.color = std::getenv("NO_COLOR") != nullptr ? "never" : "auto";
  return o;
}

absl::StatusOr<client::Connection*> CommandContext::connection() {
  absl::StatusOr<absl::Duration> timeout = ParseHumanDuration(options.timeout);
  if (!timeout.ok() || *timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid --timeout \"", options.timeout, "\": use a positive duration such as 10s or 1m"));
  }
  client::ConnectionOptions o;
  o.address = options.address;
  o.timeout = *timeout;
  o.api_key = options.api_key;
  o.tls.enabled = options.tls || !options.tls_ca_cert.empty() || !options.tls_cert.empty();
  o.tls.ca_cert_path = options.tls_ca_cert;
  o.tls.cert_path = options.tls_cert;
  o.tls.key_path = options.tls_key;
  o.tls.server_name = options.tls_server_name;
  std::string key = absl::StrCat(o.address, "|", o.tls.enabled, "|", o.tls.ca_cert_path, "|",
                                 o.tls.cert_path, "|", o.api_key, "|", options.timeout);
  if (connection_ == nullptr || key != connection_key_) {
    absl::StatusOr<std::unique_ptr<client::Connection>> opened = client::Connection::Open(o);
    if (!opened.ok()) return opened.status();
    connection_ = std::move(*opened);
    connection_key_ = key;
  }
  return connection_.get();
}

absl::StatusOr<Printer> CommandContext::printer() {
  OutputFormat format = stdout_is_terminal ? OutputFormat::kTable : OutputFormat::kJson;
  if (!options.output.empty()) {
    absl::StatusOr<OutputFormat> parsed = ParseOutputFormat(options.output);
    if (!parsed.ok()) return parsed.status();
    format = *parsed;
  }
  bool color = options.color == "always" || (options.color == "auto" && stdout_is_terminal);
  return Printer(out, format, color);
}

}  // namespace tock::cli
