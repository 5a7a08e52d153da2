// Which host owns what, among the hosts sharing one database: history shards and task
// queues both live on the ring of the alive hosts (membership), so every host computes the
// same owner from the same membership rows. With one host (an embedded database) there is
// no ring and everything is here.
//
// A task queue's key on the ring is "<namespace id>/<queue name>": its workflow and activity
// tasks live on one host, which also answers DescribeTaskQueue about both.
//
// Thread safety: safe from any thread; SetRing swaps an immutable ring.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server-core/membership/hash_ring.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::routing {

// The routing rule shared by every caller that sends work to an owner: an answer "not
// owned" (history/shard_controller.h), or any UNAVAILABLE from another host (dead or
// restarting), means look the owner up again and retry, backing off from kFirstBackoff,
// doubling up to kMaxBackoff.
inline constexpr absl::Duration kFirstBackoff = absl::Milliseconds(25);
inline constexpr absl::Duration kMaxBackoff = absl::Seconds(1);
bool RetryOnOwner(absl::StatusCode code, absl::string_view message, bool from_another_host);

// The queue that places a task on a host (persistence/execution_store.h).
using persistence::PlacingQueue;

// A task queue's "not owned by this host" answer (its name cut to 200 bytes).
absl::Status QueueNotOwnedHere(const std::string& task_queue);

class Placement {
 public:
  // `self`: this host's identity on the ring (its advertised address).
  Placement(std::string self, int32_t shard_count)
      : self_(std::move(self)), shard_count_(shard_count) {}

  // The ring of the alive hosts changed (the membership listener).
  void SetRing(std::shared_ptr<const membership::HashRing> ring);

  // The address of the host owning the shard / the queue, or nullopt when it is this host,
  // there is no ring yet, or the ring is empty (this host counted itself out: its own
  // engine then answers "not owned", and callers retry).
  std::optional<std::string> ShardOwner(int32_t shard_id) const;
  std::optional<std::string> QueueOwner(const std::string& namespace_id,
                                        const std::string& task_queue) const;

  // The alive hosts on the ring (this one included), in address order; empty before the
  // first ring.
  std::vector<std::string> Hosts() const;

  const std::string& self() const { return self_; }
  int32_t shard_count() const { return shard_count_; }

 private:
  std::optional<std::string> Elsewhere(const std::string& owner) const;
  std::shared_ptr<const membership::HashRing> ring() const;

  const std::string self_;
  const int32_t shard_count_;
  mutable std::mutex mu_;
  std::shared_ptr<const membership::HashRing> ring_;
};

}  // namespace tock::server::routing
