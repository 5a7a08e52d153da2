// The NamespaceStore contract (namespace_store.h) on every backend.
#include "server-core/persistence/namespace_store.h"

#include <gtest/gtest.h>

#include "lib/common/status.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

using temporal::api::enums::v1::NAMESPACE_STATE_DELETED;
using temporal::api::enums::v1::NAMESPACE_STATE_REGISTERED;

const absl::Time kT0 = absl::FromUnixMillis(1'763'800'000'000);

NamespaceRecord Record(const std::string& name, const std::string& id) {
  NamespaceRecord r;
  r.mutable_info()->set_name(name);
  r.mutable_info()->set_id(id);
  r.mutable_info()->set_state(NAMESPACE_STATE_REGISTERED);
  r.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(86400);
  return r;
}

class NamespaceStoreTest : public BackendTest {
 protected:
  void SetUp() override {
    persistence_ = Open();
    ASSERT_NE(persistence_, nullptr);
  }
  NamespaceStore& store() { return persistence_->namespaces(); }

  std::unique_ptr<Persistence> persistence_;
};

TEST_P(NamespaceStoreTest, CreateThenGetByNameAndId) {
  auto created = store().CreateNamespace(Record("orders", "id-1"), kT0 + absl::Microseconds(700));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->version, 1);
  EXPECT_EQ(created->valid_from, kT0);  // truncated to the millisecond
  EXPECT_EQ(created->operation, "register");
  EXPECT_FALSE(created->valid_to.has_value());

  auto by_name = store().GetNamespaceByName("orders");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->record.info().id(), "id-1");
  auto by_id = store().GetNamespaceById("id-1");
  ASSERT_TRUE(by_id.ok());
  EXPECT_EQ(by_id->record.info().name(), "orders");
  EXPECT_EQ(by_id->record.SerializeAsString(), Record("orders", "id-1").SerializeAsString());
}

TEST_P(NamespaceStoreTest, DuplicateNameOrIdIsAlreadyExists) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1"), kT0).ok());
  for (const auto& record : {Record("orders", "id-2"), Record("other", "id-1")}) {
    absl::Status s = store().CreateNamespace(record, kT0).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
    EXPECT_EQ(s.message(), "Namespace already exists.");
    EXPECT_TRUE(GetDetail<temporal::api::errordetails::v1::NamespaceAlreadyExistsFailure>(s));
  }
  EXPECT_EQ(store().GetNamespaceByName("other").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(NamespaceStoreTest, NotFoundMessage) {
  absl::Status s = store().GetNamespaceByName("nope").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "Namespace nope is not found.");
  EXPECT_EQ(store().GetNamespaceById("no-id").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store().GetNamespaceHistory("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(NamespaceStoreTest, AppendClosesThePreviousVersionAndKeepsItUnchanged) {
  NamespaceRecord v1 = Record("orders", "id-1");
  ASSERT_TRUE(store().CreateNamespace(v1, kT0).ok());
  NamespaceRecord v2 = v1;
  v2.mutable_info()->set_description("second");
  auto appended = store().AppendNamespaceVersion(v2, 1, "update", kT0 + absl::Seconds(10));
  ASSERT_TRUE(appended.ok()) << appended.status();
  EXPECT_EQ(appended->version, 2);
  EXPECT_EQ(appended->valid_from, kT0 + absl::Seconds(10));
  NamespaceRecord v3 = v2;
  v3.mutable_info()->set_description("third");
  ASSERT_TRUE(store().AppendNamespaceVersion(v3, 2, "update", kT0 + absl::Seconds(20)).ok());

  auto history = store().GetNamespaceHistory("orders");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ((*history)[0].version, 1);
  EXPECT_EQ((*history)[0].valid_to, (*history)[1].valid_from);
  EXPECT_EQ((*history)[1].valid_to, (*history)[2].valid_from);
  EXPECT_FALSE((*history)[2].valid_to.has_value());
  EXPECT_EQ((*history)[0].record.SerializeAsString(), v1.SerializeAsString());
  EXPECT_EQ((*history)[1].record.info().description(), "second");
  EXPECT_EQ(store().GetNamespaceByName("orders")->record.info().description(), "third");
}

TEST_P(NamespaceStoreTest, SameOrEarlierMillisecondGetsPlusOne) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1"), kT0).ok());
  auto same = store().AppendNamespaceVersion(Record("orders", "id-1"), 1, "update", kT0);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->valid_from, kT0 + absl::Milliseconds(1));
  auto back = store().AppendNamespaceVersion(Record("orders", "id-1"), 2, "update",
                                             kT0 - absl::Hours(1));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->valid_from, kT0 + absl::Milliseconds(2));
}

