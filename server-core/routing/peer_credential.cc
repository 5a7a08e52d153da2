#include "server-core/routing/peer_credential.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tock::server::routing {

absl::StatusOr<std::string> PeerCredential::NewSecret() {
  std::array<unsigned char, kSecretBytes> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return absl::InternalError("could not generate the host secret (OpenSSL RAND_bytes failed)");
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

absl::StatusOr<PeerCredential> PeerCredential::FromSecret(std::string secret) {
  bool hex = secret.size() == 2 * kSecretBytes;
  for (char c : secret) hex = hex && absl::ascii_isxdigit(static_cast<unsigned char>(c));
  if (!hex) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the database's host secret (cluster_metadata key host_secret) is not ",
        2 * kSecretBytes, " hex characters; hosts could not recognize each other's calls"));
  }
  return PeerCredential(std::move(secret));
}

void PeerCredential::Stamp(grpc::ClientContext& context) const {
  context.AddMetadata(kForwardedHeader, secret_);
}

bool PeerCredential::Bears(const rpc::CallContext& ctx, const char* header) const {
  if (ctx.grpc == nullptr) return false;
  const auto& metadata = ctx.grpc->client_metadata();
  auto it = metadata.find(header);
  // The length is no secret (every secret has the same); the bytes are compared in constant
  // time, so that a client cannot find them one at a time by timing refusals.
  if (it == metadata.end() || it->second.size() != secret_.size()) return false;
  return CRYPTO_memcmp(it->second.data(), secret_.data(), secret_.size()) == 0;
}

bool PeerCredential::FromPeer(const rpc::CallContext& ctx) const {
  return Bears(ctx, kForwardedHeader);
}

rpc::Dialer PeerCredential::OwnCallsDialer(const rpc::Dialer& dialer) const {
  return dialer.WithMetadata(kOwnCallHeader, secret_);
}

bool PeerCredential::OwnCall(const rpc::CallContext& ctx) const {
  return Bears(ctx, kOwnCallHeader);
}

}  // namespace tock::server::routing
