// Global options, output and color choice, exit codes: the CLI contract of DESIGN.md.
#include "cmd/tock/context.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

namespace tock::cli {
namespace {

// Sets (or, with nullptr, unsets) environment variables for one test and restores them.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::map<std::string, const char*> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      if (value) {
        setenv(name.c_str(), value, 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

const std::map<std::string, const char*> kClean = {
    {"TOCK_ADDRESS", nullptr},   {"TEMPORAL_ADDRESS", nullptr}, {"TOCK_NAMESPACE", nullptr},
    {"TEMPORAL_NAMESPACE", nullptr}, {"TOCK_API_KEY", nullptr},  {"TEMPORAL_API_KEY", nullptr},
    {"NO_COLOR", nullptr}};

std::map<std::string, const char*> Clean(std::map<std::string, const char*> set) {
  std::map<std::string, const char*> all = kClean;
  for (const auto& [k, v] : set) all[k] = v;
  return all;
}

TEST(ExitCodes, EveryStatusCode) {
  EXPECT_EQ(ExitCodeFor(absl::OkStatus()), kExitOk);
  EXPECT_EQ(ExitCodeFor(absl::InvalidArgumentError("")), kExitUsage);
  EXPECT_EQ(ExitCodeFor(absl::OutOfRangeError("")), kExitUsage);
  EXPECT_EQ(ExitCodeFor(absl::NotFoundError("")), kExitNotFound);
  EXPECT_EQ(ExitCodeFor(absl::UnavailableError("")), kExitUnavailable);
  EXPECT_EQ(ExitCodeFor(absl::DeadlineExceededError("")), kExitUnavailable);
  EXPECT_EQ(ExitCodeFor(absl::AlreadyExistsError("")), kExitConflict);
  EXPECT_EQ(ExitCodeFor(absl::AbortedError("")), kExitConflict);
  for (absl::Status other : {absl::InternalError(""), absl::UnknownError(""),
                             absl::PermissionDeniedError(""), absl::UnauthenticatedError(""),
                             absl::FailedPreconditionError(""), absl::UnimplementedError(""),
                             absl::ResourceExhaustedError(""), absl::CancelledError(""),
                             absl::DataLossError("")}) {
    EXPECT_EQ(ExitCodeFor(other), kExitError) << other;
  }
  // Over a rate limit (Temporal's ResourceExhaustedFailure, cause RPS_LIMIT): unavailable.
  temporal::api::errordetails::v1::ResourceExhaustedFailure rps;
  rps.set_cause(temporal::api::enums::v1::RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT);
  EXPECT_EQ(ExitCodeFor(WithDetail(absl::ResourceExhaustedError("namespace rate limit exceeded"), rps)),
            kExitUnavailable);
  temporal::api::errordetails::v1::ResourceExhaustedFailure concurrent;
  concurrent.set_cause(temporal::api::enums::v1::RESOURCE_EXHAUSTED_CAUSE_CONCURRENT_LIMIT);
  EXPECT_EQ(ExitCodeFor(WithDetail(absl::ResourceExhaustedError("too many updates"), concurrent)),
            kExitError);
  EXPECT_EQ(std::vector<int>({kExitOk, kExitError, kExitUsage, kExitNotFound, kExitUnavailable,
                              kExitConflict}),
            std::vector<int>({0, 1, 2, 3, 4, 5}));
}

TEST(GlobalOptionsTest, DefaultsWithoutEnvironment) {
  ScopedEnv env(kClean);
  GlobalOptions o = DefaultGlobalOptions();
  EXPECT_EQ(o.address, "127.0.0.1:7233");
  EXPECT_EQ(o.namespace_name, "default");
  EXPECT_EQ(o.output, "");
  EXPECT_EQ(o.timeout, "10s");
  EXPECT_EQ(o.color, "auto");
  EXPECT_EQ(o.api_key, "");
  EXPECT_FALSE(o.tls);
}

TEST(GlobalOptionsTest, TockEnvironmentBeforeTemporal) {
  {
    ScopedEnv env(Clean({{"TEMPORAL_ADDRESS", "t:1"}, {"TEMPORAL_NAMESPACE", "tns"}}));
    GlobalOptions o = DefaultGlobalOptions();
    EXPECT_EQ(o.address, "t:1");
    EXPECT_EQ(o.namespace_name, "tns");
  }
  {
    ScopedEnv env(Clean({{"TOCK_ADDRESS", "k:2"}, {"TEMPORAL_ADDRESS", "t:1"},
                         {"TOCK_NAMESPACE", "kns"}, {"TEMPORAL_NAMESPACE", "tns"},
                         {"TOCK_API_KEY", "secret"}}));
    GlobalOptions o = DefaultGlobalOptions();
    EXPECT_EQ(o.address, "k:2");
    EXPECT_EQ(o.namespace_name, "kns");
    EXPECT_EQ(o.api_key, "secret");
  }
  {
    // An empty variable counts as unset.
    ScopedEnv env(Clean({{"TOCK_ADDRESS", ""}, {"TEMPORAL_ADDRESS", "t:1"}}));
    EXPECT_EQ(DefaultGlobalOptions().address, "t:1");
  }
}

TEST(OutputFormatTest, TableOnATerminalJsonOtherwise) {
  EXPECT_EQ(*ResolveOutputFormat("", true), OutputFormat::kTable);
  EXPECT_EQ(*ResolveOutputFormat("", false), OutputFormat::kJson);
  EXPECT_EQ(*ResolveOutputFormat("jsonl", true), OutputFormat::kJsonl);
  EXPECT_EQ(*ResolveOutputFormat("card", false), OutputFormat::kCard);
  EXPECT_EQ(*ResolveOutputFormat("table", false), OutputFormat::kTable);
  EXPECT_EQ(ResolveOutputFormat("yaml", true).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ColorTest, AutoOnlyOnATerminalWithoutNoColor) {
  EXPECT_TRUE(ResolveColor("auto", true, false));
  EXPECT_FALSE(ResolveColor("auto", true, true)) << "NO_COLOR";
  EXPECT_FALSE(ResolveColor("auto", false, false)) << "a pipe";
  EXPECT_TRUE(ResolveColor("always", false, true));
  EXPECT_FALSE(ResolveColor("never", true, false));
}

TEST(ColorTest, ContextReadsNoColor) {
  std::istringstream in;
  std::ostringstream out, err;
  {
    ScopedEnv env(Clean({{"NO_COLOR", "1"}}));
    CommandContext ctx(in, out, err, true, true);
    EXPECT_TRUE(ctx.no_color_env);
  }
  {
    ScopedEnv env(Clean({{"NO_COLOR", ""}}));
    CommandContext ctx(in, out, err, true, true);
    EXPECT_FALSE(ctx.no_color_env) << "NO_COLOR counts only when non-empty";
  }
}

TEST(ConnectionOptionsTest, FromGlobalOptions) {
  GlobalOptions o;
  o.address = "h:7233";
  o.timeout = "1m30s";
  o.api_key = "k";
  auto c = ToConnectionOptions(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->address, "h:7233");
  EXPECT_EQ(c->timeout, absl::Seconds(90));
  EXPECT_EQ(c->api_key, "k");
  EXPECT_FALSE(c->tls.enabled);

  o.tls_ca_cert = "/ca.pem";
  o.tls_server_name = "frontend";
  c = ToConnectionOptions(o);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->tls.enabled) << "a TLS file implies --tls";
  EXPECT_EQ(c->tls.ca_cert_path, "/ca.pem");
  EXPECT_EQ(c->tls.server_name, "frontend");

  GlobalOptions key_only;
  key_only.tls_key = "/key.pem";
  EXPECT_TRUE(ToConnectionOptions(key_only)->tls.enabled);
}

TEST(ConnectionOptionsTest, BadTimeoutIsInvalidArgument) {
  for (const char* bad : {"", "soon", "0s", "-5s", "10"}) {
    GlobalOptions o;
    o.timeout = bad;
    auto c = ToConnectionOptions(o);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    if (!c.ok()) EXPECT_NE(c.status().message().find("--timeout"), std::string::npos);
  }
}

}  // namespace
}  // namespace tock::cli
