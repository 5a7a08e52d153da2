#include "server-core/config/server_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/common/duration.h"
#include "lib/common/log.h"
#include "lib/common/message_size.h"
#include "server-core/config/yaml_fields.h"
#include "server-core/persistence/sqlite/sqlite_persistence.h"
#include "server-core/security/authz_internode.h"
#include "server-core/timers/callback_address_policy.h"
#include "server-core/timers/callback_signature.h"

namespace tock::server {
namespace {

using config_yaml::CheckKeys;
using config_yaml::FieldError;
using config_yaml::Read;

// A human duration ("10s", "1m30s") when present; INVALID_ARGUMENT naming the key otherwise.
absl::Status ReadDuration(const YAML::Node& node, const std::string& path, absl::Duration* out) {
  std::string text;
  if (absl::Status s = Read(node, path, "a duration such as 10s", &text); !s.ok() || !node) return s;
  absl::StatusOr<absl::Duration> d = ParseHumanDuration(text);
  if (!d.ok()) return FieldError(path, "must be a duration such as 10s, 1m or 1m30s");
  *out = *d;
  return absl::OkStatus();
}

// `history.eager_activities` / `history.eager_workflow_start` (history/eager_dispatch.h):
// `true`, `false`, or `{default: BOOL, namespaces: {NAME: BOOL}}`.
absl::Status ReadEagerSwitch(const YAML::Node& node, const std::string& path,
                             history::EagerSwitch& out) {
  if (!node) return absl::OkStatus();
  if (node.IsScalar()) return Read(node, path, "true, false or a mapping", &out.on_by_default);
  TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(node, path, {"default", "namespaces"}));
  TOCK_CONFIG_RETURN_IF_ERROR(
      Read(node["default"], path + ".default", "true or false", &out.on_by_default));
  return Read(node["namespaces"], path + ".namespaces",
              "a mapping of namespace names to true or false", &out.namespaces);
}

// `limits:` (history::Limits), each a positive integer.
absl::Status ParseLimits(const YAML::Node& node, history::Limits& limits) {
  struct Key {
    const char* name;
    std::function<void(int64_t)> set;
  };
  const std::vector<Key> keys = {
      {"max_id_length", [&](int64_t v) { limits.max_id_length = static_cast<size_t>(v); }},
      {"blob_size_warn", [&](int64_t v) { limits.blob_size_warn = v; }},
      {"blob_size_error", [&](int64_t v) { limits.blob_size_error = v; }},
      {"memo_size_warn", [&](int64_t v) { limits.memo_size_warn = v; }},
      {"memo_size_error", [&](int64_t v) { limits.memo_size_error = v; }},
      {"history_count_warn", [&](int64_t v) { limits.history_count_warn = v; }},
      {"history_count_error", [&](int64_t v) { limits.history_count_error = v; }},
      {"history_size_warn", [&](int64_t v) { limits.history_size_warn = v; }},
      {"history_size_error", [&](int64_t v) { limits.history_size_error = v; }},
      {"pending_activities", [&](int64_t v) { limits.pending_activities = static_cast<int32_t>(v); }},
      {"pending_children", [&](int64_t v) { limits.pending_children = static_cast<int32_t>(v); }},
      {"pending_signals", [&](int64_t v) { limits.pending_signals = static_cast<int32_t>(v); }},
      {"pending_cancel_requests",
       [&](int64_t v) { limits.pending_cancel_requests = static_cast<int32_t>(v); }},
  };
  std::set<std::string> names;
  for (const Key& k : keys) names.insert(k.name);
  // The rate keys are read by security::ParseRateLimits.
  names.insert(security::RateLimitConfig::Keys().begin(), security::RateLimitConfig::Keys().end());
  TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(node, "limits", names));
  for (const Key& k : keys) {
    int64_t value = 0;
    const std::string path = absl::StrCat("limits.", k.name);
    if (!node[k.name]) continue;
    TOCK_CONFIG_RETURN_IF_ERROR(Read(node[k.name], path, "an integer", &value));
    if (value < 1 || value > (int64_t{1} << 40)) {
      return FieldError(path, absl::StrCat("must be between 1 and 2^40; got ", value));
    }
    k.set(value);
  }
  return absl::OkStatus();
}

