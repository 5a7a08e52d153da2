#include "server-core/security/authz_interceptor.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpc/grpc_security_constants.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <openssl/sha.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tock::server::security {
namespace {

namespace pb = google::protobuf;
using pb::internal::WireFormatLite;

constexpr size_t kMaxNamespaceBytes = 1000;

// "StartWorkflowExecution on namespace "orders" needs the write role".
std::string Needs(const Authorizer::Compiled& method, absl::string_view namespace_name) {
  const absl::string_view name = ShortMethodName(method.rule.method);
  if (method.rule.scope == Scope::kCluster) {
    return absl::StrCat(name, " needs the ", kSystemNamespace, ":", RoleName(method.rule.role),
                        " role");
  }
  return absl::StrCat(name, " on namespace \"", absl::CHexEscape(namespace_name), "\" needs the ",
                      RoleName(method.rule.role), " role");
}

std::string Sha256(absl::string_view text) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

}  // namespace

std::string ReadNamespaceField(const grpc::ByteBuffer& payload, int field_number) {
  if (!payload.Valid()) return "";  // no message at all (gRPC's reader needs one)
  grpc::ByteBuffer copy(payload);  // shares the slices
  grpc::ProtoBufferReader reader(&copy);
  pb::io::CodedInputStream in(&reader);
  std::string found;
  // Proto semantics: the last occurrence of a field wins.
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == field_number &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length) || length > kMaxNamespaceBytes) return "";
      if (!in.ReadString(&found, static_cast<int>(length))) return "";
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return "";
  }
  return in.ConsumedEntireMessage() ? found : "";
}

Authorizer::Authorizer(const AuthorizationConfig& config, Clock& clock, Logger& logger)
    : verifier_(TokenChecks{config.issuer, config.audience, config.permissions_claim}),
      clock_(clock),
      logger_(logger) {
  for (const auto& [subject, entries] : config.subjects) {
    subjects_.emplace(subject, MapPermissions(entries));
  }
}

absl::StatusOr<std::unique_ptr<Authorizer>> Authorizer::Create(const AuthorizationConfig& config,
                                                               Clock& clock, Logger& logger) {
  std::unique_ptr<Authorizer> authorizer(new Authorizer(config, clock, logger));
  if (!config.jwks.empty() && config.audience.empty()) {
    // An identity provider mints tokens for many services: without an audience, a token it
    // issued for any of them (with permissions in the same claim) is accepted here too.
    logger.Warn(
        "authorization.audience is not set: bearer tokens are accepted whatever their aud "
        "claim, so a token the identity provider issued for another service works here too; "
        "set authorization.audience to the value your provider puts in tokens for tock");
  }
  if (!config.jwks.empty()) {
    absl::StatusOr<std::unique_ptr<JwksSource>> jwks =
        JwksSource::Start(config.jwks, config.jwks_refresh, logger);
    if (!jwks.ok()) return jwks.status();
    authorizer->jwks_ = std::move(*jwks);
  }
  return authorizer;
}

absl::StatusOr<Authorizer::Compiled> Authorizer::Compile(const std::string& method) {
  std::optional<MethodRule> rule = RuleFor(method);
  if (!rule) return absl::FailedPreconditionError("no authorization rule");
  Compiled out{*rule};
  if (rule->scope != Scope::kNamespace) return out;
  // The request is <package>.<Method>Request, as in every service tock-server answers.
  const size_t slash = method.find('/');
  const size_t dot = method.rfind('.', slash);
  if (slash == std::string::npos || dot == std::string::npos) {
    return absl::FailedPreconditionError("not a package.Service/Method name");
  }
  const std::string type =
      absl::StrCat(method.substr(0, dot), ".", method.substr(slash + 1), "Request");
  const pb::Descriptor* request = pb::DescriptorPool::generated_pool()->FindMessageTypeByName(type);
  const pb::FieldDescriptor* field = request == nullptr ? nullptr : request->FindFieldByName("namespace");
  if (field == nullptr || field->type() != pb::FieldDescriptor::TYPE_STRING || field->is_repeated()) {
    return absl::FailedPreconditionError(
        absl::StrCat("a namespace rule, but ", type, " has no string field `namespace`"));
  }
  out.namespace_field = field->number();
  return out;
}

absl::Status Authorizer::Install(rpc::Dispatcher& dispatcher,
                                 const routing::PeerCredential* peers) {
  std::vector<std::string> methods = dispatcher.Methods();
  std::sort(methods.begin(), methods.end());
  std::vector<std::string> missing;
  std::vector<std::pair<std::string, Compiled>> compiled;
  for (const std::string& method : methods) {
    absl::StatusOr<Compiled> c = Compile(method);
    if (!c.ok()) {
      missing.push_back(absl::StrCat(method, " (", c.status().message(), ")"));
      continue;
    }
    compiled.emplace_back(method, *c);
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("authorization: no usable rule for ", absl::StrJoin(missing, ", "),
                     "; every method needs one in server-core/security/authz_rules.cc"));
  }
  // gRPC hands the dispatcher a call's metadata before its message: a cluster or open
  // method is decided on the metadata alone, so a caller refused there never has its
  // message read. A namespace method needs the request's namespace field, so it is decided
  // once the message has arrived (gRPC has already refused one over the receive limit,
  // server.cc), before it is queued for a handler thread or parsed: only that field is read.
  for (auto& [method, c] : compiled) {
    dispatcher.Admit(method, [this, peers, c = std::move(c)](
                                 const rpc::CallContext& ctx,
                                 const grpc::ByteBuffer* payload) -> grpc::Status {
      // Each call is decided at one of the two steps: the other lets it through.
      const bool needs_payload = c.rule.scope == Scope::kNamespace;
      if (needs_payload != (payload != nullptr)) return grpc::Status::OK;
      // Authorized by the host that took it from its client, a host's own call, or a
      // batch's or schedule's call authorized when it was created (peer_credential.h).
      if (peers != nullptr && (peers->FromPeer(ctx) || peers->OwnCall(ctx))) {
        return grpc::Status::OK;
      }
      absl::Status s = Check(c, ctx, payload != nullptr ? *payload : grpc::ByteBuffer());
      if (s.ok()) return grpc::Status::OK;
      return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
    });
  }
  logger_.Info("authorization on", {{"methods", absl::StrCat(compiled.size())},
                                    {"jwks", jwks_ != nullptr ? "yes" : "no"},
                                    {"subjects", absl::StrCat(subjects_.size())}});
  return absl::OkStatus();
}

