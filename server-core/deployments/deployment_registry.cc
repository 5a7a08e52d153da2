#include "server-core/deployments/deployment_registry.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "lib/common/ids.h"
#include "lib/common/time_format.h"

namespace tock::server::deployments {
namespace {

namespace enums = temporal::api::enums::v1;
namespace dep = temporal::api::deployment::v1;
using VersionRecord = tock::persistence::v1::DeploymentVersionRecord;

// Temporal's stand-in for "the unversioned workers" in v0.31 version strings.
constexpr char kUnversioned[] = "__unversioned__";
constexpr int kMaxAttempts = 32;  // compare-and-swap rounds before giving up
// A version's metadata (UpdateWorkerDeploymentVersionMetadata): Temporal states no limit;
// these keep a record (all versions in one row) well inside the database's row size.
constexpr size_t kMaxMetadataEntries = 100;
constexpr size_t kMaxMetadataBytes = 64 * 1024;

absl::Status DeploymentNotFound(const std::string& name) {
  return absl::NotFoundError(absl::StrFormat(
      "no Worker Deployment found with name '%s'; does your Worker Deployment have pollers?",
      name));
}
absl::Status VersionNotFound() { return absl::NotFoundError("Worker Deployment Version not found"); }
absl::Status TokenMismatch() { return absl::FailedPreconditionError("conflict token mismatch"); }

VersionRecord* FindVersion(persistence::WorkerDeploymentRecord& d, const std::string& build_id) {
  for (VersionRecord& v : *d.mutable_versions()) {
    if (v.info().deployment_version().build_id() == build_id) return &v;
  }
  return nullptr;
}

// v0.31's "deployment.build" (also v0.32's "deployment:build").
std::string VersionString(const std::string& deployment, const std::string& build_id) {
  return absl::StrCat(deployment, ".", build_id);
}

VersionRecord& AddVersion(persistence::WorkerDeploymentRecord& d, const std::string& build_id,
                          enums::WorkerDeploymentVersionStatus status, absl::Time now) {
  VersionRecord& v = *d.add_versions();
  auto& info = *v.mutable_info();
  info.set_status(status);
  info.mutable_deployment_version()->set_deployment_name(d.name());
  info.mutable_deployment_version()->set_build_id(build_id);
  info.set_deployment_name(d.name());
  info.set_version(VersionString(d.name(), build_id));
  *info.mutable_create_time() = ToProtoTime(now);
  return v;
}

bool PollsQueue(const VersionRecord& v, const std::string& queue, enums::TaskQueueType type) {
  return std::any_of(v.info().task_queue_infos().begin(), v.info().task_queue_infos().end(),
                     [&](const auto& tq) { return tq.name() == queue && tq.type() == type; });
}

enums::TaskQueueType TypeOf(persistence::TaskKind kind) {
  return kind == persistence::TaskKind::kActivity ? enums::TASK_QUEUE_TYPE_ACTIVITY
                                                  : enums::TASK_QUEUE_TYPE_WORKFLOW;
}

// The (deployment, build) a request names, by its deployment_version or v0.31 string.
absl::StatusOr<std::pair<std::string, std::string>> RequestedVersion(
    const dep::WorkerDeploymentVersion& version, const std::string& legacy) {
  if (!version.deployment_name().empty() || !version.build_id().empty()) {
    if (version.deployment_name().empty()) {
      return absl::InvalidArgumentError("deployment name cannot be empty");
    }
    if (version.build_id().empty()) return absl::InvalidArgumentError("build ID cannot be empty");
    return std::make_pair(version.deployment_name(), version.build_id());
  }
  if (legacy.empty()) return absl::InvalidArgumentError("deployment version cannot be empty");
  const size_t dot = legacy.find_first_of(".:");
  if (dot == std::string::npos || dot == 0 || dot + 1 == legacy.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid version string \"%s\", expected format is \"<deployment_name>.<build_id>\"",
        legacy.substr(0, 200)));
  }
  return std::make_pair(legacy.substr(0, dot), legacy.substr(dot + 1));
}

// The manager identity guards the routing and the deletion of versions (reference §3.3.7 4).
absl::Status CheckManager(const persistence::WorkerDeploymentRecord& d,
                          const std::string& identity) {
  if (d.manager_identity().empty() || d.manager_identity() == identity) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "ManagerIdentity '%s' is set and does not match user identity '%s'; to proceed, set your "
      "own identity as the ManagerIdentity, remove the ManagerIdentity, or wait for the other "
      "client to do so",
      d.manager_identity(), identity));
}

absl::Status CheckToken(const persistence::WorkerDeploymentRecord& d, const std::string& token) {
  return token.empty() || token == d.conflict_token() ? absl::OkStatus() : TokenMismatch();
}

// The queues `from` polls that `to` does not (a new current or ramping version would leave
// them unversioned).
bool MissesQueues(const VersionRecord& from, const VersionRecord& to) {
  return std::any_of(from.info().task_queue_infos().begin(), from.info().task_queue_infos().end(),
                     [&](const auto& tq) { return !PollsQueue(to, tq.name(), tq.type()); });
}

// A version leaves current or ramping: it drains while pinned runs use it.
void Deactivate(VersionRecord& v, absl::Time now) {
  auto& info = *v.mutable_info();
  info.set_status(enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING);
  *info.mutable_routing_changed_time() = ToProtoTime(now);
  *info.mutable_last_deactivation_time() = ToProtoTime(now);
  info.clear_current_since_time();
  info.clear_ramping_since_time();
  info.set_ramp_percentage(0);
  auto& drainage = *info.mutable_drainage_info();
  drainage.set_status(enums::VERSION_DRAINAGE_STATUS_DRAINING);
  *drainage.mutable_last_changed_time() = ToProtoTime(now);
  drainage.clear_last_checked_time();
}

