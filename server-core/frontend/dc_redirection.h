// DC redirection (reference/replication.md §4.2, Temporal's
// common/rpc/interceptor/redirection.go): a WorkflowService call on a GLOBAL namespace that
// is active in another cluster is sent, unchanged (same method, the request bytes as
// received), to the frontend of the namespace's active cluster, and its answer passed
// back. Which calls, by the server's `dc_redirection_policy`:
//   noop                      nothing is forwarded (the default);
//   selected-apis-forwarding  the calls that start or change a run, and QueryWorkflow
//                             (SelectedForwardingMethods) — never the worker's Respond*,
//                             so activity completions are not forwarded;
//   all-apis-forwarding       every namespaced WorkflowService call (polls included) but
//                             the namespace, cluster and system calls, which stay local.
// A forwarded call carries the metadata `xdc-redirection-api: true` and
// `xdc-redirection-source-cell: <this cluster>`; a call carrying `xdc-redirection: false`
// is never forwarded, and neither is one that was forwarded already (so two clusters that
// disagree for a moment about the active one cannot bounce it). When the active cluster
// answers NamespaceNotActive naming yet another cluster, the call is sent there once more
// (run here when that is this cluster). Local namespaces, unknown namespaces and calls on
// an active namespace run here; a standby namespace whose active cluster is not connected
// runs here too (and a write then answers NamespaceNotActive).
//
// Sits in front of every other wrapper of a method (multi-host routing: call_router.h): the
// active cluster's own frontend routes the call to its owner host.
//
// Thread safety: Install before the server starts; calls then run from any thread.
#pragma once

#include <grpcpp/channel.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/rpc/dialer.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::frontend {

enum class DcRedirectionPolicy { kNoop, kSelectedApis, kAllApis };

// "noop" (or ""), "selected-apis-forwarding", "all-apis-forwarding"; INVALID_ARGUMENT
// naming them otherwise.
absl::StatusOr<DcRedirectionPolicy> ParseDcRedirectionPolicy(const std::string& text);

// The WorkflowService methods (short names) forwarded under selected-apis-forwarding.
const std::vector<std::string>& SelectedForwardingMethods();
// The namespaced WorkflowService methods never forwarded, whatever the policy.
const std::vector<std::string>& LocalOnlyMethods();

// Metadata names.
inline constexpr char kRedirectionApiHeader[] = "xdc-redirection-api";
inline constexpr char kRedirectionSourceHeader[] = "xdc-redirection-source-cell";
inline constexpr char kRedirectionAllowedHeader[] = "xdc-redirection";

class DcRedirection {
 public:
  // Calls to other clusters go through `dialer` (TLS with tls.internode), which must
  // outlive this.
  DcRedirection(DcRedirectionPolicy policy, namespaces::NamespaceEngine& namespaces,
                const rpc::Dialer& dialer)
      : policy_(policy), namespaces_(namespaces), dialer_(dialer) {}

  // Wraps the registered methods the policy forwards (nothing for kNoop). Call after every
  // handler and every other wrapper is installed.
  void Install(rpc::Dispatcher& dispatcher);
  // The full method names wrapped by Install.
  const std::vector<std::string>& wrapped() const { return wrapped_; }

 private:
  class Call;
  std::shared_ptr<grpc::Channel> ChannelTo(const std::string& address);
  // The address of the cluster's frontend; empty when it is not known here.
  std::string AddressOf(const std::string& cluster) const;

  const DcRedirectionPolicy policy_;
  namespaces::NamespaceEngine& namespaces_;
  const rpc::Dialer& dialer_;
  std::vector<std::string> wrapped_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;  // by address
};

}  // namespace tock::server::frontend
