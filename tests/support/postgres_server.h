// A throwaway PostgreSQL 15 server for tests: its own data directory in a fresh /tmp
// folder, listening on 127.0.0.1 on a free port, tuned for speed over durability
// (fsync, synchronous_commit and full_page_writes off: data survives a crash of the server
// process, not of the machine). The superuser is `tock`, trusted without a password.
//
// Tests run as root and PostgreSQL refuses root: initdb and pg_ctl run as the `postgres`
// OS user (runuser), in a folder chowned to it. The binaries come from
// `pg_config --bindir`, else /usr/lib/postgresql/15/bin.
//
// Every wait is bounded. The destructor stops the server (immediate mode, then SIGKILL of
// the postmaster by pid) and removes the folder, unless Detach() was called.
//
// Thread safety: one thread at a time.
#pragma once

#include <sys/types.h>

#include <string>

namespace tock::testing {

class PostgresServer {
 public:
  PostgresServer() = default;
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Creates the cluster (first call only) and starts the server; after Stop(), starts it
  // again on the same port with the same data. False with the reason (and the server's
  // log) in error(). A port taken by someone else between choosing and binding is retried
  // on another one (first start only).
  bool Start();
  // Stops the server at once (pg_ctl stop -m immediate; SIGKILL of the postmaster when
  // that does not finish in 10 s). The data stays, so Start() can bring it back.
  void Stop();
  // pg_ctl restart -m fast: every session is ended, the server comes back on the same port.
  bool Restart();

  // Leaves the server running and the folder in place at destruction (for a ctest fixture
  // whose cleanup step stops it with StopDetached).
  void Detach() { detached_ = true; }
  // Stops a detached server given its folder and postmaster pid (immediate mode, then
  // SIGKILL), and removes the folder. False with a reason in `error` when it could not.
  static bool StopDetached(const std::string& dir, pid_t pid, std::string* error);

  // postgresql://tock@127.0.0.1:PORT/DB
  std::string Url(const std::string& database = "postgres") const;
  // CREATE DATABASE `name` (letters, digits and _ only). False with the reason in error().
  bool CreateDatabase(const std::string& name);

  bool running() const { return running_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }  // the postmaster, while running
  const std::string& dir() const { return dir_; }
  const std::string& error() const { return error_; }
  // The server's log so far (for failure messages).
  std::string Log() const;

 private:
  bool Init();
  bool StartOnce(bool* port_clash);
  bool ReadPid();

  std::string bindir_;
  std::string dir_;  // the fresh folder: data/, the socket, the log
  int port_ = 0;
  pid_t pid_ = 0;
  bool running_ = false;
  bool detached_ = false;
  std::string error_;
};

// The PostgreSQL server binaries' folder, or "" when PostgreSQL 15 is not installed.
std::string PostgresBinDir();

// The admin URL (database `postgres`) of the run's shared server: TOCK_TEST_POSTGRES_URL
// when set, else the first line of `fixture_file` (written by tock_postgres_fixture). ""
// with the reason in `why` when neither is there.
std::string SharedPostgresAdminUrl(const std::string& fixture_file, std::string* why);
// `url` with its database replaced by `database`.
std::string PostgresUrlWithDatabase(const std::string& url, const std::string& database);
// CREATE DATABASE `name` (letters, digits and _) through `admin_url`; DROP ... WITH (FORCE).
// False with the reason in `error`.
bool CreatePostgresDatabase(const std::string& admin_url, const std::string& name,
                            std::string* error);
bool DropPostgresDatabase(const std::string& admin_url, const std::string& name,
                          std::string* error);

// A database of its own on the run's shared server (see SharedPostgresAdminUrl), named
// `prefix` + pid + a random number, dropped (FORCE) when this goes.
class FreshPostgresDatabase {
 public:
  FreshPostgresDatabase() = default;
  ~FreshPostgresDatabase();
  FreshPostgresDatabase(const FreshPostgresDatabase&) = delete;
  FreshPostgresDatabase& operator=(const FreshPostgresDatabase&) = delete;

  // False with the reason in error().
  bool Create(const std::string& fixture_file, const std::string& prefix);
  const std::string& url() const { return url_; }
  const std::string& error() const { return error_; }

 private:
  std::string admin_url_, name_, url_, error_;
};

}  // namespace tock::testing
