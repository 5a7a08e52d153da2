// The namespace handover gate (reference/replication.md §4.1, §4.6; Temporal's
// common/rpc/interceptor/namespace_handover.go): while a namespace's replication state is
// HANDOVER on this cluster (a graceful failover waits for the other cluster to acknowledge
// every replication task), a WorkflowService call on it waits until the state changes,
// then goes on to its handler (which answers NamespaceNotActive once the failover is done);
// if the state has not changed after kMaxWait, or by the call's deadline minus kTailRoom
// when it has one, it fails UNAVAILABLE `Namespace replication in REPLICATION_STATE_HANDOVER
// state.`. Temporal's allow-list (HandoverAllowedMethods: system, namespace, visibility list
// and replication calls) passes at once. Writes that do not come through the frontend
// (timers, follow-up work) are held back at commit instead (HistoryEngine::CheckActive).
//
// Sits inside DC redirection (install it first): a call forwarded from a standby is held here,
// on the namespace's active cluster.
//
// Thread safety: Install before the server starts; calls then run from any thread. A
// released call runs its handler on the gate's own timer thread (handover is rare and short).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lib/common/clock.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/history_engine.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::frontend {

// Temporal's ErrNamespaceHandover text.
inline constexpr const char* kNamespaceHandoverMessage =
    history::kNamespaceHandoverMessage;

// The WorkflowService methods (short names) that never wait (Temporal's
// allowedMethodsDuringHandover).
const std::vector<std::string>& HandoverAllowedMethods();

class HandoverGate {
 public:
  // Temporal's default namespace cache refresh interval, its wait without a deadline.
  static constexpr absl::Duration kMaxWait = absl::Seconds(2);
  static constexpr absl::Duration kTailRoom = absl::Milliseconds(100);
  // How often a waiting call looks at the namespace again.
  static constexpr absl::Duration kCheckInterval = absl::Milliseconds(50);

  HandoverGate(namespaces::NamespaceEngine& namespaces, Clock& clock);
  ~HandoverGate();  // Release()s

  // Wraps every namespaced WorkflowService method registered but the allowed ones.
  void Install(rpc::Dispatcher& dispatcher);
  // Answers every waiting call UNAVAILABLE now (server shutdown); later calls go straight
  // to their handlers.
  void Release();

 private:
  struct Waiter;
  void Check(uint64_t id);

  namespaces::NamespaceEngine& namespaces_;
  Clock& clock_;
  std::mutex mu_;
  bool released_ = false;                                 // guarded by mu_
  uint64_t next_id_ = 1;                                  // guarded by mu_
  std::map<uint64_t, std::shared_ptr<Waiter>> waiting_;  // guarded by mu_
  TimerThread timers_;                                    // last: stopped first
};

}  // namespace tock::server::frontend
