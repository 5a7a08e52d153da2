// tock_postgres_fixture start|stop STATE_FILE: one throwaway PostgreSQL shared by the tests
// of a ctest run. gtest_discover_tests runs every test in its own process, so a server per
// test would cost an initdb each; instead a ctest fixture's setup step starts one server and
// writes its admin URL, postmaster pid and folder to STATE_FILE (one per line), the tests
// read the URL and create a database each, and the cleanup step stops the server by pid and
// removes its folder.
//
// Exit codes: 0 ok; 1 failure (the reason on stderr); 2 usage.
#include <fstream>
#include <iostream>
#include <string>

#include "tests/support/postgres_server.h"

namespace {

int Start(const std::string& state_file) {
  tock::testing::PostgresServer server;
  if (!server.Start()) {
    std::cerr << "tock_postgres_fixture: cannot start PostgreSQL: " << server.error() << "\n";
    return 1;
  }
  // Written to a temporary name then renamed, so a reader never sees half a file.
  const std::string tmp = state_file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << server.Url("postgres") << "\n" << server.pid() << "\n" << server.dir() << "\n";
    if (!out) {
      std::cerr << "tock_postgres_fixture: cannot write " << tmp << "\n";
      return 1;  // the server's destructor stops it
    }
  }
  if (std::rename(tmp.c_str(), state_file.c_str()) != 0) {
    std::cerr << "tock_postgres_fixture: cannot rename " << tmp << " to " << state_file << "\n";
    return 1;
  }
  server.Detach();
  std::cout << "PostgreSQL " << server.Url("postgres") << " (pid " << server.pid() << ", "
            << server.dir() << ")\n";
  return 0;
}

int Stop(const std::string& state_file) {
  std::ifstream in(state_file);
  std::string url, dir;
  long pid = 0;
  if (!(in >> url >> pid >> dir)) {
    // Nothing was started (the setup step failed): nothing to stop.
    std::cout << "no PostgreSQL recorded in " << state_file << "\n";
    return 0;
  }
  in.close();
  std::string error;
  const bool stopped =
      tock::testing::PostgresServer::StopDetached(dir, static_cast<pid_t>(pid), &error);
  std::remove(state_file.c_str());
  if (!stopped) {
    std::cerr << "tock_postgres_fixture: " << error << "\n";
    return 1;
  }
  std::cout << "stopped PostgreSQL pid " << pid << " and removed " << dir << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "start" && std::string(argv[1]) != "stop")) {
    std::cerr << "usage: tock_postgres_fixture start|stop STATE_FILE\n";
    return 2;
  }
  return std::string(argv[1]) == "start" ? Start(argv[2]) : Stop(argv[2]);
}