absl::StatusOr<Permissions> Authorizer::FromToken(absl::string_view token) {
  if (jwks_ == nullptr) {
    return absl::UnauthenticatedError(
        "bearer tokens are not accepted by this server (authorization.jwks is not set)");
  }
  const absl::Time now = clock_.Now();
  const std::string key = Sha256(token);
  const uint64_t generation = jwks_->generation();
  {
    std::lock_guard lock(cache_mu_);
    if (cache_generation_ != generation) {
      cache_.clear();
      cache_generation_ = generation;
    }
    if (auto it = cache_.find(key); it != cache_.end()) {
      if (now <= it->second.expires + kClockSkew) return it->second.permissions;
      cache_.erase(it);  // verified again below, and refused as expired
    }
  }
  absl::StatusOr<VerifiedToken> verified = verifier_.Verify(token, *jwks_->Current(), now);
  if (!verified.ok()) {
    if (absl::StrContains(verified.status().message(), "not in the configured JWKS")) {
      jwks_->RequestRefresh();  // perhaps a key the provider has just rotated in
    }
    return verified.status();
  }
  std::lock_guard lock(cache_mu_);
  if (cache_generation_ == generation) {
    if (cache_.size() >= kMaxCachedTokens) cache_.clear();
    cache_[key] = Cached{verified->permissions, verified->expires};
  }
  return std::move(verified->permissions);
}

std::pair<absl::string_view, std::string> Authorizer::Credentials(const rpc::CallContext& ctx) {
  absl::string_view authorization;
  std::string subject;
  if (ctx.grpc != nullptr) {
    const auto& metadata = ctx.grpc->client_metadata();
    if (auto it = metadata.find("authorization"); it != metadata.end()) {
      authorization = absl::string_view(it->second.data(), it->second.size());
    }
    std::shared_ptr<const grpc::AuthContext> auth = ctx.grpc->auth_context();
    if (auth != nullptr && auth->IsPeerAuthenticated()) {
      for (const grpc::string_ref& s : auth->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME)) {
        subject.assign(s.data(), s.size());
      }
    }
  }
  return {authorization, std::move(subject)};
}

absl::Status Authorizer::Check(const Compiled& method, const rpc::CallContext& ctx,
                               const grpc::ByteBuffer& payload) {
  const auto [authorization, subject] = Credentials(ctx);
  return Check(method, authorization, subject, payload);
}

absl::StatusOr<Permissions> Authorizer::Identify(const rpc::CallContext& ctx) {
  const auto [authorization, subject] = Credentials(ctx);
  return Identify(authorization, subject);
}

absl::StatusOr<Permissions> Authorizer::Identify(absl::string_view authorization,
                                                 absl::string_view subject) {
  Permissions permissions;
  bool identified = false;
  if (!subject.empty()) {
    if (auto it = subjects_.find(subject); it != subjects_.end()) {
      permissions.Merge(it->second);
      identified = true;
    }
  }
  if (!authorization.empty()) {
    if (authorization.size() > kMaxHeaderBytes) {
      return absl::UnauthenticatedError(
          absl::StrCat("the authorization header is longer than ", kMaxHeaderBytes, " bytes"));
    }
    constexpr absl::string_view kBearer = "Bearer ";
    if (authorization.size() <= kBearer.size() ||
        !absl::EqualsIgnoreCase(authorization.substr(0, kBearer.size()), kBearer)) {
      return absl::UnauthenticatedError("the authorization header is not \"Bearer <token>\"");
    }
    absl::StatusOr<Permissions> from_token =
        FromToken(absl::StripAsciiWhitespace(authorization.substr(kBearer.size())));
    if (!from_token.ok()) return from_token.status();
    permissions.Merge(*from_token);
    identified = true;
  }
  if (!identified) {
    return absl::UnauthenticatedError(
        "no bearer token in the authorization header, and no client certificate with a "
        "configured subject");
  }
  return permissions;
}

absl::Status Authorizer::Check(const Compiled& method, absl::string_view authorization,
                               absl::string_view subject, const grpc::ByteBuffer& payload) {
  if (method.rule.scope == Scope::kOpen) return absl::OkStatus();
  const std::string namespace_name =
      method.rule.scope == Scope::kNamespace ? ReadNamespaceField(payload, method.namespace_field)
                                             : std::string();
  absl::StatusOr<Permissions> permissions = Identify(authorization, subject);
  if (!permissions.ok()) {
    if (permissions.status().code() != absl::StatusCode::kUnauthenticated) return permissions.status();
    return absl::UnauthenticatedError(
        absl::StrCat(Needs(method, namespace_name), ": ", permissions.status().message()));
  }
  const Role held = method.rule.scope == Scope::kCluster ? permissions->system
                                                         : permissions->On(namespace_name);
  if (held < method.rule.role) return absl::PermissionDeniedError(Needs(method, namespace_name));
  return absl::OkStatus();
}

}  // namespace tock::server::security
