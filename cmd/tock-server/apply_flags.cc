#include "cmd/tock-server/apply_flags.h"

namespace tock::server {
namespace {

void ApplyDatabaseFlags(const ServerFlags& f, ServerConfig& config) {
  if (f.db_file) config.persistence.sqlite_path = *f.db_file;
  if (f.sqlite_synchronous) config.persistence.sqlite_synchronous = *f.sqlite_synchronous;
  if (f.postgres_url) {
    config.persistence.engine = "postgres";
    config.persistence.postgres_url = *f.postgres_url;
    config.persistence.sqlite_path.clear();  // the flag picks the database, over the file
  }
}

void ApplyEndpointFlags(const ServerFlags& f, ServerConfig& config) {
  if (f.port) config.port = *f.port;
  if (f.ip) config.ip = *f.ip;
  if (f.metrics_port) {
    if (!config.metrics) config.metrics.emplace();
    config.metrics->port = *f.metrics_port;
  }
  if (f.http_port) {
    if (!config.timer_http) {
      config.timer_http.emplace();
      config.timer_http->ip = config.ip;
    }
    config.timer_http->port = *f.http_port;
  }
  if (f.headless) config.console.enabled = false;
  if (f.ui_codec_endpoint) config.console.codec_endpoint = *f.ui_codec_endpoint;
  if (f.ui_read_only) config.console.read_only = true;
  if (f.ui_public_path) config.console.public_path = PublicPath(*f.ui_public_path);
  if (f.ui_port) config.console.port = *f.ui_port;
  if (f.ui_ip) config.console.ip = *f.ui_ip;
}

// A frontend flag creates tls.frontend, an internode flag tls.internode.
void ApplyTlsFlags(const ServerFlags::Tls& t, TlsConfig& config) {
  if (t.cert_file || t.key_file || t.client_ca_file || t.require_client_auth) {
    if (!config.frontend) config.frontend.emplace();
    if (t.cert_file) config.frontend->cert_file = *t.cert_file;
    if (t.key_file) config.frontend->key_file = *t.key_file;
    if (t.client_ca_file) config.frontend->client_ca_file = *t.client_ca_file;
    if (t.require_client_auth) config.frontend->require_client_auth = *t.require_client_auth;
  }
  if (t.internode_cert_file || t.internode_key_file || t.internode_ca_file ||
      t.internode_server_name) {
    if (!config.internode) config.internode.emplace();
    if (t.internode_cert_file) config.internode->cert_file = *t.internode_cert_file;
    if (t.internode_key_file) config.internode->key_file = *t.internode_key_file;
    if (t.internode_ca_file) config.internode->ca_file = *t.internode_ca_file;
    if (t.internode_server_name) config.internode->server_name = *t.internode_server_name;
  }
}

void ApplyOtherFlags(const ServerFlags& f, ServerConfig& config) {
  if (f.time_skipping) config.time_skipping = true;
  if (f.replication_faults_file) config.replication_faults_file = *f.replication_faults_file;
  if (f.dc_redirection_policy) config.dc_redirection_policy = *f.dc_redirection_policy;
  if (f.archival_dir) config.archival.UseDirectory(*f.archival_dir);
  config.namespaces.insert(config.namespaces.end(), f.namespaces.begin(), f.namespaces.end());
  if (f.log_level) config.log.level = *f.log_level;
  if (f.log_format) config.log.format = *f.log_format;
  if (f.log_file) config.log.file = *f.log_file;
}

}  // namespace

absl::StatusOr<ServerConfig> ConfigFromFlags(const ServerFlags& flags) {
  ServerConfig config;
  if (!flags.config_path.empty()) {
    absl::StatusOr<ServerConfig> loaded = LoadServerConfig(flags.config_path);
    if (!loaded.ok()) return loaded.status();
    config = *std::move(loaded);
  }
  ApplyDatabaseFlags(flags, config);
  ApplyEndpointFlags(flags, config);
  ApplyTlsFlags(flags.tls, config.tls);
  ApplyOtherFlags(flags, config);
  return config;
}

}  // namespace tock::server
