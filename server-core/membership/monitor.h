// This host's place among the hosts sharing one database: it heartbeats its membership row
// on a period, reads everyone's, and keeps the ring of the alive ones (a heartbeat newer than
// the cutoff). Whoever needs to act on a change (the shard controller acquires and releases
// shards; routing looks owners up) gets the new ring from the listener.
//
// Safety rules, from the ways Temporal's membership failed (reference/scaleout.md §2.6):
// - A failed read of the table changes nothing: the last view stays. A host never concludes
//   "I am alone" from an error and takes every shard.
// - A host whose own heartbeats have failed for longer than the cutoff is, to the others,
//   dead: they take its shards. It then sees an empty ring and gives up its shards too,
//   until a heartbeat succeeds again. (Fencing by range id keeps the data safe anyway; this
//   keeps the hosts from fighting over shards.)
// - The ring is also handed over on a slower period when nothing changed, and at the next
//   heartbeat when the listener asks (HandAgainAtNextHeartbeat), so a shard whose acquisition
//   failed is tried again.
//
// Thread safety: ring(), hosts() and the accessors may be called from any thread; the
// listener is called on the monitor's thread (or in Start), one call at a time.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "server-core/membership/hash_ring.h"
#include "server-core/persistence/membership_store.h"

namespace tock::server::worker {
class PeriodicThread;
}

namespace tock::server::membership {

struct MembershipConfig {
  absl::Duration heartbeat = absl::Seconds(10);  // how often this host writes its row
  absl::Duration cutoff = absl::Seconds(20);     // a row older than this is a dead host
  absl::Duration refresh = absl::Minutes(1);     // the ring is handed over at least this often
  absl::Duration forget_after = absl::Hours(48); // dead rows are deleted after this
  int points_per_host = HashRing::kDefaultPointsPerHost;
};

class MembershipMonitor {
 public:
  using Listener = std::function<void(std::shared_ptr<const HashRing>)>;

  // `address`: where peers reach this host (its identity on the ring); `host_id`: unique per
  // process start.
  MembershipMonitor(persistence::MembershipStore& store, MembershipConfig config,
                    std::string host_id, std::string address, absl::Time session_start,
                    Clock& clock, Logger& logger);
  ~MembershipMonitor();

  // Heartbeats and reads the table once (an error here fails the start: the database is not
  // reachable), hands the first ring to `listener`, then goes on in the background.
  absl::Status Start(Listener listener);
  // Stops the background work and removes this host's row, so that the others take its
  // shards at once instead of after the cutoff.
  void Stop();

  // One heartbeat and read, as the background thread does (tests drive it directly).
  absl::Status Tick();

  std::shared_ptr<const HashRing> ring() const;
  // The ring is handed to the listener again at the next heartbeat, changed or not: for a
  // listener that could not act on it (a shard it failed to take while the database was
  // down) and should not wait for the refresh period to try again.
  void HandAgainAtNextHeartbeat();
  std::vector<persistence::HostRecord> hosts() const;  // as last read
  const MembershipConfig& config() const { return config_; }

 private:
  persistence::MembershipStore& store_;
  const MembershipConfig config_;
  const std::string host_id_;
  const std::string address_;
  const absl::Time session_start_;
  Clock& clock_;
  Logger& logger_;
  Listener listener_;

  mutable std::mutex mu_;
  std::shared_ptr<const HashRing> ring_;
  std::vector<persistence::HostRecord> hosts_;
  absl::Time last_own_heartbeat_ = absl::InfinitePast();
  absl::Time last_handed_ = absl::InfinitePast();
  std::unique_ptr<worker::PeriodicThread> thread_;
};

}  // namespace tock::server::membership
