// tock-server configuration: YAML file, then command-line overrides, then validation.
//
// Example (every key optional; these are the defaults but for the clusters):
//
//   listen:
//     ip: 127.0.0.1
//     port: 7233            # 0 picks a free port; the banner prints the one bound
//     advertise_address: "" # HOST:PORT other hosts reach this one at; empty: ip:port
//   membership:             # several hosts on one PostgreSQL database
//     heartbeat: 10s        # how often this host writes its membership row
//     partition_wait: 200ms # a poll's wait on this host's partition of another host's queue
//     cutoff: 20s           # a host whose row is older is dead; its shards move
//   persistence:
//     engine: sqlite
//     sqlite:
//       path: ""            # empty: in-memory database
//       synchronous: full   # full: a commit answered survives power loss (each one is
//                           #   synced); normal: it survives a crash of the process only
//       handler_threads: 32 # threads for the calls that wait for their commit; 0: every
//                           #   call on gRPC's threads
//     fault_injection:      # testing only: that share of store calls fail (see
//       rate: 0.01          #   persistence/fault_injection.h); 0 or absent: off
//       seed: 7             # 0 or absent: a random seed
//       sync_delay: 2ms     # testing only: each sync of a SQLite file waits this long first
//                           #   (a slower disk; persistence/sqlite/slow_sync_vfs.h)
//   metrics:                # absent: no metrics, no HTTP endpoint
//     ip: 127.0.0.1
//     port: 9090            # GET http://IP:PORT/metrics; 0 picks a free port
//   timers:
//     http:                 # absent: the timer service is served over gRPC only
//       ip: 127.0.0.1
//       port: 8080          # POST http://IP:PORT/api/v1/timers/...; 0 picks a free port
//     callbacks:
//       allow: []           # restricted addresses callbacks may reach: ranges, addresses,
//                           #   host names, *.domain (timers/callback_address_policy.h);
//                           #   none by default; tock server start-dev allows loopback
//       signing_secrets: {} # namespace (or "*") -> secret: callbacks carry Tock-Signature
//                           #   (timers/callback_signature.h)
//   log:
//     level: info           # debug, info, warn, error, off
//     format: text          # text or json (one object per line)
//     file: ""              # empty: stderr
//   history:
//     shards: 4             # fixed when the database is created
//     eager_activities: true      # honour request_eager_execution (history/eager_dispatch.h);
//     eager_workflow_start: true  #   or {default: true, namespaces: {NAME: false}}
//   cluster_metadata:
//     enable_global_namespace: true
//     failover_version_increment: 10
//     master_cluster_name: a
//     current_cluster_name: a
//     clusters:
//       a: {enabled: true, initial_failover_version: 1, rpc_address: "127.0.0.1:7233"}
//       b: {enabled: true, initial_failover_version: 2, rpc_address: "127.0.0.1:7234"}
//   namespaces: [default]   # registered at start when missing; default always is
//   archival: ...           # and namespace_defaults: see archival_config.h
//   limits:                 # request and workflow limits (history/request_limits.h) and
//     namespace_rps: 1200   #   rate limits (security/rate_limit_config.h; off unless set)
//   tls: ...                # frontend and internode TLS: see tls_config.h
//   authorization: ...      # JWT and client-certificate roles: see security/authz_config.h
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/admin/cluster_metadata.h"
#include "lib/common/log.h"
#include "server-core/config/archival_config.h"
#include "server-core/config/tls_config.h"
#include "server-core/history/eager_dispatch.h"
#include "server-core/history/request_limits.h"
#include "server-core/persistence/persistence.h"
#include "server-core/security/authz_config.h"
#include "server-core/security/rate_limit_config.h"

