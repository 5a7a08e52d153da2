#include "cmd/tock-server/server_flags.h"

namespace tock::server {
namespace {

void AddListenAndDatabaseFlags(CLI::App& app, ServerFlags& f, std::vector<CLI::Option*>& out) {
  out.push_back(app.add_option("--config", f.config_path, "YAML configuration file")
                    ->check(CLI::ExistingFile));
  out.push_back(app.add_option("--port", f.port,
                               "Port to listen on (0: any free port); overrides the config"));
  out.push_back(app.add_option("--ip", f.ip, "Address to listen on; overrides the config"));
  CLI::Option* db_file = app.add_option(
      "--db-file", f.db_file,
      "SQLite database file (default: in memory, at most 2 GiB); overrides the config");
  out.push_back(db_file);
  out.push_back(app.add_option("--sqlite-synchronous", f.sqlite_synchronous,
                               "full (the default: each commit is on the disk before it is "
                               "answered, and survives power loss) or normal (no fsync per "
                               "commit; survives a crash of the process only); "
                               "persistence.sqlite.synchronous")
                    ->check(CLI::IsMember({"full", "normal"})));
  out.push_back(
      app.add_option("--postgres-url", f.postgres_url,
                     "Store everything in this PostgreSQL database "
                     "(postgresql://USER@HOST:PORT/DB; keep a password in ~/.pgpass or "
                     "PGPASSWORD); several hosts may share it; sets persistence.engine to postgres")
          ->excludes(db_file));
  out.push_back(
      app.add_option("--namespace", f.namespaces, "Namespace to register at start (repeatable)"));
}

void AddFeatureFlags(CLI::App& app, ServerFlags& f, std::vector<CLI::Option*>& out) {
  out.push_back(app.add_option("--archival-dir", f.archival_dir,
                               "Archive histories and visibility records to this directory (file "
                               "store); new namespaces archive by default"));
  out.push_back(app.add_flag("--enable-time-skipping", f.time_skipping,
                             "Allow AdminService.AdvanceTime (`tock server advance-time`): "
                             "development and tests only"));
  out.push_back(app.add_option(
      "--replication-faults-file", f.replication_faults_file,
      "Tests only: read replication faults (pause, drop_workflow_id, fail_workflow_ids, replay, "
      "tasks_per_pull) from this JSON file before each history replication pull; without this "
      "flag none can be set"));
  out.push_back(
      app.add_option("--dc-redirection-policy", f.dc_redirection_policy,
                     "Calls on a global namespace active in another cluster: noop (run here; the "
                     "default), selected-apis-forwarding (start, signal, update, cancel, "
                     "terminate, reset, delete and query go to the active cluster) or "
                     "all-apis-forwarding (every namespaced call); overrides the config")
          ->check(CLI::IsMember({"noop", "selected-apis-forwarding", "all-apis-forwarding"})));
  out.push_back(app.add_option(
      "--metrics-port", f.metrics_port,
      "Serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0: any free port; the banner "
      "shows it); overrides the config. Off unless given here or in the config"));
  out.push_back(app.add_option(
      "--http-port", f.http_port,
      "Serve Temporal's HTTP API (every google.api.http route of the pinned protos, under "
      "/api/v1 and unprefixed, payload shorthand on; /api/v1/swagger.json) and the timer "
      "service's HTTP/JSON API (/api/v1/timers/create|get|update|delete|list) at "
      "http://IP:PORT, IP that of --ip (0: any free port; the banner shows it); overrides the "
      "config's timers.http. Off unless given here or there (start-dev: 7243, or any free "
      "port when taken). The web console is served at its root (http://IP:PORT/)"));
  out.push_back(app.add_flag("--headless", f.headless,
                             "No web console on the HTTP port, only the APIs (console.enabled: "
                             "false)"));
  out.push_back(app.add_option(
      "--ui-codec-endpoint", f.ui_codec_endpoint,
      "A codec server the console's browser asks to decode payloads (POST "
      "ENDPOINT/decode, as Temporal's UI does); console.codec_endpoint"));
  out.push_back(app.add_option(
      "--ui-public-path", f.ui_public_path,
      "Serve the console under this path (http://IP:PORT/PATH/, e.g. /tock); the HTTP API "
      "answers under it too, and at the root; console.public_path"));
  out.push_back(app.add_option(
      "--ui-port", f.ui_port,
      "Serve the console on a listener of its own at this port (0: any free one), with the "
      "HTTP API beside it; the HTTP port then serves the APIs only; needs the HTTP port; "
      "console.port"));
  out.push_back(app.add_option(
      "--ui-ip", f.ui_ip,
      "The IP of the console's own listener (default: the HTTP port's); console.ip"));
  out.push_back(app.add_flag("--ui-read-only", f.ui_read_only,
                             "The console shows no write actions and the HTTP API on its port "
                             "refuses writes (405; queries still run); console.read_only"));
}

// The `tls:` section (config/tls_config.h), one flag per key. A frontend flag creates
// tls.frontend, an internode flag tls.internode; the result is checked like the YAML.
void AddTlsFlags(CLI::App& app, ServerFlags::Tls& t, std::vector<CLI::Option*>& out) {
  out.push_back(app.add_option(
      "--tls-cert-file", t.cert_file,
      "Serve TLS on the port with this PEM certificate chain (tls.frontend.cert_file); needs "
      "--tls-key-file and the internode flags (or tls.internode)"));
  out.push_back(app.add_option(
      "--tls-key-file", t.key_file,
      "The certificate's PEM private key, unencrypted (tls.frontend.key_file)"));
  out.push_back(app.add_option("--tls-client-ca-file", t.client_ca_file,
                               "Ask clients for a certificate chaining to these PEM CAs, required "
                               "unless --tls-require-client-auth false (tls.frontend.client_ca_file)"));
  out.push_back(app.add_option("--tls-require-client-auth", t.require_client_auth,
                               "true or false: whether a client without a certificate is refused "
                               "(tls.frontend.require_client_auth; default true with "
                               "--tls-client-ca-file)"));
  out.push_back(app.add_option(
      "--tls-internode-cert-file", t.internode_cert_file,
      "Client certificate of this server's calls to other hosts, other clusters and its own port "
      "(tls.internode.cert_file); required when client certificates are"));
  out.push_back(app.add_option("--tls-internode-key-file", t.internode_key_file,
                               "Its PEM private key (tls.internode.key_file)"));
  out.push_back(app.add_option("--tls-internode-ca-file", t.internode_ca_file,
                               "PEM CAs the servers dialed must chain to; default: the system's "
                               "(tls.internode.ca_file)"));
  out.push_back(app.add_option("--tls-internode-server-name", t.internode_server_name,
                               "Name the servers' certificates must carry instead of the address "
                               "dialed (tls.internode.server_name)"));
}

void AddLogFlags(CLI::App& app, ServerFlags& f, std::vector<CLI::Option*>& out) {
  out.push_back(app.add_option("--log-level", f.log_level, "debug, info (default), warn, error or off")
                    ->check(CLI::IsMember({"debug", "info", "warn", "warning", "error", "off"})));
  out.push_back(app.add_option("--log-format", f.log_format,
                               "text (default) or json: one object per line")
                    ->check(CLI::IsMember({"text", "json"})));
  out.push_back(
      app.add_option("--log-file", f.log_file, "Append the log to this file instead of stderr"));
}

}  // namespace

std::vector<CLI::Option*> AddServerFlags(CLI::App& app, ServerFlags& flags) {
  std::vector<CLI::Option*> out;
  AddListenAndDatabaseFlags(app, flags, out);
  AddFeatureFlags(app, flags, out);
  AddTlsFlags(app, flags.tls, out);
  AddLogFlags(app, flags, out);
  return out;
}

std::vector<std::string> GivenFlagsAsArguments(const std::vector<CLI::Option*>& options) {
  std::vector<std::string> args;
  for (const CLI::Option* option : options) {
    const std::string name = "--" + option->get_lnames().front();
    for (const std::string& value : option->results()) {
      if (option->get_expected_max() == 0) {
        // A flag: its value attached, so that `--flag=false` stays false.
        args.push_back(name + "=" + value);
      } else {
        args.insert(args.end(), {name, value});
      }
    }
  }
  return args;
}

}  // namespace tock::server
