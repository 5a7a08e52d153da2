// The flags of tock-server, in ONE list shared by the two programs that take them:
// tock-server itself and `tock server start-dev`, which runs tock-server with the flags it
// was given. A flag added here is a flag of both; nothing is kept in step by hand (the CLI
// test StartDevTakesEveryFlagOfTockServer compares the two --help outputs).
//
// This library depends on CLI11 only, not on the server core: `tock` links it and stays
// small. tock-server writes the values into its configuration (apply_flags.h).
//
// Thread safety: one thread (the command line is read once).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tock::server {

// The values of the flags; each unset unless given (a flag overrides its config key).
struct ServerFlags {
  std::string config_path;
  std::optional<int> port;
  std::optional<std::string> ip;
  std::optional<std::string> db_file;
  std::optional<std::string> sqlite_synchronous;
  std::optional<std::string> postgres_url;
  std::vector<std::string> namespaces;
  std::optional<std::string> archival_dir;
  bool time_skipping = false;
  std::optional<std::string> replication_faults_file;
  std::optional<std::string> dc_redirection_policy;
  std::optional<int> metrics_port;
  std::optional<int> http_port;
  // The web console on the HTTP port (`console:`).
  bool headless = false;
  std::optional<std::string> ui_codec_endpoint;
  bool ui_read_only = false;
  std::optional<std::string> ui_public_path;
  std::optional<int> ui_port;
  std::optional<std::string> ui_ip;
  // The `tls:` section, one flag per key.
  struct Tls {
    std::optional<std::string> cert_file, key_file, client_ca_file;
    std::optional<bool> require_client_auth;
    std::optional<std::string> internode_cert_file, internode_key_file, internode_ca_file,
        internode_server_name;
  };
  Tls tls;
  std::optional<std::string> log_level;
  std::optional<std::string> log_format;
  std::optional<std::string> log_file;
};

// Registers every flag on `app`, writing into `flags` (which must outlive the parse), and
// returns the options added, in order. Only the flags meant for people: the hidden testing
// switches stay in tock-server's main.
std::vector<CLI::Option*> AddServerFlags(CLI::App& app, ServerFlags& flags);

// The options of `options` that were given on the parsed command line, as tock-server
// arguments ("--port", "0", "--enable-time-skipping", ...), in the order of `options`: how
// start-dev hands its flags over.
std::vector<std::string> GivenFlagsAsArguments(const std::vector<CLI::Option*>& options);

}  // namespace tock::server
