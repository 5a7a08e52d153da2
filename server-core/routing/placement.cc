#include "server-core/routing/placement.h"

#include "absl/strings/str_cat.h"

namespace tock::server::routing {

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

}  // namespace tock::server::routing
