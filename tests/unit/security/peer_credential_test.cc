// The host secret's shape (server-core/routing/peer_credential.h): fresh secrets are 32
// random bytes in hex, and a stored value of any other shape stops the start without being
// quoted. (Its use on real calls, forged and genuine, is tested against tock-server processes:
// tests/cli/security_multi_host_test.cc, rate_limit_cli_test.cc, authz_cli_test.cc.)
#include "server-core/routing/peer_credential.h"

#include <gtest/gtest.h>

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace tock::server::routing {
namespace {

TEST(PeerCredentialTest, FreshSecretsAre64LowercaseHexCharactersAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<std::string> secret = PeerCredential::NewSecret();
    ASSERT_TRUE(secret.ok()) << secret.status();
    ASSERT_EQ(secret->size(), 2 * PeerCredential::kSecretBytes);
    for (char c : *secret) {
      EXPECT_TRUE(absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f')) << *secret;
    }
    EXPECT_TRUE(PeerCredential::FromSecret(*secret).ok());
    seen.insert(*secret);
  }
  EXPECT_EQ(seen.size(), 20u);
}

TEST(PeerCredentialTest, AStoredSecretOfAnotherShapeIsRefusedWithoutQuotingIt) {
  const std::string good(64, 'a');
  for (const std::string& bad : {std::string(), std::string("1"), good.substr(1), good + "a",
                                 std::string(63, 'a') + "g", std::string(63, 'a') + " "}) {
    absl::StatusOr<PeerCredential> c = PeerCredential::FromSecret(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(c.status().message(),
              "the database's host secret (cluster_metadata key host_secret) is not 64 hex "
              "characters; hosts could not recognize each other's calls");
  }
  EXPECT_TRUE(PeerCredential::FromSecret(std::string(64, 'F')).ok());
}

TEST(PeerCredentialTest, ACallWithoutGrpcContextIsNoPeersNorOwn) {
  absl::StatusOr<PeerCredential> c = PeerCredential::FromSecret(std::string(64, '0'));
  ASSERT_TRUE(c.ok());
  rpc::CallContext ctx;  // an in-process call: no metadata at all
  EXPECT_FALSE(c->FromPeer(ctx));
  EXPECT_FALSE(c->OwnCall(ctx));
}

}  // namespace
}  // namespace tock::server::routing