void Activate(VersionRecord& v, enums::WorkerDeploymentVersionStatus status, absl::Time now) {
  auto& info = *v.mutable_info();
  info.set_status(status);
  *info.mutable_routing_changed_time() = ToProtoTime(now);
  if (!info.has_first_activation_time()) *info.mutable_first_activation_time() = ToProtoTime(now);
  info.clear_drainage_info();
}

dep::WorkerDeploymentInfo::WorkerDeploymentVersionSummary SummaryOf(const VersionRecord& v) {
  const auto& info = v.info();
  dep::WorkerDeploymentInfo::WorkerDeploymentVersionSummary s;
  s.set_version(info.version());
  s.set_status(info.status());
  *s.mutable_deployment_version() = info.deployment_version();
  *s.mutable_create_time() = info.create_time();
  if (info.has_drainage_info()) {
    s.set_drainage_status(info.drainage_info().status());
    *s.mutable_drainage_info() = info.drainage_info();
  }
  if (info.has_current_since_time()) *s.mutable_current_since_time() = info.current_since_time();
  if (info.has_ramping_since_time()) *s.mutable_ramping_since_time() = info.ramping_since_time();
  if (info.has_routing_changed_time()) *s.mutable_routing_update_time() = info.routing_changed_time();
  if (info.has_first_activation_time()) {
    *s.mutable_first_activation_time() = info.first_activation_time();
  }
  if (info.has_last_current_time()) *s.mutable_last_current_time() = info.last_current_time();
  if (info.has_last_deactivation_time()) {
    *s.mutable_last_deactivation_time() = info.last_deactivation_time();
  }
  return s;
}

// Sets the routing's current (or ramping) version fields, the v0.31 strings included.
void SetRoutingVersion(const std::string& deployment, const std::string& build_id,
                       dep::WorkerDeploymentVersion* version, std::string* legacy) {
  if (build_id.empty()) {
    version->Clear();
    *legacy = kUnversioned;
  } else {
    version->set_deployment_name(deployment);
    version->set_build_id(build_id);
    *legacy = VersionString(deployment, build_id);
  }
}

// The build a routing call names: `build_id`, or the build of v0.31's version string; ""
// for the unversioned workers.
absl::StatusOr<std::string> RequestedBuild(const std::string& build_id, const std::string& legacy) {
  if (!build_id.empty() || legacy.empty() || legacy == kUnversioned) return build_id;
  absl::StatusOr<std::pair<std::string, std::string>> v = RequestedVersion({}, legacy);
  if (!v.ok()) return v.status();
  return v->second;
}

// The version a routing call makes current or ramping: nullptr for the unversioned workers;
// a version no poller registered yet is NOT_FOUND, or created with `allow_no_pollers`.
absl::StatusOr<VersionRecord*> RoutedVersion(persistence::WorkerDeploymentRecord& d,
                                             const std::string& build, bool allow_no_pollers,
                                             absl::Time now) {
  if (build.empty()) return nullptr;
  if (VersionRecord* v = FindVersion(d, build)) return v;
  if (!allow_no_pollers) {
    return absl::NotFoundError(
        absl::StrFormat("build ID '%s' not found in Worker Deployment '%s'", build, d.name()));
  }
  return &AddVersion(d, build, enums::WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE, now);
}

}  // namespace

absl::Status CheckDeploymentName(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("deployment name cannot be empty");
  if (name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "size of DeploymentName larger than the maximum allowed (%d bytes)", kMaxNameBytes));
  }
  if (name.starts_with("__")) {
    return absl::InvalidArgumentError("deployment name cannot start with '__'");
  }
  if (name.find_first_of(":.") != std::string::npos) {
    return absl::InvalidArgumentError("deployment name cannot contain ':' or '.'");
  }
  return absl::OkStatus();
}

absl::Status CheckBuildId(const std::string& build_id) {
  if (build_id.empty()) return absl::InvalidArgumentError("build ID cannot be empty");
  if (build_id.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "size of BuildId larger than the maximum allowed (%d bytes)", kMaxNameBytes));
  }
  if (build_id.starts_with("__")) return absl::InvalidArgumentError("build ID cannot start with '__'");
  return absl::OkStatus();
}

DeploymentRegistry::DeploymentRegistry(persistence::DeploymentStore& store, Clock& clock,
                                       TimerThread& timers, Logger& logger,
                                       DeploymentLimits limits)
    : store_(store), clock_(clock), timers_(timers), logger_(logger), limits_(limits) {}

DeploymentRegistry::~DeploymentRegistry() { Stop(); }

void DeploymentRegistry::Start(CountPinned count_pinned) {
  count_pinned_ = std::move(count_pinned);
  if (absl::Status s = Refresh(); !s.ok()) {
    logger_.Warn(absl::StrCat("worker deployments could not be read; retried in a second: ",
                              s.message()));
  }
  std::lock_guard lock(mu_);
  ScheduleTick();
}

void DeploymentRegistry::Stop() {
  if (stopping_.exchange(true)) return;
  {
    std::lock_guard lock(mu_);
    if (tick_ != 0) timers_.Cancel(tick_);
  }
  pool_.Stop();
}

void DeploymentRegistry::ScheduleTick() {
  if (stopping_) return;
  tick_ = timers_.Schedule(clock_.Now() + kRefreshInterval, [this] {
    if (!pool_.Run([this] { Tick(); })) {
      std::lock_guard lock(mu_);
      ScheduleTick();
    }
  });
}

void DeploymentRegistry::Tick() {
  if (stopping_) return;
  if (absl::Status s = Refresh(); !s.ok()) {
    logger_.Warn(absl::StrCat("worker deployments could not be read: ", s.message()));
  }
  if (count_pinned_ != nullptr) CheckDrainage(count_pinned_);
  std::lock_guard lock(mu_);
  ScheduleTick();
}

