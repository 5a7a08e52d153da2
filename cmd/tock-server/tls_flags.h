// tock-server's --tls-* flags: the `tls:` section of the configuration (config/tls_config.h)
// given on the command line, one flag per key. Each flag overrides its key in the config
// file; a frontend flag creates tls.frontend, an internode flag tls.internode. The result is
// checked like the YAML (TlsConfig::Validate: files read, key matching its certificate, both
// sections or neither), its errors naming the key the flag sets.
//
// Thread safety: one thread (the command line is read once).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "server-core/config/tls_config.h"

namespace tock::server {

class TlsFlags {
 public:
  // Registers the flags on `app` (among the others: tock-docgen reads one list of options).
  void Add(CLI::App& app);
  // Writes the flags given into `config`.
  void ApplyTo(TlsConfig& config) const;

 private:
  std::optional<std::string> cert_file_, key_file_, client_ca_file_;
  std::optional<bool> require_client_auth_;
  std::optional<std::string> internode_cert_file_, internode_key_file_, internode_ca_file_,
      internode_server_name_;
};

}  // namespace tock::server
