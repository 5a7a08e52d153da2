// Whether a namespace is active on this cluster, by id, for the history engine's timers and
// follow-up work (HistoryEngine::SetNamespaceActivity): a global namespace is active where
// its failover version says (SPEC §2.2); a local one always. Read from the namespace store
// and kept for kLifetime (by `clock`), so a failover is seen within that.
//
// Thread safety: safe from many threads.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "lib/common/clock.h"
#include "server-core/history/history_engine.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/persistence/namespace_store.h"

namespace tock::server::replication {

class NamespaceActivity {
 public:
  static constexpr absl::Duration kLifetime = absl::Milliseconds(500);

  NamespaceActivity(persistence::NamespaceStore& store, namespaces::NamespaceEngine& engine,
                    Clock& clock)
      : store_(store), engine_(engine), clock_(clock) {}

  // A local namespace, and one the store confirms is gone (NOT_FOUND), count as active: their
  // work runs as before replication existed, and fails on its own if the namespace is gone.
  // A store error fails closed: `unknown`, not active, and not kept, so the next call reads
  // again. Guessing "active" there would let a standby of a global namespace fire timers and
  // write events under the active cluster's version (split brain); not active, its work
  // waits (parked) and its writes are refused as UNAVAILABLE until the state is read.
  history::HistoryEngine::NamespaceActivity Of(const std::string& namespace_id);

 private:
  persistence::NamespaceStore& store_;
  namespaces::NamespaceEngine& engine_;
  Clock& clock_;
  std::mutex mu_;
  struct Cached {
    history::HistoryEngine::NamespaceActivity activity;
    absl::Time loaded;
  };
  std::map<std::string, Cached> cache_;  // guarded by mu_
};

}  // namespace tock::server::replication