std::shared_ptr<const DeploymentRouting> DeploymentRegistry::Routing(
    const std::string& namespace_id) const {
  static const auto* const kNone =
      new std::shared_ptr<const DeploymentRouting>(std::make_shared<DeploymentRouting>(
          std::vector<persistence::WorkerDeploymentRecord>{}));
  std::lock_guard lock(mu_);
  auto it = namespaces_.find(namespace_id);
  return it == namespaces_.end() || it->second.routing == nullptr ? *kNone : it->second.routing;
}

absl::Status DeploymentRegistry::Refresh() {
  std::map<std::string, std::map<std::string, persistence::StoredDeployment>> read;
  std::string after_ns, after_name;
  for (;;) {
    absl::StatusOr<std::vector<persistence::StoredDeployment>> page =
        store_.ListAll(after_ns, after_name, kMaxPageSize);
    if (!page.ok()) return page.status();
    for (persistence::StoredDeployment& d : *page) {
      after_ns = d.record.namespace_id();
      after_name = d.record.name();
      read[after_ns][after_name] = std::move(d);
    }
    if (page->size() < static_cast<size_t>(kMaxPageSize)) break;
  }
  std::vector<std::string> changed;
  {
    std::lock_guard lock(mu_);
    for (auto it = namespaces_.begin(); it != namespaces_.end();) {
      if (read.contains(it->first)) {
        ++it;
      } else {
        changed.push_back(it->first);
        it = namespaces_.erase(it);  // its last deployment was deleted
      }
    }
    for (auto& [ns, deployments] : read) {
      Namespace& n = namespaces_[ns];
      const bool same = n.deployments.size() == deployments.size() &&
                        std::equal(n.deployments.begin(), n.deployments.end(),
                                   deployments.begin(), [](const auto& a, const auto& b) {
                                     return a.first == b.first &&
                                            a.second.revision == b.second.revision;
                                   });
      if (same && n.routing != nullptr) continue;
      n.deployments = std::move(deployments);
      RebuildLocked(ns);
      changed.push_back(ns);
    }
  }
  Tell(changed);
  return absl::OkStatus();
}

void DeploymentRegistry::Tell(const std::vector<std::string>& changed) const {
  if (routing_changed_ == nullptr) return;
  for (const std::string& ns : changed) routing_changed_(ns);
}

void DeploymentRegistry::RebuildLocked(const std::string& namespace_id) {
  Namespace& n = namespaces_[namespace_id];
  std::vector<persistence::WorkerDeploymentRecord> records;
  records.reserve(n.deployments.size());
  for (const auto& [name, d] : n.deployments) records.push_back(d.record);
  n.routing = std::make_shared<DeploymentRouting>(records);
}

void DeploymentRegistry::Install(const std::string& namespace_id, const std::string& name,
                                 const Record* record, int64_t revision) {
  {
    std::lock_guard lock(mu_);
    Namespace& n = namespaces_[namespace_id];
    if (record == nullptr) {
      n.deployments.erase(name);
    } else {
      auto& held = n.deployments[name];
      if (held.revision > revision) return;  // a refresh brought a newer one already
      held.record = *record;
      held.revision = revision;
    }
    RebuildLocked(namespace_id);
  }
  Tell({namespace_id});
}

void DeploymentRegistry::AwaitPropagation() const {
  if (limits_.routing_propagation > absl::ZeroDuration()) absl::SleepFor(limits_.routing_propagation);
}

void DeploymentRegistry::Modified(Record& d, const std::string& identity) {
  d.set_last_modifier_identity(identity);
  d.set_conflict_token(NewToken(d.conflict_token()));
}

std::string DeploymentRegistry::NewToken(const std::string& previous) {
  uint64_t prev = 0;
  for (unsigned char c : previous.substr(0, 8)) prev = (prev << 8) | c;
  uint64_t nanos = static_cast<uint64_t>(absl::ToUnixNanos(clock_.Now()));
  if (nanos <= prev) nanos = prev + 1;
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, nanos >>= 8) out[i] = static_cast<char>(nanos & 0xff);
  return out;
}

absl::StatusOr<DeploymentRegistry::Record> DeploymentRegistry::Apply(
    const std::string& namespace_id, const std::string& name, bool create, const ChangeFn& fn,
    absl::Status missing) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    absl::StatusOr<persistence::StoredDeployment> stored = store_.Get(namespace_id, name);
    const bool created = !stored.ok() && stored.status().code() == absl::StatusCode::kNotFound;
    if (!stored.ok() && !(created && create)) {
      if (!created) return stored.status();
      return missing.ok() ? DeploymentNotFound(name) : missing;
    }
    Record record;
    int64_t revision = 0;
    if (created) {
      record.set_namespace_id(namespace_id);
      record.set_name(name);
      *record.mutable_create_time() = ToProtoTime(clock_.Now());
      record.set_conflict_token(NewToken(""));
    } else {
      record = std::move(stored->record);
      revision = stored->revision;
    }
    absl::StatusOr<Change> change = fn(record, created);
    if (!change.ok()) return change.status();
    if (*change == Change::kUnchanged) return record;
    const bool removing = *change == Change::kDelete && !created;
    absl::Status wrote = removing  ? store_.Delete(namespace_id, name, revision)
                         : created ? store_.Create(record)
                                   : store_.Update(record, revision);
    if (wrote.ok()) {
      Install(namespace_id, name, removing ? nullptr : &record, revision + 1);
      return record;
    }
    // Another host's change (or creation) came first: read it and decide again.
    if (wrote.code() != absl::StatusCode::kAborted &&
        wrote.code() != absl::StatusCode::kAlreadyExists &&
        wrote.code() != absl::StatusCode::kNotFound) {
      return wrote;
    }
  }
  return absl::UnavailableError(absl::StrCat(
      "the Worker Deployment '", name, "' is being changed by too many callers at once; retry"));
}

