// Namespace archival settings through `tock namespace register/update` against a server
// configured for file archival (SPEC §3): defaults, the URI that never changes, and the
// exact messages and exit codes of bad input, with nothing stored on a refusal.
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

class ArchivalCliTest : public CliTest {
 protected:
  void SetUp() override {
    const std::string archive = "file://" + dir_.File("archive");
    StartServer({"--config", dir_.Write("archival.yaml",
                                        "archival:\n"
                                        "  history:\n"
                                        "    state: enabled\n"
                                        "    enable_read: true\n"
                                        "    provider: {filestore: {}}\n"
                                        "  visibility:\n"
                                        "    state: enabled\n"
                                        "    provider: {filestore: {}}\n"
                                        "namespace_defaults:\n"
                                        "  archival:\n"
                                        "    history: {state: enabled, uri: \"" +
                                            archive +
                                            "\"}\n"
                                            "    visibility: {state: disabled, uri: \"" +
                                            archive + "-vis\"}\n")});
    default_uri_ = archive;
  }
  std::string default_uri_;
};

TEST_F(ArchivalCliTest, DefaultsAndExplicitSettings) {
  json ns = TockJson({"namespace", "register", "defaulted"});
  EXPECT_EQ(At(ns, "/config/historyArchivalState"), "ARCHIVAL_STATE_ENABLED");
  EXPECT_EQ(At(ns, "/config/historyArchivalUri"), default_uri_);
  EXPECT_EQ(At(ns, "/config/visibilityArchivalState"), "ARCHIVAL_STATE_DISABLED");

  const std::string mine = "file://" + dir_.File("mine");
  ns = TockJson({"namespace", "register", "explicit", "--history-archival-state", "enabled",
                 "--history-uri", mine, "--visibility-archival-state", "enabled"});
  EXPECT_EQ(At(ns, "/config/historyArchivalUri"), mine);
  EXPECT_EQ(At(ns, "/config/visibilityArchivalState"), "ARCHIVAL_STATE_ENABLED");
  EXPECT_EQ(At(ns, "/config/visibilityArchivalUri"), default_uri_ + "-vis");

  ns = TockJson({"namespace", "update", "explicit", "--history-archival-state", "disabled"});
  EXPECT_EQ(At(ns, "/config/historyArchivalState"), "ARCHIVAL_STATE_DISABLED");
  EXPECT_EQ(At(ns, "/config/historyArchivalUri"), mine) << "the URI stays";
}

TEST_F(ArchivalCliTest, BadInputExactMessagesAndNothingStored) {
  ExpectError({"namespace", "register", "ftp", "--history-archival-state", "enabled",
               "--history-uri", "ftp://host/dir"},
              kExitUsage,
              "invalid archival URI \"ftp://host/dir\": unknown archiver scheme \"ftp\"; use "
              "file:///DIR or s3://BUCKET[/PREFIX]");
  ExpectError({"namespace", "register", "nobucket", "--history-uri", "s3:///x"}, kExitUsage,
              "invalid archival URI \"s3:///x\": the bucket is empty; use s3://BUCKET[/PREFIX]");
  EXPECT_EQ(Tock({"namespace", "describe", "ftp"}).exit_code, kExitNotFound) << "nothing stored";

  ASSERT_NO_FATAL_FAILURE(Register({"fixed"}));
  ExpectError({"namespace", "update", "fixed", "--history-uri", "file:///elsewhere"}, kExitUsage,
              "Cannot update existing archival URI");
  EXPECT_EQ(At(TockJson({"namespace", "describe", "fixed"}), "/config/historyArchivalUri"),
            default_uri_);
  ProcessResult bad_state =
      Tock({"namespace", "update", "fixed", "--history-archival-state", "on"});
  EXPECT_EQ(bad_state.exit_code, kExitUsage);
  EXPECT_NE(bad_state.err.find("enabled"), std::string::npos) << bad_state.err;
}

TEST_F(CliTest, AKindTheClusterDoesNotArchiveIgnoresItsFlags) {
  StartServer({"--config", dir_.Write("no-default.yaml",
                                      "archival:\n"
                                      "  history: {state: enabled, provider: {filestore: {}}}\n"
                                      "namespace_defaults:\n"
                                      "  archival:\n"
                                      "    history: {uri: \"file:///srv/tock\"}\n")});
  // The visibility kind is not configured: its fields are ignored, as Temporal does.
  json ns = TockJson({"namespace", "register", "vis", "--visibility-archival-state", "enabled"});
  EXPECT_EQ(At(ns, "/config/visibilityArchivalState"), "ARCHIVAL_STATE_DISABLED");
}

}  // namespace
}  // namespace tock::testing
