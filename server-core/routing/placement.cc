#include "server-core/routing/placement.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server-core/history/shard_controller.h"

namespace tock::server::routing {

bool RetryOnOwner(absl::StatusCode code, absl::string_view message, bool from_another_host) {
  return history::IsNotOwnedHere(code, message) ||
         (from_another_host && code == absl::StatusCode::kUnavailable);
}

absl::Status QueueNotOwnedHere(const std::string& task_queue) {
  return history::NotOwnedHere(absl::StrCat("task queue \"", task_queue.substr(0, 200), "\""));
}

void Placement::SetRing(std::shared_ptr<const membership::HashRing> ring) {
  std::lock_guard lock(mu_);
  ring_ = std::move(ring);
}

std::shared_ptr<const membership::HashRing> Placement::ring() const {
  std::lock_guard lock(mu_);
  return ring_;
}

std::optional<std::string> Placement::Elsewhere(const std::string& owner) const {
  if (owner.empty() || owner == self_) return std::nullopt;
  return owner;
}

std::optional<std::string> Placement::ShardOwner(int32_t shard_id) const {
  std::shared_ptr<const membership::HashRing> r = ring();
  if (r == nullptr) return std::nullopt;
  return Elsewhere(r->OwnerOfShard(shard_id));
}

std::optional<std::string> Placement::QueueOwner(const std::string& namespace_id,
                                                 const std::string& task_queue) const {
  std::shared_ptr<const membership::HashRing> r = ring();
  if (r == nullptr) return std::nullopt;
  return Elsewhere(r->Lookup(absl::StrCat(namespace_id, "/", task_queue)));
}

std::vector<std::string> Placement::Hosts() const {
  std::shared_ptr<const membership::HashRing> r = ring();
  if (r == nullptr) return {};
  std::vector<std::string> hosts = r->hosts();
  std::sort(hosts.begin(), hosts.end());
  return hosts;
}

}  // namespace tock::server::routing