absl::Status DeploymentRegistry::RegisterPoller(const std::string& namespace_id,
                                                const std::string& task_queue,
                                                persistence::TaskKind kind,
                                                const std::string& deployment,
                                                const std::string& build_id) {
  const std::string version = VersionName(deployment, build_id);
  const absl::Time now = clock_.Now();
  {
    std::lock_guard lock(mu_);
    auto ns = namespaces_.find(namespace_id);
    auto recorded = poll_recorded_.find({namespace_id, version});
    if (ns != namespaces_.end() && ns->second.routing != nullptr &&
        ns->second.routing->Polls(version, task_queue, kind) && recorded != poll_recorded_.end() &&
        now - recorded->second < kPollRecordInterval) {
      return absl::OkStatus();  // registered, and its last poll recorded lately
    }
  }
  const enums::TaskQueueType type = TypeOf(kind);
  absl::StatusOr<Record> written = Apply(
      namespace_id, deployment, /*create=*/true,
      [&](Record& d, bool created) -> absl::StatusOr<Change> {
        if (created) {
          absl::StatusOr<std::vector<persistence::StoredDeployment>> existing =
              store_.List(namespace_id, "", limits_.max_deployments);
          if (!existing.ok()) return existing.status();
          if (static_cast<int>(existing->size()) >= limits_.max_deployments) {
            return absl::ResourceExhaustedError(absl::StrFormat(
                "exceeding maximum number of Worker Deployments in this namespace (limit = %d)",
                limits_.max_deployments));
          }
        }
        VersionRecord* v = FindVersion(d, build_id);
        if (v == nullptr) {
          if (d.versions_size() >= limits_.max_versions_in_deployment) {
            // Temporal first deletes the oldest version nothing uses any more.
            auto& versions = *d.mutable_versions();
            auto unused = std::find_if(versions.begin(), versions.end(), [&](const VersionRecord& o) {
              const auto status = o.info().status();
              return (status == enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED ||
                      status == enums::WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE) &&
                     now - FromProtoTime(o.last_poll_time()) >= limits_.poller_ttl;
            });
            if (unused == versions.end()) {
              return absl::ResourceExhaustedError(absl::StrFormat(
                  "exceeding maximum number of Deployment Versions in this deployment (limit = %d)",
                  limits_.max_versions_in_deployment));
            }
            versions.erase(unused);
          }
          v = &AddVersion(d, build_id, enums::WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE, now);
        } else if (v->info().status() == enums::WORKER_DEPLOYMENT_VERSION_STATUS_CREATED) {
          v->mutable_info()->set_status(enums::WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE);
        }
        if (!PollsQueue(*v, task_queue, type)) {
          if (v->info().task_queue_infos_size() >= limits_.max_task_queues_in_version) {
            return absl::ResourceExhaustedError(absl::StrFormat(
                "cannot add task queue %s since maximum number of task queues (%d) have been "
                "registered in deployment",
                task_queue, limits_.max_task_queues_in_version));
          }
          std::set<std::string> queues;
          for (const VersionRecord& o : d.versions()) {
            for (const auto& tq : o.info().task_queue_infos()) queues.insert(tq.name());
          }
          if (!queues.contains(task_queue) &&
              static_cast<int>(queues.size()) >= limits_.max_task_queues_in_deployment) {
            return absl::ResourceExhaustedError(absl::StrFormat(
                "cannot add task queue %s since maximum number of task queues (%d) have been "
                "registered in deployment",
                task_queue, limits_.max_task_queues_in_deployment));
          }
          // The versions of every deployment polling this queue (this one's are in `d`).
          int on_queue = 1;
          {
            std::lock_guard lock(mu_);
            auto ns = namespaces_.find(namespace_id);
            if (ns != namespaces_.end()) {
              for (const auto& [name, other] : ns->second.deployments) {
                if (name == deployment) continue;
                for (const VersionRecord& o : other.record.versions()) {
                  on_queue += PollsQueue(o, task_queue, type) ? 1 : 0;
                }
              }
            }
          }
          for (const VersionRecord& o : d.versions()) on_queue += PollsQueue(o, task_queue, type);
          if (on_queue > limits_.max_versions_in_task_queue) {
            return absl::ResourceExhaustedError(absl::StrFormat(
                "exceeding maximum number of Deployment Versions in this task queue (limit = %d)",
                limits_.max_versions_in_task_queue));
          }
          auto* tq = v->mutable_info()->add_task_queue_infos();
          tq->set_name(task_queue);
          tq->set_type(type);
        }
        *v->mutable_last_poll_time() = ToProtoTime(now);
        return Change::kWrite;
      });
  if (!written.ok()) return written.status();
  std::lock_guard lock(mu_);
  poll_recorded_[{namespace_id, version}] = now;
  return absl::OkStatus();
}

