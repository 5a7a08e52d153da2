// One tock-server: persistence, services and the gRPC server, built from a ServerConfig.
// Used by cmd/tock-server and by `tock server start-dev` (the same server in process).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lib/common/clock.h"
#include "lib/common/env.h"
#include "lib/common/version.h"
#include "server-core/config/server_config.h"

namespace tock::server {

class TockServer {
 public:
  // Opens the database (applying migrations), checks the shard count and cluster name
  // against it, registers "default" and the configured namespaces when missing, and starts
  // listening (gRPC, and HTTP for /metrics when `config.metrics` is set). UNAVAILABLE when a
  // port cannot be bound; other errors name the cause.
  //
  // Logs go to `env.logger` (start and stop at info, refused requests at debug). Metrics go to
  // `env.metrics`; when it is disabled and `config.metrics` is set, the server keeps a
  // registry of its own. `env`'s objects must outlive the server.
  static absl::StatusOr<std::unique_ptr<TockServer>> Start(const ServerConfig& config,
                                                           const Env& env);
  // Start(config, QuietEnv(clock)): no logs (tests, benchmarks in process).
  static absl::StatusOr<std::unique_ptr<TockServer>> Start(const ServerConfig& config,
                                                           Clock& clock);
  virtual ~TockServer() = default;

  // "IP:PORT" actually bound (the real port when the config asked for 0).
  virtual std::string address() const = 0;

  // The start banner. Its first line is exactly
  //   "Tock server <version> listening on <ip>:<port>"
  // (tests find the address with the regex "listening on (\S+)"), then the database,
  // the cluster and the namespaces, one per line, and when metrics are on
  //   "  metrics:    http://<ip>:<port>/metrics".
  virtual std::string Banner() const = 0;

  // Stops accepting calls, finishes or cancels those in flight, closes the database.
  // Idempotent; safe to call from a signal-handling thread.
  virtual void Shutdown() = 0;

  // Blocks until Shutdown has completed.
  virtual void Wait() = 0;
};

}  // namespace tock::server
