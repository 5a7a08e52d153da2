// What tock-server leaves on disk and in its logs (issue 15): the database with its
// write-ahead log and shared memory, and the file archives, are their owner's only (0600
// files, 0700 directories: they hold payloads); no secret given to the server or the CLI (a
// PostgreSQL password, S3 credentials, an API key) appears in the banner, the log (at debug),
// an error or the CLI's output.
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <thread>

#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {
namespace fs = std::filesystem;

// Every secret of the configuration below, and the API key of the calls.
constexpr char kPgPassword[] = "pg-SECRET-7f3a9";
constexpr char kS3Secret[] = "s3-SECRET-c81d2";
constexpr char kApiKey[] = "token-SECRET-5be04";

void ExpectNoSecret(const std::string& where, const std::string& text) {
  for (const char* secret : {kPgPassword, kS3Secret, kApiKey}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << where << " shows a secret:\n" << text;
  }
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

TEST_F(CliTest, DatabaseAndArchivesAreOwnerOnly) {
  const std::string archive = dir_.File("archive");  // made by the server
  StartServer({"--archival-dir", archive});
  json started = TockJson({"workflow", "start", "--type", "order", "--task-queue", "nobody",
                           "--id", "secret-order", "--input", "{\"card\": \"4111\"}"});
  ASSERT_EQ(Tock({"workflow", "terminate", "--workflow-id", "secret-order", "--reason", "done"})
                .exit_code,
            kExitOk);
  // The run's visibility record is archived once it closed (10 s at most).
  size_t files = 0;
  for (int i = 0; i < 100 && files == 0; ++i) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(archive, ec); !ec && it != fs::end(it); ++it) {
      files += it->is_regular_file();
    }
    if (files == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(files, 0u) << "nothing archived under " << archive;
  EXPECT_EQ(ModeOf(archive), 0700u);
  for (const auto& entry : fs::recursive_directory_iterator(archive)) {
    const std::string path = entry.path().string();
    EXPECT_EQ(ModeOf(path), entry.is_directory() ? 0700u : 0600u) << path;
  }
  // The database and, while the server has it open, its write-ahead log (with EXCLUSIVE
  // locking SQLite keeps no -shm file; any other file of the database is checked too).
  const std::string db = dir_.File("tock.db");
  EXPECT_EQ(ModeOf(db), 0600u);
  EXPECT_EQ(ModeOf(db + "-wal"), 0600u);
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("tock.db")) EXPECT_EQ(ModeOf(entry.path().string()), 0600u) << name;
  }
  EXPECT_EQ(server_->Stop(), 0);
}

TEST_F(CliTest, NoSecretIsLoggedOrPrinted) {
  const std::string config = dir_.Write("secrets.yaml", std::string(R"(log: {level: debug}
archival:
  history:
    state: enabled
    provider:
      s3store: {region: us-east-1, endpoint: "http://127.0.0.1:1", force_path_style: true,
                access_key_id: AKIDEXAMPLE, secret_access_key: ")") +
                                                            kS3Secret +
                                                            "\"}\n"
                                                            "namespace_defaults:\n"
                                                            "  archival:\n"
                                                            "    history: {state: enabled, uri: "
                                                            "\"s3://tock-archive/history\"}\n");
  StartServer({"--config", config});
  ExpectNoSecret("the banner", server_->banner());
  // Calls with an API key: answered, refused (logged at debug), and a CLI error.
  ProcessResult ok = Tock({"--api-key", kApiKey, "namespace", "describe", "default"});
  EXPECT_EQ(ok.exit_code, kExitOk) << ok.err;
  ProcessResult missing = Tock({"--api-key", kApiKey, "namespace", "describe", "nope"});
  EXPECT_EQ(missing.exit_code, kExitNotFound);
  ProcessResult unreachable = RunProcess(
      {TOCK_CLI_BIN, "--address", "127.0.0.1:1", "--api-key", kApiKey, "--timeout", "2s",
       "namespace", "describe", "default"},
      {}, "", std::chrono::seconds(30));
  EXPECT_EQ(unreachable.exit_code, kExitUnavailable);
  for (const ProcessResult* r : {&ok, &missing, &unreachable}) {
    ExpectNoSecret("tock's output", r->out + r->err);
  }
  EXPECT_EQ(server_->Stop(), 0);
  EXPECT_NE(server_->stderr_text().find("tock-server started"), std::string::npos)
      << server_->stderr_text();
  ExpectNoSecret("the server's log", server_->stderr_text());

  // A PostgreSQL URL with a password: a database that cannot be reached is named without it,
  // and so is a URL given to a server configured for SQLite.
  ServerProcess pg(TOCK_SERVER_BIN);
  EXPECT_FALSE(pg.Start({"--postgres-url",
                         std::string("postgresql://tock:") + kPgPassword + "@127.0.0.1:1/tock",
                         "--log-level", "debug"}));
  EXPECT_NE(pg.error().find("127.0.0.1"), std::string::npos) << pg.error();
  ExpectNoSecret("the server's refusal", pg.error() + pg.stderr_text());
  ServerProcess mixed(TOCK_SERVER_BIN);
  EXPECT_FALSE(mixed.Start(
      {"--config", dir_.Write("mixed.yaml", std::string("persistence: {engine: sqlite, postgres: "
                                                        "{url: \"postgresql://tock:") +
                                                kPgPassword + "@db:5432/tock\"}}\n")}));
  EXPECT_NE(mixed.error().find("persistence.postgres.url"), std::string::npos) << mixed.error();
  ExpectNoSecret("the server's refusal", mixed.error() + mixed.stderr_text());
}

}  // namespace
}  // namespace tock::testing