absl::StatusOr<wf::DescribeWorkerDeploymentResponse> DeploymentRegistry::Describe(
    const std::string& namespace_id, const wf::DescribeWorkerDeploymentRequest& req) {
  if (req.deployment_name().empty()) {
    return absl::InvalidArgumentError("deployment name cannot be empty");
  }
  absl::StatusOr<persistence::StoredDeployment> stored =
      store_.Get(namespace_id, req.deployment_name());
  if (!stored.ok()) {
    return stored.status().code() == absl::StatusCode::kNotFound
               ? DeploymentNotFound(req.deployment_name())
               : stored.status();
  }
  const Record& d = stored->record;
  wf::DescribeWorkerDeploymentResponse out;
  out.set_conflict_token(d.conflict_token());
  auto& info = *out.mutable_worker_deployment_info();
  info.set_name(d.name());
  *info.mutable_create_time() = d.create_time();
  *info.mutable_routing_config() = d.routing_config();
  info.set_last_modifier_identity(d.last_modifier_identity());
  info.set_manager_identity(d.manager_identity());
  info.set_routing_config_update_state(enums::ROUTING_CONFIG_UPDATE_STATE_COMPLETED);
  std::vector<const VersionRecord*> versions;
  for (const VersionRecord& v : d.versions()) versions.push_back(&v);
  // Newest first, as Temporal sorts them.
  std::stable_sort(versions.begin(), versions.end(), [](const auto* a, const auto* b) {
    return FromProtoTime(a->info().create_time()) > FromProtoTime(b->info().create_time());
  });
  for (const VersionRecord* v : versions) *info.add_version_summaries() = SummaryOf(*v);
  return out;
}

absl::StatusOr<wf::ListWorkerDeploymentsResponse> DeploymentRegistry::List(
    const std::string& namespace_id, const wf::ListWorkerDeploymentsRequest& req) {
  const int32_t size =
      req.page_size() <= 0 || req.page_size() > kMaxPageSize ? kMaxPageSize : req.page_size();
  absl::StatusOr<std::vector<persistence::StoredDeployment>> page =
      store_.List(namespace_id, req.next_page_token(), size + 1);
  if (!page.ok()) return page.status();
  wf::ListWorkerDeploymentsResponse out;
  for (int i = 0; i < static_cast<int>(page->size()) && i < size; ++i) {
    const Record& d = (*page)[i].record;
    auto& s = *out.add_worker_deployments();
    s.set_name(d.name());
    *s.mutable_create_time() = d.create_time();
    *s.mutable_routing_config() = d.routing_config();
    const VersionRecord* latest = nullptr;
    for (const VersionRecord& v : d.versions()) {
      if (latest == nullptr ||
          FromProtoTime(v.info().create_time()) >= FromProtoTime(latest->info().create_time())) {
        latest = &v;
      }
      if (v.info().status() == enums::WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT) {
        *s.mutable_current_version_summary() = SummaryOf(v);
      } else if (v.info().status() == enums::WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING) {
        *s.mutable_ramping_version_summary() = SummaryOf(v);
      }
    }
    if (latest != nullptr) *s.mutable_latest_version_summary() = SummaryOf(*latest);
  }
  if (static_cast<int>(page->size()) > size) {
    out.set_next_page_token((*page)[size - 1].record.name());
  }
  return out;
}

absl::StatusOr<wf::DescribeWorkerDeploymentVersionResponse> DeploymentRegistry::DescribeVersion(
    const std::string& namespace_id, const wf::DescribeWorkerDeploymentVersionRequest& req) {
  absl::StatusOr<std::pair<std::string, std::string>> version =
      RequestedVersion(req.deployment_version(), req.version());
  if (!version.ok()) return version.status();
  absl::StatusOr<persistence::StoredDeployment> stored = store_.Get(namespace_id, version->first);
  if (!stored.ok()) {
    return stored.status().code() == absl::StatusCode::kNotFound ? VersionNotFound()
                                                                  : stored.status();
  }
  const VersionRecord* v = FindVersion(stored->record, version->second);
  if (v == nullptr) return VersionNotFound();
  wf::DescribeWorkerDeploymentVersionResponse out;
  *out.mutable_worker_deployment_version_info() = v->info();
  for (const auto& tq : v->info().task_queue_infos()) {
    auto& q = *out.add_version_task_queues();
    q.set_name(tq.name());
    q.set_type(tq.type());
  }
  return out;
}

absl::StatusOr<wf::SetWorkerDeploymentCurrentVersionResponse> DeploymentRegistry::SetCurrent(
    const std::string& namespace_id, const wf::SetWorkerDeploymentCurrentVersionRequest& req) {
  if (req.deployment_name().empty()) {
    return absl::InvalidArgumentError("deployment name cannot be empty");
  }
  absl::StatusOr<std::string> requested = RequestedBuild(req.build_id(), req.version());
  if (!requested.ok()) return requested.status();
  const std::string build = *std::move(requested);
  wf::SetWorkerDeploymentCurrentVersionResponse out;
  bool changed = false;  // written: not a no-op
  absl::StatusOr<Record> written = Apply(
      namespace_id, req.deployment_name(), /*create=*/req.allow_no_pollers(),
      [&](Record& d, bool) -> absl::StatusOr<Change> {
        const absl::Time now = clock_.Now();
        auto* rc = d.mutable_routing_config();
        const std::string previous = rc->current_deployment_version().build_id();
        out.set_previous_version(previous.empty() ? kUnversioned
                                                  : VersionString(d.name(), previous));
        if (!previous.empty()) *out.mutable_previous_deployment_version() = rc->current_deployment_version();
        if (previous == build && !rc->current_version().empty() &&
            d.last_modifier_identity() == req.identity()) {
          return Change::kUnchanged;  // no-op: answered with the token as it is
        }
        if (absl::Status s = CheckToken(d, req.conflict_token()); !s.ok()) return s;
        absl::StatusOr<VersionRecord*> routed = RoutedVersion(d, build, req.allow_no_pollers(), now);
        if (!routed.ok()) return routed.status();
        VersionRecord* target = *routed;
        if (absl::Status s = CheckManager(d, req.identity()); !s.ok()) return s;
        VersionRecord* old = previous.empty() ? nullptr : FindVersion(d, previous);
        if (target != nullptr && old != nullptr && target != old &&
            !req.ignore_missing_task_queues() && MissesQueues(*old, *target)) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "proposed current version '%s' is missing active task queues from the current "
              "version; these would become unversioned if it is set as the current version",
              VersionName(d.name(), build)));
        }
        if (old != nullptr && old != target) Deactivate(*old, now);
        if (target != nullptr) {
          if (target->info().status() == enums::WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING) {
            rc->clear_ramping_deployment_version();
            rc->clear_ramping_version();
            rc->set_ramping_version_percentage(0);
            *rc->mutable_ramping_version_changed_time() = ToProtoTime(now);
            *rc->mutable_ramping_version_percentage_changed_time() = ToProtoTime(now);
            target->mutable_info()->clear_ramping_since_time();
            target->mutable_info()->set_ramp_percentage(0);
          }
          Activate(*target, enums::WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT, now);
          *target->mutable_info()->mutable_current_since_time() = ToProtoTime(now);
          *target->mutable_info()->mutable_last_current_time() = ToProtoTime(now);
          target->mutable_info()->set_last_modifier_identity(req.identity());
        }
        SetRoutingVersion(d.name(), build, rc->mutable_current_deployment_version(),
                          rc->mutable_current_version());
        *rc->mutable_current_version_changed_time() = ToProtoTime(now);
        rc->set_revision_number(rc->revision_number() + 1);
        Modified(d, req.identity());
        changed = true;
        return Change::kWrite;
      });
  if (!written.ok()) return written.status();
  if (changed) AwaitPropagation();
  out.set_conflict_token(written->conflict_token());
  return out;
}

