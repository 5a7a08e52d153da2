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

GlobalOptions DefaultGlobalOptions() {
  GlobalOptions o;
  o.address = Env({"TOCK_ADDRESS", "TEMPORAL_ADDRESS"}, "127.0.0.1:7233");
  o.namespace_name = Env({"TOCK_NAMESPACE", "TEMPORAL_NAMESPACE"}, "default");
  o.api_key = Env({"TOCK_API_KEY", "TEMPORAL_API_KEY"}, "");
  return o;
}

absl::StatusOr<OutputFormat> ResolveOutputFormat(const std::string& output,
                                                 bool stdout_is_terminal) {
  if (output.empty()) return stdout_is_terminal ? OutputFormat::kTable : OutputFormat::kJson;
  return ParseOutputFormat(output);
}

bool ResolveColor(const std::string& color, bool stdout_is_terminal, bool no_color_env) {
  if (color == "always") return true;
  if (color == "never") return false;
  return stdout_is_terminal && !no_color_env;
}

absl::StatusOr<client::ConnectionOptions> ToConnectionOptions(const GlobalOptions& options) {
  absl::StatusOr<absl::Duration> timeout = ParseHumanDuration(options.timeout);
  if (!timeout.ok() || *timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid --timeout \"", options.timeout, "\": use a positive duration such as 10s or 1m"));
  }
  client::ConnectionOptions o;
  o.address = options.address;
  o.timeout = *timeout;
  o.api_key = options.api_key;
  if (!options.identity.empty()) o.identity = options.identity;
  // Any TLS file implies TLS: nobody means to send a client key in the clear.
  o.tls.enabled = options.tls || !options.tls_ca_cert.empty() || !options.tls_cert.empty() ||
                  !options.tls_key.empty() || !options.tls_server_name.empty();
  o.tls.ca_cert_path = options.tls_ca_cert;
  o.tls.cert_path = options.tls_cert;
  o.tls.key_path = options.tls_key;
  o.tls.server_name = options.tls_server_name;
  return o;
}

absl::StatusOr<client::Connection*> CommandContext::connection() {
  absl::StatusOr<client::ConnectionOptions> o = ToConnectionOptions(options);
  if (!o.ok()) return o.status();
  std::string key = absl::StrCat(o->address, "|", o->tls.enabled, "|", o->tls.ca_cert_path, "|",
                                 o->tls.cert_path, "|", o->tls.key_path, "|",
                                 o->tls.server_name, "|", o->api_key, "|", o->identity, "|",
                                 absl::FormatDuration(o->timeout));
  std::lock_guard lock(connection_mu_);
  if (connection_ == nullptr || key != connection_key_) {
    absl::StatusOr<std::unique_ptr<client::Connection>> opened = client::Connection::Open(*o);
    if (!opened.ok()) return opened.status();
    connection_ = std::move(*opened);
    connection_key_ = key;
    if (interrupted_) connection_->Interrupt();
  }
  return connection_.get();
}

void CommandContext::Interrupt() {
  std::lock_guard lock(connection_mu_);
  interrupted_ = true;
  if (connection_ != nullptr) connection_->Interrupt();
}

void CommandContext::ClearInterrupt() {
  std::lock_guard lock(connection_mu_);
  interrupted_ = false;
  if (connection_ != nullptr) connection_->ClearInterrupt();
}

bool CommandContext::interrupted() {
  std::lock_guard lock(connection_mu_);
  return interrupted_;
}

absl::StatusOr<Printer> CommandContext::printer() {
  absl::StatusOr<OutputFormat> format = ResolveOutputFormat(options.output, stdout_is_terminal);
  if (!format.ok()) return format.status();
  return Printer(out, *format, ResolveColor(options.color, stdout_is_terminal, no_color_env));
}

}  // namespace tock::cli
