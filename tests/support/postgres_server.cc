#include "tests/support/postgres_server.h"

#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <random>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/process.h"

namespace tock::testing {
namespace {

constexpr char kRunuser[] = "/usr/sbin/runuser";
constexpr char kServerUser[] = "postgres";
constexpr char kFallbackBinDir[] = "/usr/lib/postgresql/15/bin";
constexpr int kPortAttempts = 5;

// argv that runs `args` as the postgres OS user from `dir` (its tools complain when the
// working directory, the test's build folder, is not readable by that user).
std::vector<std::string> AsServerUser(const std::string& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {kRunuser, "-u", kServerUser, "--", "/bin/sh", "-c",
                                   "cd \"$0\" && exec \"$@\"", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string Describe(const ProcessResult& r) {
  std::string out = r.timed_out ? "timed out" : "exit code " + std::to_string(r.exit_code);
  if (!r.err.empty()) out += ": " + r.err;
  if (!r.out.empty()) out += " " + r.out;
  return out;
}

// A zombie counts as gone: the postmaster is not our child, and its new parent (whoever
// reaps orphans here) may be slow to collect it.
bool Alive(pid_t pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

// Waits (bounded) for `pid` to be gone; the postmaster is not our child, so it is polled.
bool WaitGone(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (Alive(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// pg_ctl stop -m immediate, then SIGKILL of the postmaster when that fails.
bool StopServer(const std::string& bindir, const std::string& dir, pid_t pid,
                std::string* error) {
  ProcessResult r = RunProcess(AsServerUser(dir, {bindir + "/pg_ctl", "stop", "-D", dir + "/data",
                                                  "-m", "immediate", "-w", "-t", "10"}),
                               {}, "", std::chrono::seconds(15));
  if (r.exit_code == 0 && WaitGone(pid, std::chrono::seconds(5))) return true;
  if (pid > 0) kill(pid, SIGKILL);
  if (WaitGone(pid, std::chrono::seconds(10))) return true;
  if (error != nullptr) *error = "PostgreSQL (pid " + std::to_string(pid) + ") did not stop: " +
                                 Describe(r);
  return false;
}

}  // namespace

std::string PostgresBinDir() {
  ProcessResult r = RunProcess({"/usr/bin/pg_config", "--bindir"}, {}, "", std::chrono::seconds(10));
  std::string dir = r.exit_code == 0 ? r.out : "";
  while (!dir.empty() && std::isspace(static_cast<unsigned char>(dir.back()))) dir.pop_back();
  // Debian's pg_config (from libpq-dev) may name the client folder /usr/bin: the server
  // binaries live in the versioned folder.
  if (!dir.empty() && std::filesystem::exists(dir + "/initdb") &&
      std::filesystem::exists(dir + "/postgres")) {
    return dir;
  }
  if (std::filesystem::exists(std::string(kFallbackBinDir) + "/initdb")) return kFallbackBinDir;
  return "";
}

PostgresServer::~PostgresServer() {
  if (detached_) return;
  Stop();
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::string PostgresServer::Url(const std::string& database) const {
  return "postgresql://tock@127.0.0.1:" + std::to_string(port_) + "/" + database;
}

std::string PostgresServer::Log() const {
  std::ifstream in(dir_ + "/postgres.log");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool PostgresServer::Init() {
  bindir_ = PostgresBinDir();
  if (bindir_.empty()) {
    error_ = "PostgreSQL 15 is not installed (no initdb in `pg_config --bindir` or " +
             std::string(kFallbackBinDir) + "); ./scripts/setup.sh installs postgresql-15";
    return false;
  }
  const passwd* user = getpwnam(kServerUser);
  if (user == nullptr) {
    error_ = "there is no `postgres` OS user to run PostgreSQL as (postgresql-15 creates it)";
    return false;
  }
  // Short: the socket path (DIR/.s.PGSQL.PORT) must fit in 107 bytes.
  std::string pattern = "/tmp/tock-pg-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    error_ = "cannot create a folder in /tmp: " + std::string(strerror(errno));
    return false;
  }
  dir_ = pattern;
  if (chown(dir_.c_str(), user->pw_uid, user->pw_gid) != 0) {
    error_ = "cannot give " + dir_ + " to the postgres user: " + std::string(strerror(errno));
    return false;
  }
  ProcessResult r = RunProcess(
      AsServerUser(dir_, {bindir_ + "/initdb", "-D", dir_ + "/data", "-U", "tock", "-A", "trust",
                          "-E", "UTF8", "--no-locale", "-N"}),
      {}, "", std::chrono::seconds(60));
  if (r.exit_code != 0) {
    error_ = "initdb failed: " + Describe(r);
    return false;
  }
  return true;
}

bool PostgresServer::ReadPid() {
  std::ifstream in(dir_ + "/data/postmaster.pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 0) {
    error_ = "PostgreSQL started but " + dir_ + "/data/postmaster.pid has no pid";
    return false;
  }
  pid_ = static_cast<pid_t>(pid);
  return true;
}

bool PostgresServer::StartOnce(bool* port_clash) {
  *port_clash = false;
  const std::string log = dir_ + "/postgres.log";
  const auto log_size_before =
      std::filesystem::exists(log) ? std::filesystem::file_size(log) : 0;
  const std::string options =
      "-c listen_addresses=127.0.0.1 -c port=" + std::to_string(port_) +
      " -c unix_socket_directories=" + dir_ +
      " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
      " -c max_connections=300 -c shared_buffers=32MB -c max_parallel_workers_per_gather=0";
  ProcessResult r = RunProcess(AsServerUser(dir_, {bindir_ + "/pg_ctl", "start", "-D",
                                                   dir_ + "/data", "-l", log, "-w", "-t", "30",
                                                   "-o", options}),
                               {}, "", std::chrono::seconds(40));
  if (r.exit_code == 0) return ReadPid();
  const std::string tail = Log().substr(std::min<size_t>(log_size_before, Log().size()));
  *port_clash = tail.find("Address already in use") != std::string::npos;
  error_ = "pg_ctl start failed: " + Describe(r) + "\nserver log:\n" + tail;
  return false;
}

bool PostgresServer::Start() {
  if (running_) return true;
  const bool first = dir_.empty();
  if (first && !Init()) return false;
  for (int attempt = 0; attempt < (first ? kPortAttempts : 1); ++attempt) {
    if (first) port_ = ClosedLocalPort();
    bool clash = false;
    if (StartOnce(&clash)) {
      running_ = true;
      return true;
    }
    if (!clash) return false;
  }
  return false;
}

void PostgresServer::Stop() {
  if (!running_) return;
  StopServer(bindir_, dir_, pid_, &error_);
  running_ = false;
  pid_ = 0;
}

bool PostgresServer::Restart() {
  if (!running_) return Start();
  ProcessResult r = RunProcess(AsServerUser(dir_, {bindir_ + "/pg_ctl", "restart", "-D",
                                                   dir_ + "/data", "-l", dir_ + "/postgres.log",
                                                   "-m", "fast", "-w", "-t", "30"}),
                               {}, "", std::chrono::seconds(40));
  if (r.exit_code != 0) {
    error_ = "pg_ctl restart failed: " + Describe(r) + "\nserver log:\n" + Log();
    return false;
  }
  return ReadPid();
}

bool PostgresServer::StopDetached(const std::string& dir, pid_t pid, std::string* error) {
  if (dir.rfind("/tmp/tock-pg-", 0) != 0) {
    if (error != nullptr) *error = "refusing to remove " + dir + ": not a folder of ours";
    return false;
  }
  const std::string bindir = PostgresBinDir();
  bool stopped = true;
  if (Alive(pid)) stopped = StopServer(bindir.empty() ? kFallbackBinDir : bindir, dir, pid, error);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return stopped;
}

namespace {

bool ValidName(const std::string& name, std::string* error) {
  if (name.empty() || name.size() > 63) {
    *error = "a database name needs 1 to 63 characters";
    return false;
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      *error = "a test database name may hold letters, digits and _ only";
      return false;
    }
  }
  return true;
}

// Runs one statement through `url`; false with libpq's reason in `error`.
bool RunStatement(const std::string& url, const std::string& sql, std::string* error) {
  PGconn* conn = PQconnectdb(
      (url + (url.find('?') == std::string::npos ? "?" : "&") + "connect_timeout=10").c_str());
  bool ok = PQstatus(conn) == CONNECTION_OK;
  if (ok) {
    PGresult* r = PQexec(conn, sql.c_str());
    ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
  }
  if (!ok) *error = sql + " failed: " + PQerrorMessage(conn);
  PQfinish(conn);
  return ok;
}

}  // namespace

bool CreatePostgresDatabase(const std::string& admin_url, const std::string& name,
                            std::string* error) {
  return ValidName(name, error) && RunStatement(admin_url, "CREATE DATABASE " + name, error);
}

bool DropPostgresDatabase(const std::string& admin_url, const std::string& name,
                          std::string* error) {
  return ValidName(name, error) &&
         RunStatement(admin_url, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", error);
}

bool FreshPostgresDatabase::Create(const std::string& fixture_file, const std::string& prefix) {
  admin_url_ = SharedPostgresAdminUrl(fixture_file, &error_);
  if (admin_url_.empty()) return false;
  std::random_device random;
  const std::string name = prefix + std::to_string(getpid()) + "_" + std::to_string(random());
  if (!CreatePostgresDatabase(admin_url_, name, &error_)) return false;
  name_ = name;
  url_ = PostgresUrlWithDatabase(admin_url_, name_);
  return true;
}

FreshPostgresDatabase::~FreshPostgresDatabase() {
  if (name_.empty()) return;
  std::string error;
  if (!DropPostgresDatabase(admin_url_, name_, &error)) {
    std::fprintf(stderr, "could not drop the test database %s: %s\n", name_.c_str(),
                 error.c_str());
  }
}

bool PostgresServer::CreateDatabase(const std::string& name) {
  return CreatePostgresDatabase(Url("postgres"), name, &error_);
}

std::string SharedPostgresAdminUrl(const std::string& fixture_file, std::string* why) {
  if (const char* url = std::getenv("TOCK_TEST_POSTGRES_URL"); url != nullptr && *url != '\0') {
    return url;
  }
  std::ifstream in(fixture_file);
  std::string url;
  if (!(in >> url) || url.empty()) {
    *why = "no PostgreSQL for the tests: " + fixture_file +
           " is missing (run the tests through ctest, whose postgres.fixture.start test "
           "starts one, or set TOCK_TEST_POSTGRES_URL to the admin URL of a server of your "
           "own; ./scripts/setup.sh installs postgresql-15)";
    return "";
  }
  return url;
}

std::string PostgresUrlWithDatabase(const std::string& url, const std::string& database) {
  const size_t scheme = url.find("://");
  const size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (slash == std::string::npos) return url + "/" + database;
  const size_t query = url.find('?', slash);
  return url.substr(0, slash + 1) + database +
         (query == std::string::npos ? "" : url.substr(query));
}

}  // namespace tock::testing