absl::StatusOr<wf::SetWorkerDeploymentRampingVersionResponse> DeploymentRegistry::SetRamping(
    const std::string& namespace_id, const wf::SetWorkerDeploymentRampingVersionRequest& req) {
  if (req.deployment_name().empty()) {
    return absl::InvalidArgumentError("deployment name cannot be empty");
  }
  if (!(req.percentage() >= 0 && req.percentage() <= 100)) {
    return absl::InvalidArgumentError("Percentage must be between 0 and 100 (inclusive)");
  }
  absl::StatusOr<std::string> requested = RequestedBuild(req.build_id(), req.version());
  if (!requested.ok()) return requested.status();
  const std::string build = *std::move(requested);
  // An empty build id with 0 % unsets the ramp; with more, ramps to the unversioned workers.
  const bool unset = build.empty() && req.percentage() == 0;
  wf::SetWorkerDeploymentRampingVersionResponse out;
  bool changed = false;  // written: not a no-op
  absl::StatusOr<Record> written = Apply(
      namespace_id, req.deployment_name(), /*create=*/req.allow_no_pollers(),
      [&](Record& d, bool) -> absl::StatusOr<Change> {
        const absl::Time now = clock_.Now();
        auto* rc = d.mutable_routing_config();
        const std::string previous = rc->ramping_deployment_version().build_id();
        const bool was_ramping = !rc->ramping_version().empty();
        out.set_previous_version(!was_ramping ? ""
                                 : previous.empty() ? kUnversioned
                                                    : VersionString(d.name(), previous));
        if (!previous.empty()) *out.mutable_previous_deployment_version() = rc->ramping_deployment_version();
        out.set_previous_percentage(rc->ramping_version_percentage());
        const bool same = unset ? !was_ramping
                                : was_ramping && previous == build &&
                                      rc->ramping_version_percentage() == req.percentage();
        if (same && d.last_modifier_identity() == req.identity()) return Change::kUnchanged;
        if (absl::Status s = CheckToken(d, req.conflict_token()); !s.ok()) return s;
        const std::string current = rc->current_deployment_version().build_id();
        if (!unset && build == current && (!build.empty() || !rc->current_version().empty())) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "requested ramping version %s is already current",
              build.empty() ? std::string(kUnversioned) : VersionName(d.name(), build)));
        }
        absl::StatusOr<VersionRecord*> routed = RoutedVersion(d, build, req.allow_no_pollers(), now);
        if (!routed.ok()) return routed.status();
        VersionRecord* target = *routed;
        if (absl::Status s = CheckManager(d, req.identity()); !s.ok()) return s;
        VersionRecord* cur = current.empty() ? nullptr : FindVersion(d, current);
        if (target != nullptr && cur != nullptr && !req.ignore_missing_task_queues() &&
            MissesQueues(*cur, *target)) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "proposed ramping version '%s' is missing active task queues from the current "
              "version; these would become unversioned if it is set as the ramping version",
              VersionName(d.name(), build)));
        }
        VersionRecord* old = previous.empty() ? nullptr : FindVersion(d, previous);
        if (old != nullptr && old != target) Deactivate(*old, now);
        if (unset) {
          rc->clear_ramping_deployment_version();
          rc->clear_ramping_version();
          rc->set_ramping_version_percentage(0);
        } else {
          if (target != nullptr) {
            if (target->info().status() != enums::WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING) {
              *target->mutable_info()->mutable_ramping_since_time() = ToProtoTime(now);
            }
            Activate(*target, enums::WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING, now);
            target->mutable_info()->set_ramp_percentage(req.percentage());
            target->mutable_info()->set_last_modifier_identity(req.identity());
          }
          if (previous != build || !was_ramping) {
            *rc->mutable_ramping_version_changed_time() = ToProtoTime(now);
          }
          SetRoutingVersion(d.name(), build, rc->mutable_ramping_deployment_version(),
                            rc->mutable_ramping_version());
          rc->set_ramping_version_percentage(req.percentage());
        }
        *rc->mutable_ramping_version_percentage_changed_time() = ToProtoTime(now);
        rc->set_revision_number(rc->revision_number() + 1);
        Modified(d, req.identity());
        changed = true;
        return Change::kWrite;
      });
  if (!written.ok()) return written.status();
  if (changed) AwaitPropagation();
  out.set_conflict_token(written->conflict_token());
  return out;
}

