#include "server-core/membership/monitor.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server-core/worker/periodic_thread.h"

namespace tock::server::membership {

MembershipMonitor::MembershipMonitor(persistence::MembershipStore& store, MembershipConfig config,
                                     std::string host_id, std::string address,
                                     absl::Time session_start, Clock& clock, Logger& logger)
    : store_(store),
      config_(config),
      host_id_(std::move(host_id)),
      address_(std::move(address)),
      session_start_(session_start),
      clock_(clock),
      logger_(logger),
      ring_(std::make_shared<HashRing>(std::vector<std::string>{}, config.points_per_host)) {}

MembershipMonitor::~MembershipMonitor() { thread_.reset(); }

absl::Status MembershipMonitor::Start(Listener listener) {
  listener_ = std::move(listener);
  if (absl::Status s = store_.Heartbeat(host_id_, address_, session_start_); !s.ok()) return s;
  {
    std::lock_guard lock(mu_);
    last_own_heartbeat_ = clock_.Now();
  }
  if (absl::Status s = Tick(); !s.ok()) return s;
  // Tick never reports an error to the thread (it logs instead): a failing database must not
  // slow the heartbeats down, which is what PeriodicThread's backoff would do.
  thread_ = std::make_unique<worker::PeriodicThread>(
      config_.heartbeat, [this] { Tick().IgnoreError(); return absl::OkStatus(); },
      worker::PeriodicThread::Observers{"membership heartbeat", &logger_, {}});
  return absl::OkStatus();
}

void MembershipMonitor::Stop() {
  thread_.reset();
  if (absl::Status s = store_.Leave(host_id_); !s.ok()) {
    logger_.Warn("could not remove this host's membership row; the others take its shards "
                 "after the cutoff",
                 {{"error", s.ToString()}});
  }
}

absl::Status MembershipMonitor::Tick() {
  const absl::Time now = clock_.Now();
  absl::Status beat = store_.Heartbeat(host_id_, address_, session_start_);
  absl::StatusOr<std::vector<persistence::HostRecord>> rows =
      beat.ok() ? store_.ListHosts(config_.forget_after) : beat;

  std::unique_lock lock(mu_);
  if (beat.ok()) last_own_heartbeat_ = now;
  std::vector<std::string> alive;
  absl::Status result;
  if (now - last_own_heartbeat_ > config_.cutoff) {
    // Dead to the others: give everything up until a heartbeat gets through.
    result = absl::UnavailableError(absl::StrCat(
        "this host could not heartbeat for ", absl::FormatDuration(now - last_own_heartbeat_),
        " (cutoff ", absl::FormatDuration(config_.cutoff), "): ",
        (beat.ok() ? rows.status() : beat).message()));
  } else if (!rows.ok()) {
    // Keep the last view: an error is not evidence that anyone left.
    logger_.Warn("membership read failed; keeping the last view", {{"error", rows.status().ToString()}});
    return rows.status();
  } else {
    hosts_ = *rows;
    for (const persistence::HostRecord& h : hosts_) {
      if (h.heartbeat_age < config_.cutoff) alive.push_back(h.address);
    }
    // This host's own heartbeat just got through, whatever its measured age.
    if (std::find(alive.begin(), alive.end(), address_) == alive.end()) alive.push_back(address_);
  }
  if (!result.ok()) logger_.Warn("membership: this host counts itself out", {{"error", result.ToString()}});

  std::sort(alive.begin(), alive.end());
  alive.erase(std::unique(alive.begin(), alive.end()), alive.end());
  const bool changed = alive != ring_->hosts();
  if (!changed && now - last_handed_ < config_.refresh) return result;
  if (changed) {
    logger_.Info("membership changed",
                 {{"hosts", absl::StrJoin(alive, ",")}, {"count", absl::StrCat(alive.size())}});
    ring_ = std::make_shared<HashRing>(alive, config_.points_per_host);
  }
  last_handed_ = now;
  std::shared_ptr<const HashRing> ring = ring_;
  lock.unlock();
  if (listener_) listener_(ring);
  return result;
}

std::shared_ptr<const HashRing> MembershipMonitor::ring() const {
  std::lock_guard lock(mu_);
  return ring_;
}

void MembershipMonitor::HandAgainAtNextHeartbeat() {
  std::lock_guard lock(mu_);
  last_handed_ = absl::InfinitePast();
}

std::vector<persistence::HostRecord> MembershipMonitor::hosts() const {
  std::lock_guard lock(mu_);
  return hosts_;
}

}  // namespace tock::server::membership