namespace tock::server {

// The cluster name of a server configured without cluster metadata.
inline constexpr char kDefaultClusterName[] = "active";

// An HTTP listener's address: where `GET /metrics` is served (`metrics:`), and the timer
// service's HTTP/JSON API (`timers.http:`).
struct HttpEndpointConfig {
  std::string ip = "127.0.0.1";
  int port = 0;  // 0: a free port (the banner shows it)
  // When `port` is taken, a free port instead of failing (start-dev's 7243).
  bool any_port_if_taken = false;
};

// Temporal's convention for its HTTP API (a dev server serves it there unless taken).
inline constexpr int kTemporalHttpPort = 7243;

// `console:`: the web console, served on the HTTP port (`timers.http`, `--http-port`) beside
// Temporal's HTTP API, at its root.
struct ConsoleConfig {
  bool enabled = true;         // console.enabled; --headless turns it off
  std::string codec_endpoint;  // console.codec_endpoint (--ui-codec-endpoint): a codec server
                               // the browser asks to decode payloads; "": none
  bool read_only = false;      // console.read_only (--ui-read-only): the console and the HTTP
                               // API on its port refuse writes (queries still run)
  // console.public_path (--ui-public-path): the console at http://IP:PORT/PATH/ ("/tock", no
  // trailing '/'; "": the root); the HTTP API answers under it too, and at the root.
  std::string public_path;
  // console.port and console.ip (--ui-port, --ui-ip): a listener of its own for the console
  // (with the HTTP API beside it, which the page calls); unset: the HTTP port serves it.
  // Needs the HTTP port. Port 0: any free one.
  std::optional<int> port;
  std::string ip;  // "": the HTTP port's
};

// A console path as given ("/tock/", "/") as console.public_path holds it ("/tock", "").
inline std::string PublicPath(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

struct LogConfig {
  std::string level = "info";
  std::string format = "text";
  std::string file;  // "": stderr; otherwise appended to this file
};

struct ServerConfig {
  std::string ip = "127.0.0.1";
  int port = 7233;
  // Client connections at most (`listen.max_connections`); more are closed at once.
  int max_connections = 10000;
  // Where other hosts reach this one (`listen.advertise_address`); empty: the bound ip:port.
  std::string advertise_address;
  // Heartbeat period and cutoff of the membership of hosts sharing one database.
  struct Membership {
    absl::Duration heartbeat = absl::Seconds(10);
    absl::Duration cutoff = absl::Seconds(20);
    // How long a worker's poll waits on this host's partition of a queue another host owns
    // before it goes on to the owner (routing/call_router.h); 0: at once.
    absl::Duration partition_wait = absl::Milliseconds(200);
  };
  Membership membership;
  persistence::PersistenceConfig persistence;
  int32_t history_shards = 4;
  // `history.eager_activities` and `history.eager_workflow_start`: both on by default.
  history::EagerDispatch eager_dispatch;
  // Unset: a single cluster named kDefaultClusterName at this server's address.
  std::optional<admin::ClusterMetadata> cluster_metadata;
  std::vector<std::string> namespaces;  // besides "default"
  ArchivalConfig archival;              // `archival` and `namespace_defaults` (SPEC §3)
  TlsConfig tls;                        // `tls`: off (plaintext) unless configured
  // `authorization`: unset, every caller may make every call (the default, and start-dev).
  std::optional<security::AuthorizationConfig> authorization;
  // Unset: metrics are off (no registry, no HTTP endpoint).
  std::optional<HttpEndpointConfig> metrics;
  // Where the timer service's HTTP/JSON API is served (`timers.http`, `--http-port`); the
  // same shape as the metrics endpoint. Unset: gRPC only.
  std::optional<HttpEndpointConfig> timer_http;
  ConsoleConfig console;
  // `timers.callbacks`: the restricted addresses timer callbacks may reach (`allow`; checked
  // by Validate) and the secrets they are signed with per namespace (`signing_secrets`).
  struct TimerCallbacks {
    std::vector<std::string> allow;
    std::map<std::string, std::string> signing_secrets;
  };
  TimerCallbacks timer_callbacks;
  // Read by main, which builds the Logger from it (`--log-level`, `--log-format`).
  LogConfig log;
  // Where it came from, for the banner: the file (noting an empty one), or "" for flags only.
  std::string source;
  // Per-request and per-workflow limits (`limits:`; Temporal's defaults).
  history::Limits limits;
  // The frontend's rate limits (the rate keys of `limits:`; security/rate_limit_config.h).
  // Off unless configured.
  security::RateLimitConfig rate_limits;
  // Places where a test build of the server stops on purpose (`tock-server-faults`, built
  // with the tests from cmd/tock-server/main.cc with TOCK_FAULT_POINTS). tock-server itself
  // has no way to set them: production never runs them.
  struct FaultPoints {
    // After a run's history archive was confirmed, before that is recorded or the run deleted.
    std::function<void(const std::string& run_id)> after_history_upload;
  };
  FaultPoints fault_points;
  // Which calls on a global namespace active in another cluster are sent to that cluster's
  // frontend (`dc_redirection_policy`, `--dc-redirection-policy`): noop (none, the
  // default), selected-apis-forwarding or all-apis-forwarding (frontend/dc_redirection.h).
  std::string dc_redirection_policy = "noop";
  // AdminService.AdvanceTime allowed (development and tests only; `--enable-time-skipping`).
  bool time_skipping = false;
  // Tests only (`--replication-faults-file`): the JSON file of replication faults the
  // history replication receiver reads before each pull (replication/replication_faults.h).
  // Empty: replication has no faults and no way to get any.
  std::string replication_faults_file;

  // The configured cluster metadata, or the single-cluster default.
  admin::ClusterMetadata EffectiveClusterMetadata() const;

  // Checks everything a start needs; INVALID_ARGUMENT naming the field.
  absl::Status Validate() const;
};

// `tock server start-dev`'s default (review P2-2): timer callbacks may reach this machine's
// loopback addresses (127.0.0.0/8, ::1) besides what timers.callbacks.allow lists.
void AllowLoopbackCallbacks(ServerConfig& config);

// The logger `config` describes. INVALID_ARGUMENT for a bad level or format (naming the
// allowed values), UNAVAILABLE when the file cannot be opened.
absl::StatusOr<std::unique_ptr<Logger>> MakeLogger(const LogConfig& config);

// Parses a YAML document. INVALID_ARGUMENT naming the key and what is allowed on a bad or
// unknown key (a typo must not be silently ignored).
absl::StatusOr<ServerConfig> ParseServerConfig(const std::string& yaml_text);

// Reads and parses a file; NOT_FOUND when it cannot be read.
absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path);

}  // namespace tock::server