absl::Status DeploymentRegistry::DeleteVersion(
    const std::string& namespace_id, const wf::DeleteWorkerDeploymentVersionRequest& req) {
  absl::StatusOr<std::pair<std::string, std::string>> version =
      RequestedVersion(req.deployment_version(), req.version());
  if (!version.ok()) return version.status();
  const auto& [name, build] = *version;
  absl::StatusOr<Record> written = Apply(
      namespace_id, name, /*create=*/false, [&](Record& d, bool) -> absl::StatusOr<Change> {
        auto& versions = *d.mutable_versions();
        auto v = std::find_if(versions.begin(), versions.end(), [&](const VersionRecord& o) {
          return o.info().deployment_version().build_id() == build;
        });
        if (v == versions.end()) return VersionNotFound();
        const std::string shown = VersionName(name, build);
        const auto status = v->info().status();
        if (status == enums::WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT ||
            status == enums::WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "version '%s' cannot be deleted since it is current or ramping", shown));
        }
        if (absl::Status s = CheckManager(d, req.identity()); !s.ok()) return s;
        if (status == enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING && !req.skip_drainage()) {
          return absl::FailedPreconditionError(
              absl::StrFormat("version '%s' cannot be deleted since it is draining", shown));
        }
        if (v->has_last_poll_time() &&
            clock_.Now() - FromProtoTime(v->last_poll_time()) < limits_.poller_ttl) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "version '%s' cannot be deleted since it has active pollers", shown));
        }
        versions.erase(v);
        d.set_last_modifier_identity(req.identity());
        return Change::kWrite;
      },
      VersionNotFound());
  if (!written.ok()) return written.status();
  std::lock_guard lock(mu_);
  poll_recorded_.erase({namespace_id, VersionName(name, build)});
  return absl::OkStatus();
}

absl::Status DeploymentRegistry::DeleteDeployment(const std::string& namespace_id,
                                                  const wf::DeleteWorkerDeploymentRequest& req) {
  if (req.deployment_name().empty()) {
    return absl::InvalidArgumentError("deployment name cannot be empty");
  }
  return Apply(namespace_id, req.deployment_name(), /*create=*/false,
               [](Record& d, bool) -> absl::StatusOr<Change> {
                 if (d.versions_size() > 0) {
                   return absl::FailedPreconditionError("deployment has versions, can't be deleted");
                 }
                 return Change::kDelete;
               })
      .status();
}

absl::StatusOr<wf::UpdateWorkerDeploymentVersionMetadataResponse>
DeploymentRegistry::UpdateMetadata(const std::string& namespace_id,
                                   const wf::UpdateWorkerDeploymentVersionMetadataRequest& req) {
  absl::StatusOr<std::pair<std::string, std::string>> version =
      RequestedVersion(req.deployment_version(), req.version());
  if (!version.ok()) return version.status();
  if (req.upsert_entries().empty() && req.remove_entries().empty()) {
    return absl::InvalidArgumentError(
        "At least one of remove_entries or upsert_entries must be provided");
  }
  wf::UpdateWorkerDeploymentVersionMetadataResponse out;
  absl::StatusOr<Record> written = Apply(
      namespace_id, version->first, /*create=*/false,
      [&](Record& d, bool) -> absl::StatusOr<Change> {
        VersionRecord* v = FindVersion(d, version->second);
        if (v == nullptr) return VersionNotFound();
        auto& entries = *v->mutable_info()->mutable_metadata()->mutable_entries();
        for (const auto& [key, value] : req.upsert_entries()) entries[key] = value;
        for (const std::string& key : req.remove_entries()) entries.erase(key);
        if (entries.size() > kMaxMetadataEntries ||
            v->info().metadata().ByteSizeLong() > kMaxMetadataBytes) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "a version's metadata holds at most %d entries and %d bytes", kMaxMetadataEntries,
              kMaxMetadataBytes));
        }
        v->mutable_info()->set_last_modifier_identity(req.identity());
        *out.mutable_metadata() = v->info().metadata();
        return Change::kWrite;
      },
      VersionNotFound());
  if (!written.ok()) return written.status();
  return out;
}

absl::StatusOr<wf::SetWorkerDeploymentManagerResponse> DeploymentRegistry::SetManager(
    const std::string& namespace_id, const wf::SetWorkerDeploymentManagerRequest& req) {
  if (req.deployment_name().empty()) {
    return absl::InvalidArgumentError("deployment name cannot be empty");
  }
  if (req.identity().empty()) return absl::InvalidArgumentError("Identity is required");
  const std::string manager = req.self() ? req.identity() : req.manager_identity();
  wf::SetWorkerDeploymentManagerResponse out;
  absl::StatusOr<Record> written = Apply(
      namespace_id, req.deployment_name(), /*create=*/false,
      [&](Record& d, bool) -> absl::StatusOr<Change> {
        out.set_previous_manager_identity(d.manager_identity());
        if (d.manager_identity() == manager && d.last_modifier_identity() == req.identity()) {
          return Change::kUnchanged;
        }
        if (absl::Status s = CheckToken(d, req.conflict_token()); !s.ok()) return s;
        if (absl::Status s = CheckManager(d, req.identity()); !s.ok()) return s;
        d.set_manager_identity(manager);
        Modified(d, req.identity());
        return Change::kWrite;
      });
  if (!written.ok()) return written.status();
  out.set_conflict_token(written->conflict_token());
  return out;
}