// An `ip`/`port` mapping (metrics:, timers.http:); sets `out` only when it reads cleanly.
absl::Status ReadHttpEndpoint(const YAML::Node& node, const std::string& path,
                              std::optional<HttpEndpointConfig>& out) {
  TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(node, path, {"ip", "port"}));
  HttpEndpointConfig endpoint;
  TOCK_CONFIG_RETURN_IF_ERROR(Read(node["ip"], path + ".ip", "a string", &endpoint.ip));
  TOCK_CONFIG_RETURN_IF_ERROR(Read(node["port"], path + ".port", "an integer", &endpoint.port));
  out = endpoint;
  return absl::OkStatus();
}

// `timers:`: the HTTP/JSON API's endpoint and the callbacks' allow-list and secrets.
absl::Status ParseTimers(const YAML::Node& node, ServerConfig& config) {
  TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(node, "timers", {"http", "callbacks"}));
  if (const YAML::Node http = node["http"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(ReadHttpEndpoint(http, "timers.http", config.timer_http));
  }
  if (const YAML::Node callbacks = node["callbacks"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(
        CheckKeys(callbacks, "timers.callbacks", {"allow", "signing_secrets"}));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(callbacks["allow"], timers::kCallbackAllowKey,
                                     "a list of ranges, addresses or host names",
                                     &config.timer_callbacks.allow));
    if (const YAML::Node secrets = callbacks["signing_secrets"]) {
      if (!secrets.IsMap()) {
        return FieldError(timers::kSigningSecretsKey, "must be a mapping of namespace to secret");
      }
      for (const auto& entry : secrets) {
        const std::string name = entry.first.as<std::string>();
        TOCK_CONFIG_RETURN_IF_ERROR(Read(entry.second,
                                         absl::StrCat(timers::kSigningSecretsKey, ".", name),
                                         "a string", &config.timer_callbacks.signing_secrets[name]));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<admin::ClusterMetadata> ParseClusterMetadata(const YAML::Node& node) {
  const std::string p = "cluster_metadata";
  TOCK_CONFIG_RETURN_IF_ERROR(
      CheckKeys(node, p,
                {"enable_global_namespace", "failover_version_increment", "master_cluster_name",
                 "current_cluster_name", "clusters"}));
  admin::ClusterMetadata m;
  TOCK_CONFIG_RETURN_IF_ERROR(Read(node["enable_global_namespace"], p + ".enable_global_namespace",
                                   "true or false", &m.enable_global_namespace));
  TOCK_CONFIG_RETURN_IF_ERROR(Read(node["failover_version_increment"],
                                   p + ".failover_version_increment", "an integer",
                                   &m.failover_version_increment));
  TOCK_CONFIG_RETURN_IF_ERROR(Read(node["master_cluster_name"], p + ".master_cluster_name",
                                   "a string", &m.master_cluster_name));
  TOCK_CONFIG_RETURN_IF_ERROR(Read(node["current_cluster_name"], p + ".current_cluster_name",
                                   "a string", &m.current_cluster_name));
  const YAML::Node clusters = node["clusters"];
  if (clusters) {
    if (!clusters.IsMap())
      return FieldError(p + ".clusters", "must be a mapping of name to cluster");
    for (const auto& entry : clusters) {
      std::string name = entry.first.as<std::string>();
      std::string cp = absl::StrCat(p, ".clusters.", name);
      TOCK_CONFIG_RETURN_IF_ERROR(
          CheckKeys(entry.second, cp, {"enabled", "initial_failover_version", "rpc_address"}));
      admin::ClusterInformation info;
      TOCK_CONFIG_RETURN_IF_ERROR(
          Read(entry.second["enabled"], cp + ".enabled", "true or false", &info.enabled));
      TOCK_CONFIG_RETURN_IF_ERROR(Read(entry.second["initial_failover_version"],
                                       cp + ".initial_failover_version", "an integer",
                                       &info.initial_failover_version));
      TOCK_CONFIG_RETURN_IF_ERROR(
          Read(entry.second["rpc_address"], cp + ".rpc_address", "a string", &info.rpc_address));
      m.clusters[name] = info;
    }
  }
  return m;
}

}  // namespace

admin::ClusterMetadata ServerConfig::EffectiveClusterMetadata() const {
  if (cluster_metadata.has_value()) return *cluster_metadata;
  return admin::ClusterMetadata::SingleCluster(kDefaultClusterName, absl::StrCat(ip, ":", port));
}

namespace {

// The sections of ServerConfig::Validate.

// `listen:`: where clients connect and how many connections are taken.
absl::Status ValidateListen(const ServerConfig& config) {
  if (config.port < 0 || config.port > 65535) {
    return FieldError("listen.port",
                      absl::StrCat("must be between 0 and 65535; got ", config.port));
  }
  if (config.ip.empty()) return FieldError("listen.ip", "must not be empty");
  if (config.max_connections < 1) {
    return FieldError("listen.max_connections",
                      absl::StrCat("must be at least 1; got ", config.max_connections));
  }
  return absl::OkStatus();
}

// `membership:` and the address other hosts of the membership reach this one at.
absl::Status ValidateMembership(const ServerConfig& config) {
  const ServerConfig::Membership& membership = config.membership;
  if (membership.heartbeat < absl::Milliseconds(100) || membership.heartbeat > absl::Minutes(5)) {
    return FieldError("membership.heartbeat",
                      absl::StrCat("must be between 100ms and 5m; got ",
                                   FormatHumanDuration(membership.heartbeat)));
  }
  // A cutoff of under two heartbeats would call a host dead for one late heartbeat.
  if (membership.cutoff < 2 * membership.heartbeat || membership.cutoff > absl::Hours(1)) {
    return FieldError(
        "membership.cutoff",
        absl::StrCat("must be at least twice membership.heartbeat (",
                     FormatHumanDuration(2 * membership.heartbeat), ") and at most 1h; got ",
                     FormatHumanDuration(membership.cutoff)));
  }
  // Polls last a minute at most (the frontend's kMaxPoll).
  if (membership.partition_wait < absl::ZeroDuration() ||
      membership.partition_wait > absl::Minutes(1)) {
    return FieldError("membership.partition_wait",
                      absl::StrCat("must be between 0s and 1m; got ",
                                   FormatHumanDuration(membership.partition_wait)));
  }
  const std::string& advertise_address = config.advertise_address;
  if (advertise_address.size() > 255 ||
      (!advertise_address.empty() && advertise_address.find(':') == std::string::npos)) {
    return FieldError(
        "listen.advertise_address",
        "must be HOST:PORT (at most 255 characters), where other hosts reach this one");
  }
  return absl::OkStatus();
}

// `history.shards`.
absl::Status ValidateHistoryShards(const ServerConfig& config) {
  if (config.history_shards < 1 || config.history_shards > 16384) {
    return FieldError("history.shards",
                      absl::StrCat("must be between 1 and 16384; got ", config.history_shards));
  }
  return absl::OkStatus();
}

// `persistence:`: the engine, its one database and its settings (fault injection is checked
// by ValidateFaultInjection).
absl::Status ValidatePersistence(const ServerConfig& config) {
  const persistence::PersistenceConfig& persistence = config.persistence;
  if (persistence.engine != "sqlite" && persistence.engine != "postgres") {
    return FieldError("persistence.engine", absl::StrCat("unknown engine \"", persistence.engine,
                                                         "\"; allowed: sqlite, postgres"));
  }
  // The URL itself is never repeated in a message: it may hold a password.
  if (persistence.engine == "postgres") {
    if (persistence.postgres_url.empty()) {
      return FieldError("persistence.postgres.url",
                        "is required when persistence.engine is postgres, e.g. "
                        "postgresql://tock@db.example.com:5432/tock (or give --postgres-url)");
    }
    if (!persistence.sqlite_path.empty()) {
      return FieldError("persistence.sqlite.path",
                        "is set but persistence.engine is postgres; give one database");
    }
  } else if (!persistence.postgres_url.empty()) {
    return FieldError("persistence.postgres.url",
                      "is set but persistence.engine is sqlite; set engine: postgres to use it");
  }
  // Checked here too (OpenPersistence refuses it as well), so a typo fails before the start.
  if (absl::Status s = persistence::ParseSqliteSynchronous(persistence.sqlite_synchronous).status();
      !s.ok()) {
    return FieldError("persistence.sqlite.synchronous", std::string(s.message()));
  }
  if (persistence.sqlite_handler_threads < 0 || persistence.sqlite_handler_threads > 1024) {
    return FieldError(
        "persistence.sqlite.handler_threads",
        absl::StrCat("must be between 0 and 1024 (0: calls run on gRPC's threads); got ",
                     persistence.sqlite_handler_threads));
  }
  if (persistence.postgres_max_connections < 1 || persistence.postgres_max_connections > 10000) {
    return FieldError(
        "persistence.postgres.max_connections",
        absl::StrCat("must be between 1 and 10000; got ", persistence.postgres_max_connections));
  }
  return absl::OkStatus();
}

// The HTTP listeners: `metrics:` and `timers.http:`.
absl::Status ValidateHttpEndpoints(const ServerConfig& config) {
  if (const std::optional<HttpEndpointConfig>& metrics = config.metrics; metrics.has_value()) {
    if (metrics->port < 0 || metrics->port > 65535) {
      return FieldError("metrics.port",
                        absl::StrCat("must be between 0 and 65535; got ", metrics->port));
    }
    if (metrics->ip.empty()) return FieldError("metrics.ip", "must not be empty");
  }
  if (const std::optional<HttpEndpointConfig>& timer_http = config.timer_http;
      timer_http.has_value()) {
    if (timer_http->port < 0 || timer_http->port > 65535) {
      return FieldError("timers.http.port",
                        absl::StrCat("must be between 0 and 65535; got ", timer_http->port));
    }
    if (timer_http->ip.empty()) return FieldError("timers.http.ip", "must not be empty");
    // With authorization: the timer routes refuse (they check no token) and Temporal's HTTP
    // API goes through the authorizer (timers/http_api.h).
  }
  // The codec endpoint goes into the console's Content-Security-Policy header: an origin
  // and path, nothing a header or a policy could be broken with.
  if (const std::string& codec = config.console.codec_endpoint; !codec.empty()) {
    const bool scheme = absl::StartsWith(codec, "http://") || absl::StartsWith(codec, "https://");
    const bool plain = codec.size() <= 2048 && codec.find_first_of(" \t\r\n;,'\"") == std::string::npos;
    if (!scheme || !plain) {
      return FieldError("console.codec_endpoint",
                        "must be an http:// or https:// URL of at most 2048 characters, without "
                        "spaces, quotes, commas or semicolons");
    }
  }
  const ConsoleConfig& console = config.console;
  if (const std::string& path = console.public_path; !path.empty()) {
    const bool shaped = path.size() <= 200 && path[0] == '/' && path.back() != '/' &&
                        path.find("//") == std::string::npos &&
                        path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                               "0123456789-_.~/") == std::string::npos &&
                        path.find("/.") == std::string::npos;
    if (!shaped) {
      return FieldError("console.public_path",
                        "must be a path such as /tock or /ops/tock: at most 200 characters, "
                        "starting with '/', of letters, digits, '-', '_', '.', '~' and '/', no "
                        "segment starting with '.', no trailing '/'");
    }
  }
  if (console.port.has_value()) {
    if (*console.port < 0 || *console.port > 65535) {
      return FieldError("console.port", absl::StrCat("must be between 0 and 65535; got ", *console.port));
    }
    if (!console.enabled) {
      return FieldError("console.port", "is set but the console is off (console.enabled: false, --headless)");
    }
    if (!config.timer_http.has_value()) {
      return FieldError("console.port",
                        "needs the HTTP port (--http-port, timers.http), whose API the console "
                        "serves beside it");
    }
  }
  return absl::OkStatus();
}

// `limits:` as far as ParseLimits cannot check them alone.
absl::Status ValidateLimits(const ServerConfig& config) {
  // A payload larger than a request may be could never be refused by its own limit.
  for (const auto& [key, value] :
       {std::pair<const char*, int64_t>{"limits.blob_size_error", config.limits.blob_size_error},
        {"limits.memo_size_error", config.limits.memo_size_error}}) {
    if (value >= kMaxRequestBytes) {
      return FieldError(
          key, absl::StrCat("must be below ", kMaxRequestBytes,
                            " bytes, the largest request tock-server accepts; got ", value));
    }
  }
  return absl::OkStatus();
}

// `timers.callbacks:`: the allow-list and the signing secrets.
absl::Status ValidateTimerCallbacks(const ServerConfig& config) {
  if (absl::Status s = timers::CallbackAddressPolicy::Parse(config.timer_callbacks.allow).status();
      !s.ok()) {
    return s;  // names the key and the entry
  }
  return timers::ValidateSigningSecrets(config.timer_callbacks.signing_secrets);
}

// `log:`.
absl::Status ValidateLog(const ServerConfig& config) {
  if (absl::Status s = ParseLogLevel(config.log.level).status(); !s.ok()) {
    return FieldError("log.level", std::string(s.message()));
  }
  if (absl::Status s = ParseLogFormat(config.log.format).status(); !s.ok()) {
    return FieldError("log.format", std::string(s.message()));
  }
  return absl::OkStatus();
}

// `persistence.fault_injection`.
absl::Status ValidateFaultInjection(const ServerConfig& config) {
  const persistence::FaultInjectionConfig& faults = config.persistence.fault_injection;
  if (!(faults.rate >= 0 && faults.rate <= 1)) {
    return FieldError("persistence.fault_injection.rate",
                      absl::StrCat("must be between 0 and 1; got ", faults.rate));
  }
  if (faults.sync_delay < absl::ZeroDuration() || faults.sync_delay > absl::Seconds(1)) {
    return FieldError("persistence.fault_injection.sync_delay",
                      absl::StrCat("must be between 0s and 1s; got ",
                                   FormatHumanDuration(faults.sync_delay)));
  }
  return absl::OkStatus();
}

// The clusters: `dc_redirection_policy` and `cluster_metadata:`.
absl::Status ValidateClusters(const ServerConfig& config) {
  const std::string& policy = config.dc_redirection_policy;
  if (!policy.empty() && policy != "noop" && policy != "selected-apis-forwarding" &&
      policy != "all-apis-forwarding") {
    return FieldError("dc_redirection_policy",
                      absl::StrCat("must be noop, selected-apis-forwarding or "
                                   "all-apis-forwarding; got \"",
                                   policy, "\""));
  }
  if (config.cluster_metadata.has_value()) {
    if (absl::Status s = config.cluster_metadata->Validate(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("config ", s.message()));
    }
  }
  return absl::OkStatus();
}

// `tls:` and `authorization:`, and what authorization needs of tls.
absl::Status ValidateSecurity(const ServerConfig& config) {
  const std::optional<security::AuthorizationConfig>& authorization = config.authorization;
  if (absl::Status s = config.tls.Validate(); !s.ok()) return s;
  // Calls from other clusters carry the internode certificate and no token: its subject must
  // be let in (security/authz_internode.h).
  if (authorization.has_value() && config.tls.internode.has_value()) {
    if (absl::Status s = security::CheckInternodeSubject(*authorization, *config.tls.internode);
        !s.ok()) {
      return s;
    }
  }
  // Hosts of a shared database call each other with its host secret, which skips
  // authorization: in clear, it would give whoever reads the network every permission.
  if (authorization.has_value() && config.persistence.engine == "postgres" &&
      !config.tls.internode.has_value() && !authorization->plaintext_host_calls) {
    return FieldError(
        "tls.internode",
        "is required with authorization: on a shared database (persistence.engine: postgres): "
        "the hosts' calls to each other carry a secret that skips authorization. Add "
        "tls.internode (cert_file, key_file, ca_file) and tls.frontend, or, only where no one "
        "else can read the network between the hosts, authorization.plaintext_host_calls: true");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ServerConfig::Validate() const {
  // One section after another, in a fixed order: with several mistakes, the one reported is
  // always the first of this list.
  for (absl::Status (*validate)(const ServerConfig&) :
       {ValidateListen, ValidateMembership, ValidateHistoryShards, ValidatePersistence,
        ValidateHttpEndpoints, ValidateLimits, ValidateTimerCallbacks, ValidateLog,
        ValidateFaultInjection, ValidateClusters, ValidateSecurity}) {
    TOCK_CONFIG_RETURN_IF_ERROR(validate(*this));
  }
  return archival.Validate();
}

absl::StatusOr<ServerConfig> ParseServerConfig(const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("config is not valid YAML: ", e.what()));
  }
  ServerConfig config;
  if (!root || root.IsNull()) return config;
  TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(
      root, "",
      {"listen", "persistence", "history", "cluster_metadata", "namespaces", "archival",
       "namespace_defaults", "metrics", "log", "limits", "membership", "dc_redirection_policy",
       "timers", "tls", "authorization", "console"}));
  TOCK_CONFIG_RETURN_IF_ERROR(Read(root["dc_redirection_policy"], "dc_redirection_policy",
                                   "a string", &config.dc_redirection_policy));
  TOCK_CONFIG_RETURN_IF_ERROR(
      ParseArchivalConfig(root["archival"], root["namespace_defaults"], config.archival));
  if (const YAML::Node listen = root["listen"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(
        CheckKeys(listen, "listen", {"ip", "port", "max_connections", "advertise_address"}));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(listen["advertise_address"], "listen.advertise_address",
                                     "a string (HOST:PORT)", &config.advertise_address));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(listen["ip"], "listen.ip", "a string", &config.ip));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(listen["port"], "listen.port", "an integer", &config.port));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(listen["max_connections"], "listen.max_connections",
                                     "an integer", &config.max_connections));
  }
  if (const YAML::Node persistence = root["persistence"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(
        CheckKeys(persistence, "persistence", {"engine", "sqlite", "postgres", "fault_injection"}));
    TOCK_CONFIG_RETURN_IF_ERROR(
        Read(persistence["engine"], "persistence.engine", "a string", &config.persistence.engine));
    if (const YAML::Node sqlite = persistence["sqlite"]) {
      TOCK_CONFIG_RETURN_IF_ERROR(
          CheckKeys(sqlite, "persistence.sqlite", {"path", "synchronous", "handler_threads"}));
      TOCK_CONFIG_RETURN_IF_ERROR(Read(sqlite["path"], "persistence.sqlite.path", "a string",
                                       &config.persistence.sqlite_path));
      TOCK_CONFIG_RETURN_IF_ERROR(Read(sqlite["synchronous"], "persistence.sqlite.synchronous",
                                       "full or normal", &config.persistence.sqlite_synchronous));
      TOCK_CONFIG_RETURN_IF_ERROR(Read(sqlite["handler_threads"],
                                       "persistence.sqlite.handler_threads", "an integer",
                                       &config.persistence.sqlite_handler_threads));
    }
    if (const YAML::Node postgres = persistence["postgres"]) {
      TOCK_CONFIG_RETURN_IF_ERROR(
          CheckKeys(postgres, "persistence.postgres", {"url", "max_connections"}));
      TOCK_CONFIG_RETURN_IF_ERROR(
          Read(postgres["url"], "persistence.postgres.url",
               "a string (postgresql://USER@HOST:PORT/DB)", &config.persistence.postgres_url));
      TOCK_CONFIG_RETURN_IF_ERROR(Read(postgres["max_connections"],
                                       "persistence.postgres.max_connections", "an integer",
                                       &config.persistence.postgres_max_connections));
    }
    if (const YAML::Node faults = persistence["fault_injection"]) {
      const std::string p = "persistence.fault_injection";
      TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(faults, p, {"rate", "seed", "sync_delay"}));
      TOCK_CONFIG_RETURN_IF_ERROR(Read(faults["rate"], p + ".rate", "a number between 0 and 1",
                                       &config.persistence.fault_injection.rate));
      TOCK_CONFIG_RETURN_IF_ERROR(Read(faults["seed"], p + ".seed", "a non-negative integer",
                                       &config.persistence.fault_injection.seed));
      TOCK_CONFIG_RETURN_IF_ERROR(ReadDuration(faults["sync_delay"], p + ".sync_delay",
                                               &config.persistence.fault_injection.sync_delay));
    }
  }
  if (const YAML::Node metrics = root["metrics"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(ReadHttpEndpoint(metrics, "metrics", config.metrics));
  }
  if (const YAML::Node timers = root["timers"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(ParseTimers(timers, config));
  }
  if (const YAML::Node console = root["console"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(
        console, "console", {"enabled", "codec_endpoint", "read_only", "public_path", "port", "ip"}));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(console["public_path"], "console.public_path",
                                     "a string (/PATH)", &config.console.public_path));
    config.console.public_path = PublicPath(config.console.public_path);
    TOCK_CONFIG_RETURN_IF_ERROR(Read(console["ip"], "console.ip", "a string (an IP address)",
                                     &config.console.ip));
    if (console["port"]) {
      int port = 0;
      TOCK_CONFIG_RETURN_IF_ERROR(Read(console["port"], "console.port", "an integer", &port));
      config.console.port = port;
    }
    TOCK_CONFIG_RETURN_IF_ERROR(Read(console["enabled"], "console.enabled", "true or false",
                                     &config.console.enabled));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(console["codec_endpoint"], "console.codec_endpoint",
                                     "a string (http(s)://HOST[:PORT][/PATH])",
                                     &config.console.codec_endpoint));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(console["read_only"], "console.read_only", "true or false",
                                     &config.console.read_only));
  }
  if (const YAML::Node log = root["log"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(log, "log", {"level", "format", "file"}));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(log["file"], "log.file", "a string", &config.log.file));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(log["level"], "log.level", "a string", &config.log.level));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(log["format"], "log.format", "a string", &config.log.format));
  }
  if (const YAML::Node membership = root["membership"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(
        CheckKeys(membership, "membership", {"heartbeat", "cutoff", "partition_wait"}));
    TOCK_CONFIG_RETURN_IF_ERROR(ReadDuration(membership["heartbeat"], "membership.heartbeat",
                                             &config.membership.heartbeat));
    TOCK_CONFIG_RETURN_IF_ERROR(
        ReadDuration(membership["cutoff"], "membership.cutoff", &config.membership.cutoff));
    TOCK_CONFIG_RETURN_IF_ERROR(ReadDuration(membership["partition_wait"],
                                             "membership.partition_wait",
                                             &config.membership.partition_wait));
  }
  if (const YAML::Node history = root["history"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(
        history, "history", {"shards", "eager_activities", "eager_workflow_start"}));
    TOCK_CONFIG_RETURN_IF_ERROR(
        Read(history["shards"], "history.shards", "an integer", &config.history_shards));
    TOCK_CONFIG_RETURN_IF_ERROR(ReadEagerSwitch(
        history["eager_activities"], "history.eager_activities", config.eager_dispatch.activities));
    TOCK_CONFIG_RETURN_IF_ERROR(ReadEagerSwitch(history["eager_workflow_start"],
                                                "history.eager_workflow_start",
                                                config.eager_dispatch.workflow_start));
  }
  if (const YAML::Node cluster = root["cluster_metadata"]) {
    absl::StatusOr<admin::ClusterMetadata> m = ParseClusterMetadata(cluster);
    if (!m.ok()) return m.status();
    config.cluster_metadata = *m;
  }
  if (const YAML::Node names = root["namespaces"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(Read(names, "namespaces", "a list of names", &config.namespaces));
  }
  if (const YAML::Node limits = root["limits"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(ParseLimits(limits, config.limits));
    TOCK_CONFIG_RETURN_IF_ERROR(security::ParseRateLimits(limits, config.rate_limits));
  }
  if (const YAML::Node tls = root["tls"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(ParseTlsConfig(tls, config.tls));
  }
  TOCK_CONFIG_RETURN_IF_ERROR(
      security::ParseAuthorizationConfig(root["authorization"], &config.authorization));
  return config;
}

void AllowLoopbackCallbacks(ServerConfig& config) {
  for (const char* range : {"127.0.0.0/8", "::1"}) config.timer_callbacks.allow.push_back(range);
}

absl::StatusOr<std::unique_ptr<Logger>> MakeLogger(const LogConfig& config) {
  absl::StatusOr<LogLevel> level = ParseLogLevel(config.level);
  if (!level.ok()) return level.status();
  absl::StatusOr<LogFormat> format = ParseLogFormat(config.format);
  if (!format.ok()) return format.status();
  if (config.file.empty()) return MakeStderrLogger(*level, *format);
  return MakeFileLogger(config.file, *level, *format);
}

absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the config file ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<ServerConfig> config = ParseServerConfig(text.str());
  if (!config.ok()) {
    return absl::Status(config.status().code(),
                        absl::StrCat(path, ": ", config.status().message()));
  }
  const YAML::Node root = YAML::Load(text.str());  // parsed once above: cannot throw now
  config->source = (!root || root.IsNull())
                       ? absl::StrCat(path, " (empty: every setting is its default)")
                       : path;
  return config;
}

}  // namespace tock::server
