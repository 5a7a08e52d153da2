// The NexusEndpointStore contract (nexus_endpoint_store.h) on every backend: one endpoint per
// id and per name, compare-and-swap updates on the version (a stale version is ABORTED, a gone
// endpoint NOT_FOUND, a rename onto another's name ALREADY_EXISTS), lookups by name, keyset
// pages by id, and endpoints that outlive a reopen.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server-core/persistence/nexus_endpoint_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

NexusEndpoint Endpoint(const std::string& id, const std::string& name, int64_t version = 1) {
  NexusEndpoint e;
  e.set_id(id);
  e.set_version(version);
  e.mutable_spec()->set_name(name);
  e.mutable_spec()->mutable_target()->mutable_worker()->set_namespace_("ns-id");
  e.mutable_spec()->mutable_target()->mutable_worker()->set_task_queue("handlers");
  return e;
}

// Ids as the registry makes them (UUIDs), in id order.
const std::string kA = "00000000-0000-4000-8000-00000000000a";
const std::string kB = "00000000-0000-4000-8000-00000000000b";
const std::string kC = "00000000-0000-4000-8000-00000000000c";

class NexusEndpointStoreTest : public BackendTest {};

TEST_P(NexusEndpointStoreTest, OnePerIdAndNameWithCompareAndSwap) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  NexusEndpointStore& store = p->nexus_endpoints();
  ASSERT_TRUE(store.Create(Endpoint(kA, "payments")).ok());
  EXPECT_EQ(store.Create(Endpoint(kB, "payments")).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store.Create(Endpoint(kA, "other")).code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(store.Create(Endpoint(kB, "billing")).ok());

  auto got = store.GetByName("payments");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->id(), kA);
  EXPECT_EQ(got->spec().target().worker().task_queue(), "handlers");

  NexusEndpoint renamed = Endpoint(kA, "payments-v2", 2);
  ASSERT_TRUE(store.Update(renamed, 1).ok());
  EXPECT_EQ(store.Update(Endpoint(kA, "stale", 2), 1).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(store.Update(Endpoint(kA, "billing", 3), 2).code(), absl::StatusCode::kAlreadyExists)
      << "another endpoint has that name";
  EXPECT_EQ(store.Update(Endpoint(kC, "nope", 2), 1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.GetByName("payments").status().code(), absl::StatusCode::kNotFound)
      << "the old name is free after the rename";
  got = store.Get(kA);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->version(), 2);
  EXPECT_EQ(got->spec().name(), "payments-v2");

  ASSERT_TRUE(store.Delete(kA).ok());
  EXPECT_EQ(store.Delete(kA).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Get(kA).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store.Create(Endpoint(kC, "payments-v2")).ok()) << "a deleted name is free again";
}

TEST_P(NexusEndpointStoreTest, PagesById) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  NexusEndpointStore& store = p->nexus_endpoints();
  ASSERT_TRUE(store.Create(Endpoint(kC, "c")).ok());
  ASSERT_TRUE(store.Create(Endpoint(kA, "a")).ok());
  ASSERT_TRUE(store.Create(Endpoint(kB, "b")).ok());
  std::vector<std::string> ids;
  std::string after;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = store.List(after, 2);
    ASSERT_TRUE(page.ok()) << page.status();
    if (page->empty()) break;
    for (const NexusEndpoint& e : *page) ids.push_back(e.id());
    after = page->back().id();
  }
  EXPECT_EQ(ids, (std::vector<std::string>{kA, kB, kC}));
}

TEST_P(NexusEndpointStoreTest, EndpointsOutliveAReopen) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database does not outlive its connection";
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->nexus_endpoints().Create(Endpoint(kA, "kept")).ok());
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto got = p->nexus_endpoints().GetByName("kept");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->id(), kA);
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(NexusEndpointStoreTest);

}  // namespace
}  // namespace tock::persistence
