// The DeploymentStore contract (deployment_store.h) on every backend: create once per name and
// namespace, compare-and-swap updates and deletes on the revision (a stale revision is
// ABORTED, a gone deployment NOT_FOUND), keyset pages per namespace and across namespaces,
// and records that outlive a reopen.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/deployment_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

WorkerDeploymentRecord Record(const std::string& ns, const std::string& name) {
  WorkerDeploymentRecord r;
  r.set_namespace_id(ns);
  r.set_name(name);
  r.set_last_modifier_identity("created");
  r.add_versions()->mutable_info()->mutable_deployment_version()->set_build_id("b1");
  return r;
}

class DeploymentStoreTest : public BackendTest {};

TEST_P(DeploymentStoreTest, CreateOnceAndCompareAndSwap) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  DeploymentStore& store = p->deployments();
  ASSERT_TRUE(store.Create(Record("ns", "billing")).ok());
  ASSERT_TRUE(store.Create(Record("other", "billing")).ok()) << "names are per namespace";
  EXPECT_EQ(store.Create(Record("ns", "billing")).code(), absl::StatusCode::kAlreadyExists);

  auto got = store.Get("ns", "billing");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->revision, 1);
  ASSERT_EQ(got->record.versions_size(), 1);
  EXPECT_EQ(got->record.versions(0).info().deployment_version().build_id(), "b1");

  WorkerDeploymentRecord changed = got->record;
  changed.set_last_modifier_identity("changed");
  ASSERT_TRUE(store.Update(changed, 1).ok());
  WorkerDeploymentRecord stale = got->record;
  stale.set_last_modifier_identity("stale");
  EXPECT_EQ(store.Update(stale, 1).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(store.Delete("ns", "billing", 1).code(), absl::StatusCode::kAborted)
      << "a delete that read an older revision loses too";

  got = store.Get("ns", "billing");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->revision, 2);
  EXPECT_EQ(got->record.last_modifier_identity(), "changed");
  auto other = store.Get("other", "billing");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->record.last_modifier_identity(), "created") << "the other namespace's is apart";

  EXPECT_EQ(store.Get("ns", "nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Update(Record("ns", "nope"), 1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Delete("ns", "nope", 1).code(), absl::StatusCode::kNotFound);

  ASSERT_TRUE(store.Delete("ns", "billing", 2).ok());
  EXPECT_EQ(store.Get("ns", "billing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Update(changed, 2).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store.Create(Record("ns", "billing")).ok()) << "a name is free again after a delete";
}

TEST_P(DeploymentStoreTest, PagesByNamePerNamespaceAndAcrossNamespaces) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  DeploymentStore& store = p->deployments();
  for (const char* name : {"b", "a", "c"}) ASSERT_TRUE(store.Create(Record("ns1", name)).ok());
  for (const char* name : {"a", "z"}) ASSERT_TRUE(store.Create(Record("ns2", name)).ok());

  auto page = store.List("ns1", "", 2);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].record.name(), "a");
  EXPECT_EQ((*page)[1].record.name(), "b");
  page = store.List("ns1", "b", 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 1u);
  EXPECT_EQ((*page)[0].record.name(), "c");

  std::vector<std::string> all;
  std::string after_ns, after_name;
  for (int pages = 0; pages < 10; ++pages) {
    auto some = store.ListAll(after_ns, after_name, 2);
    ASSERT_TRUE(some.ok()) << some.status();
    if (some->empty()) break;
    for (const StoredDeployment& d : *some) {
      all.push_back(absl::StrCat(d.record.namespace_id(), "/", d.record.name()));
    }
    after_ns = some->back().record.namespace_id();
    after_name = some->back().record.name();
  }
  EXPECT_EQ(all, (std::vector<std::string>{"ns1/a", "ns1/b", "ns1/c", "ns2/a", "ns2/z"}));
}

TEST_P(DeploymentStoreTest, RecordsOutliveAReopen) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database does not outlive its connection";
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    WorkerDeploymentRecord r = Record("ns", "kept");
    r.mutable_routing_config()->mutable_current_deployment_version()->set_build_id("b1");
    ASSERT_TRUE(p->deployments().Create(r).ok());
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto got = p->deployments().Get("ns", "kept");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->record.routing_config().current_deployment_version().build_id(), "b1");
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(DeploymentStoreTest);

}  // namespace
}  // namespace tock::persistence