absl::StatusOr<wf::CreateWorkerDeploymentResponse> DeploymentRegistry::CreateDeployment(
    const std::string& namespace_id, const wf::CreateWorkerDeploymentRequest& req) {
  if (absl::Status s = CheckDeploymentName(req.deployment_name()); !s.ok()) return s;
  const std::string request_id = req.request_id().empty() ? NewUuid() : req.request_id();
  absl::StatusOr<Record> written = Apply(
      namespace_id, req.deployment_name(), /*create=*/true,
      [&](Record& d, bool created) -> absl::StatusOr<Change> {
        if (!created) {
          if (d.create_request_id() == request_id) return Change::kUnchanged;  // a retry
          return absl::AlreadyExistsError(absl::StrFormat(
              "Worker Deployment with name \"%s\" already exists", d.name()));
        }
        absl::StatusOr<std::vector<persistence::StoredDeployment>> existing =
            store_.List(namespace_id, "", limits_.max_deployments);
        if (!existing.ok()) return existing.status();
        if (static_cast<int>(existing->size()) >= limits_.max_deployments) {
          return absl::ResourceExhaustedError(absl::StrFormat(
              "exceeding maximum number of Worker Deployments in this namespace (limit = %d)",
              limits_.max_deployments));
        }
        d.set_create_request_id(request_id);
        d.set_last_modifier_identity(req.identity());
        return Change::kWrite;
      });
  if (!written.ok()) return written.status();
  wf::CreateWorkerDeploymentResponse out;
  out.set_conflict_token(written->conflict_token());
  return out;
}

absl::StatusOr<wf::CreateWorkerDeploymentVersionResponse> DeploymentRegistry::CreateVersion(
    const std::string& namespace_id, const wf::CreateWorkerDeploymentVersionRequest& req) {
  const auto& version = req.deployment_version();
  if (version.deployment_name().empty()) {
    return absl::InvalidArgumentError("deployment name cannot be empty");
  }
  if (version.build_id().empty()) return absl::InvalidArgumentError("build ID cannot be empty");
  if (absl::Status s = CheckDeploymentName(version.deployment_name()); !s.ok()) return s;
  if (absl::Status s = CheckBuildId(version.build_id()); !s.ok()) return s;
  if (req.has_compute_config()) {
    return absl::UnimplementedError("server-scaled deployments are not supported");
  }
  const std::string request_id = req.request_id().empty() ? NewUuid() : req.request_id();
  absl::StatusOr<Record> written = Apply(
      namespace_id, version.deployment_name(), /*create=*/false,
      [&](Record& d, bool) -> absl::StatusOr<Change> {
        if (const VersionRecord* v = FindVersion(d, version.build_id())) {
          if (v->create_request_id() == request_id) return Change::kUnchanged;
          return absl::AlreadyExistsError(absl::StrFormat(
              "Worker Deployment Version \"%s\" already exists",
              VersionName(d.name(), version.build_id())));
        }
        if (d.versions_size() >= limits_.max_versions_in_deployment) {
          return absl::ResourceExhaustedError(absl::StrFormat(
              "exceeding maximum number of Deployment Versions in this deployment (limit = %d)",
              limits_.max_versions_in_deployment));
        }
        VersionRecord& v = AddVersion(d, version.build_id(),
                                      enums::WORKER_DEPLOYMENT_VERSION_STATUS_CREATED, clock_.Now());
        v.set_create_request_id(request_id);
        v.mutable_info()->set_last_modifier_identity(req.identity());
        return Change::kWrite;
      });
  if (!written.ok()) return written.status();
  return wf::CreateWorkerDeploymentVersionResponse();
}

void DeploymentRegistry::CheckDrainage(const CountPinned& count) {
  const absl::Time now = clock_.Now();
  // The versions due for a check, read from memory; each is then counted and written.
  std::vector<std::tuple<std::string, std::string, std::string>> due;  // ns, deployment, build
  {
    std::lock_guard lock(mu_);
    for (const auto& [ns, n] : namespaces_) {
      for (const auto& [name, d] : n.deployments) {
        for (const VersionRecord& v : d.record.versions()) {
          const auto& drainage = v.info().drainage_info();
          if (v.info().status() != enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING) continue;
          const absl::Time changed = FromProtoTime(drainage.last_changed_time());
          const absl::Time checked = drainage.has_last_checked_time()
                                         ? FromProtoTime(drainage.last_checked_time())
                                         : absl::InfinitePast();
          if (now - changed >= limits_.drainage_grace && now - checked >= limits_.drainage_refresh) {
            due.emplace_back(ns, name, v.info().deployment_version().build_id());
          }
        }
      }
    }
  }
  for (const auto& [ns, name, build] : due) {
    if (stopping_) return;
    absl::StatusOr<int64_t> open = count(ns, VersionName(name, build));
    if (!open.ok()) {
      logger_.Warn(absl::StrCat("the drainage of ", VersionName(name, build),
                                " could not be checked: ", open.status().message()));
      continue;
    }
    absl::StatusOr<Record> written =
        Apply(ns, name, /*create=*/false, [&](Record& d, bool) -> absl::StatusOr<Change> {
          VersionRecord* v = FindVersion(d, build);
          if (v == nullptr || v->info().status() != enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING) {
            return Change::kUnchanged;  // routed again, or deleted, meanwhile
          }
          const absl::Time at = clock_.Now();
          auto& drainage = *v->mutable_info()->mutable_drainage_info();
          *drainage.mutable_last_checked_time() = ToProtoTime(at);
          if (*open == 0) {
            v->mutable_info()->set_status(enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED);
            drainage.set_status(enums::VERSION_DRAINAGE_STATUS_DRAINED);
            *drainage.mutable_last_changed_time() = ToProtoTime(at);
          }
          return Change::kWrite;
        });
    if (!written.ok()) {
      logger_.Warn(absl::StrCat("the drainage of ", VersionName(name, build),
                                " could not be recorded: ", written.status().message()));
    }
  }
}

}  // namespace tock::server::deployments