TEST_P(NamespaceStoreTest, StaleExpectedVersionWritesNothing) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1"), kT0).ok());
  ASSERT_TRUE(store().AppendNamespaceVersion(Record("orders", "id-1"), 1, "update", kT0 + absl::Seconds(1)).ok());
  NamespaceRecord stale = Record("orders", "id-1");
  stale.mutable_info()->set_description("lost race");
  absl::Status s = store().AppendNamespaceVersion(stale, 1, "update", kT0 + absl::Seconds(2)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(store().GetNamespaceHistory("orders")->size(), 2u);
  EXPECT_EQ(store().GetNamespaceByName("orders")->record.info().description(), "");

  NamespaceRecord renamed = Record("renamed", "id-1");
  EXPECT_EQ(store().AppendNamespaceVersion(renamed, 2, "update", kT0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(NamespaceStoreTest, AsOfReadsTheVersionValidThen) {
  NamespaceRecord v1 = Record("orders", "id-1");
  ASSERT_TRUE(store().CreateNamespace(v1, kT0).ok());
  NamespaceRecord v2 = v1;
  v2.mutable_info()->set_description("v2");
  ASSERT_TRUE(store().AppendNamespaceVersion(v2, 1, "update", kT0 + absl::Seconds(10)).ok());

  EXPECT_EQ(store().GetNamespaceAsOf("orders", kT0 - absl::Milliseconds(1)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store().GetNamespaceAsOf("orders", kT0)->version, 1);
  EXPECT_EQ(store().GetNamespaceAsOf("orders", kT0 + absl::Seconds(5))->version, 1);
  EXPECT_EQ(store().GetNamespaceAsOf("orders", kT0 + absl::Seconds(10))->version, 2);
  EXPECT_EQ(store().GetNamespaceAsOf("orders", kT0 + absl::Hours(100))->version, 2);
  EXPECT_EQ(store().GetNamespaceAsOf("nope", kT0).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(NamespaceStoreTest, ListPagesInNameOrderAndFiltersDeleted) {
  for (const char* name : {"e", "b", "d", "a", "c"}) {
    ASSERT_TRUE(store().CreateNamespace(Record(name, std::string("id-") + name), kT0).ok());
  }
  NamespaceRecord deleted = Record("c", "id-c");
  deleted.mutable_info()->set_state(NAMESPACE_STATE_DELETED);
  ASSERT_TRUE(store().AppendNamespaceVersion(deleted, 1, "delete", kT0).ok());

  auto collect = [&](bool include_deleted) {
    std::vector<std::string> names;
    std::string token;
    int pages = 0;
    do {
      auto page = store().ListNamespaces(2, token, include_deleted);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      EXPECT_LE(page->namespaces.size(), 2u);
      for (const auto& v : page->namespaces) names.push_back(v.record.info().name());
      token = page->next_page_token;
      ++pages;
    } while (!token.empty() && pages < 10);
    return names;
  };
  EXPECT_EQ(collect(false), (std::vector<std::string>{"a", "b", "d", "e"}));
  EXPECT_EQ(collect(true), (std::vector<std::string>{"a", "b", "c", "d", "e"}));

  auto all = store().ListNamespaces(0, "", true);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->namespaces.size(), 5u);
  EXPECT_TRUE(all->next_page_token.empty());
  EXPECT_EQ(store().ListNamespaces(2, "garbage", false).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(NamespaceStoreTest, SurvivesReopen) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1"), kT0).ok());
  ASSERT_TRUE(store().AppendNamespaceVersion(Record("orders", "id-1"), 1, "update", kT0).ok());
  persistence_.reset();
  persistence_ = Open();
  ASSERT_NE(persistence_, nullptr);
  auto history = store().GetNamespaceHistory("orders");
  if (Durable()) {
    ASSERT_TRUE(history.ok());
    EXPECT_EQ(history->size(), 2u);
  } else {
    EXPECT_EQ(history.status().code(), absl::StatusCode::kNotFound);
  }
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(NamespaceStoreTest);

}  // namespace
}  // namespace tock::persistence
