// The NamespaceStore contract (namespace_store.h, SPEC §1.3) on every backend. Time is
// always passed in explicitly (the API takes `now`), so nothing here sleeps.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/common/status.h"
#include "server-core/persistence/namespace_store.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

using temporal::api::enums::v1::NAMESPACE_STATE_DELETED;
using temporal::api::enums::v1::NAMESPACE_STATE_DEPRECATED;
using temporal::api::enums::v1::NAMESPACE_STATE_REGISTERED;

const absl::Time kT0 = absl::FromUnixMillis(1'763'800'000'000);

NamespaceRecord Record(const std::string& name, const std::string& id,
                       const std::string& description = "") {
  NamespaceRecord r;
  r.mutable_info()->set_name(name);
  r.mutable_info()->set_id(id);
  r.mutable_info()->set_state(NAMESPACE_STATE_REGISTERED);
  r.mutable_info()->set_description(description);
  (*r.mutable_info()->mutable_data())["team"] = "payments";
  r.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(86400);
  r.set_failover_version(7);
  r.set_config_version(1);
  return r;
}

// Everything a stored version holds, in one comparable string.
std::string Dump(const NamespaceVersion& v) {
  return absl::StrCat(v.version, "|", absl::ToUnixMillis(v.valid_from), "|",
                      v.valid_to ? absl::StrCat(absl::ToUnixMillis(*v.valid_to)) : "-", "|",
                      v.operation, "|", v.record.SerializeAsString());
}

class NamespaceStoreTest : public BackendTest {
 protected:
  void SetUp() override {
    persistence_ = Open();
    ASSERT_NE(persistence_, nullptr);
  }
  NamespaceStore& store() { return persistence_->namespaces(); }

  std::vector<NamespaceVersion> History(const std::string& name) {
    absl::StatusOr<std::vector<NamespaceVersion>> h = store().GetNamespaceHistory(name);
    EXPECT_TRUE(h.ok()) << h.status();
    return h.ok() ? *h : std::vector<NamespaceVersion>{};
  }

  // The names of every page of a listing, one vector per page.
  std::vector<std::vector<std::string>> Pages(int32_t page_size, bool include_deleted) {
    std::vector<std::vector<std::string>> pages;
    std::string token;
    do {
      absl::StatusOr<NamespacePage> page =
          store().ListNamespaces(page_size, token, include_deleted);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      pages.emplace_back();
      for (const auto& v : page->namespaces) pages.back().push_back(v.record.info().name());
      token = page->next_page_token;
    } while (!token.empty() && pages.size() < 20);
    return pages;
  }

  std::unique_ptr<Persistence> persistence_;
};

TEST_P(NamespaceStoreTest, CreateThenGetByNameAndId) {
  const NamespaceRecord record = Record("orders", "id-1", "first");
  auto created = store().CreateNamespace(record, kT0 + absl::Microseconds(700));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->version, 1);
  EXPECT_EQ(created->valid_from, kT0);  // truncated to the millisecond
  EXPECT_FALSE(created->valid_to.has_value());
  EXPECT_EQ(created->operation, "register");

  auto by_name = store().GetNamespaceByName("orders");
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  auto by_id = store().GetNamespaceById("id-1");
  ASSERT_TRUE(by_id.ok()) << by_id.status();
  EXPECT_EQ(Dump(*by_name), Dump(*created));
  EXPECT_EQ(Dump(*by_id), Dump(*created));
  EXPECT_EQ(by_id->record.SerializeAsString(), record.SerializeAsString());
}

TEST_P(NamespaceStoreTest, CreateNeedsAnIdAndAName) {
  EXPECT_EQ(store().CreateNamespace(Record("", "id-1"), kT0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store().CreateNamespace(Record("orders", ""), kT0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(store().ListNamespaces(0, "", true)->namespaces.empty());
}

TEST_P(NamespaceStoreTest, DuplicateNameOrIdIsAlreadyExistsEvenWhenDeleted) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1"), kT0).ok());
  ASSERT_TRUE(store().CreateNamespace(Record("gone", "id-gone"), kT0).ok());
  NamespaceRecord deleted = Record("gone", "id-gone");
  deleted.mutable_info()->set_state(NAMESPACE_STATE_DELETED);
  ASSERT_TRUE(store().AppendNamespaceVersion(deleted, 1, "delete", kT0).ok());

  for (const NamespaceRecord& record : {Record("orders", "id-2"), Record("other", "id-1"),
                                        Record("gone", "id-3"), Record("other", "id-gone")}) {
    absl::Status s = store().CreateNamespace(record, kT0 + absl::Seconds(1)).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << record.info().ShortDebugString();
    EXPECT_EQ(s.message(), "Namespace already exists.");
    EXPECT_TRUE(GetDetail<temporal::api::errordetails::v1::NamespaceAlreadyExistsFailure>(s));
  }
  EXPECT_EQ(store().GetNamespaceByName("other").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(History("orders").size(), 1u);
  EXPECT_EQ(History("gone").size(), 2u);
}

TEST_P(NamespaceStoreTest, NotFoundMessages) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1"), kT0).ok());
  absl::Status s = store().GetNamespaceByName("nope").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "Namespace nope is not found.");
  EXPECT_TRUE(GetDetail<temporal::api::errordetails::v1::NamespaceNotFoundFailure>(s));

  s = store().GetNamespaceById("no-id").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "Namespace no-id is not found.");

  s = store().GetNamespaceHistory("nope").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "Namespace nope is not found.");

  // A name that never existed is not found at any time, with the same message.
  s = store().GetNamespaceAsOf("nope", kT0 + absl::Hours(1)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "Namespace nope is not found.");

  // Lookups are exact: no prefix or case folding.
  EXPECT_EQ(store().GetNamespaceByName("Orders").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store().GetNamespaceByName("order").status().code(), absl::StatusCode::kNotFound);

  s = store().AppendNamespaceVersion(Record("nope", "no-id"), 1, "update", kT0).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store().GetNamespaceByName("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(NamespaceStoreTest, AppendNumbersVersionsAndNeverRewritesOldOnes) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1", "one"), kT0).ok());
  std::vector<NamespaceVersion> after_v1 = History("orders");

  auto v2 = store().AppendNamespaceVersion(Record("orders", "id-1", "two"), 1, "update",
                                           kT0 + absl::Seconds(10));
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->version, 2);
  EXPECT_EQ(v2->valid_from, kT0 + absl::Seconds(10));
  EXPECT_FALSE(v2->valid_to.has_value());
  EXPECT_EQ(v2->operation, "update");
  std::vector<NamespaceVersion> after_v2 = History("orders");

  NamespaceRecord failed_over = Record("orders", "id-1", "two");
  failed_over.set_failover_version(17);
  auto v3 = store().AppendNamespaceVersion(failed_over, 2, "failover",
                                           kT0 + absl::Seconds(20) + absl::Microseconds(999));
  ASSERT_TRUE(v3.ok()) << v3.status();
  EXPECT_EQ(v3->version, 3);
  EXPECT_EQ(v3->valid_from, kT0 + absl::Seconds(20));  // truncated to the millisecond

  std::vector<NamespaceVersion> history = History("orders");
  ASSERT_EQ(history.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(history[i].version, i + 1);
  // Closing a version sets its valid_to to the next valid_from and changes nothing else.
  ASSERT_EQ(after_v1.size(), 1u);
  ASSERT_EQ(after_v2.size(), 2u);
  NamespaceVersion v1_closed = after_v1[0];
  v1_closed.valid_to = v2->valid_from;
  EXPECT_EQ(Dump(after_v2[0]), Dump(v1_closed));
  EXPECT_EQ(Dump(history[0]), Dump(v1_closed));
  NamespaceVersion v2_closed = after_v2[1];
  v2_closed.valid_to = v3->valid_from;
  EXPECT_EQ(Dump(history[1]), Dump(v2_closed));
  EXPECT_EQ(Dump(history[2]), Dump(*v3));
  EXPECT_EQ(history[0].record.SerializeAsString(),
            Record("orders", "id-1", "one").SerializeAsString());
  EXPECT_EQ(history[2].record.SerializeAsString(), failed_over.SerializeAsString());

  EXPECT_EQ(Dump(*store().GetNamespaceByName("orders")), Dump(*v3));
  EXPECT_EQ(Dump(*store().GetNamespaceById("id-1")), Dump(*v3));
}

TEST_P(NamespaceStoreTest, ARepeatedOrEarlierMillisecondGetsPlusOne) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1"), kT0).ok());
  auto same = store().AppendNamespaceVersion(Record("orders", "id-1"), 1, "update", kT0);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->valid_from, kT0 + absl::Milliseconds(1));
  // The clock stepped back an hour.
  auto back =
      store().AppendNamespaceVersion(Record("orders", "id-1"), 2, "update", kT0 - absl::Hours(1));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->valid_from, kT0 + absl::Milliseconds(2));
  // Later, but within the same millisecond as the previous version.
  auto sub_ms = store().AppendNamespaceVersion(Record("orders", "id-1"), 3, "update",
                                               kT0 + absl::Microseconds(2500));
  ASSERT_TRUE(sub_ms.ok()) << sub_ms.status();
  EXPECT_EQ(sub_ms->valid_from, kT0 + absl::Milliseconds(3));
  // The clock is ahead again: its time, truncated.
  auto ahead = store().AppendNamespaceVersion(Record("orders", "id-1"), 4, "update",
                                              kT0 + absl::Microseconds(9900));
  ASSERT_TRUE(ahead.ok()) << ahead.status();
  EXPECT_EQ(ahead->valid_from, kT0 + absl::Milliseconds(9));

  std::vector<NamespaceVersion> history = History("orders");
  ASSERT_EQ(history.size(), 5u);
  for (size_t i = 0; i + 1 < history.size(); ++i) {
    EXPECT_LT(history[i].valid_from, history[i + 1].valid_from);
    EXPECT_EQ(history[i].valid_to, history[i + 1].valid_from);
  }
}

TEST_P(NamespaceStoreTest, StaleExpectedVersionIsAbortedAndWritesNothing) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1"), kT0).ok());
  ASSERT_TRUE(store()
                  .AppendNamespaceVersion(Record("orders", "id-1", "winner"), 1, "update",
                                          kT0 + absl::Seconds(1))
                  .ok());
  std::vector<NamespaceVersion> before = History("orders");

  for (int64_t expected : {int64_t{1}, int64_t{0}, int64_t{3}, int64_t{5}}) {
    absl::Status s = store()
                         .AppendNamespaceVersion(Record("orders", "id-1", "lost race"), expected,
                                                 "update", kT0 + absl::Seconds(2))
                         .status();
    EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << expected << ": " << s;
  }
  // The id and the name of a namespace never change.
  EXPECT_EQ(
      store().AppendNamespaceVersion(Record("renamed", "id-1"), 2, "update", kT0).status().code(),
      absl::StatusCode::kInvalidArgument);

  std::vector<NamespaceVersion> after = History("orders");
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) EXPECT_EQ(Dump(after[i]), Dump(before[i]));
  EXPECT_EQ(store().GetNamespaceByName("renamed").status().code(), absl::StatusCode::kNotFound);

  // The version that was current is still the one to build on.
  auto next = store().AppendNamespaceVersion(Record("orders", "id-1", "retried"), 2, "update",
                                             kT0 + absl::Seconds(3));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->version, 3);
}

TEST_P(NamespaceStoreTest, AsOfReadsTheVersionValidThen) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1", "v1"), kT0).ok());
  const absl::Time t2 = kT0 + absl::Seconds(10);
  const absl::Time t3 = t2 + absl::Milliseconds(1);
  ASSERT_TRUE(store().AppendNamespaceVersion(Record("orders", "id-1", "v2"), 1, "update", t2).ok());
  ASSERT_TRUE(store().AppendNamespaceVersion(Record("orders", "id-1", "v3"), 2, "update", t3).ok());

  auto description_at = [&](absl::Time as_of) -> std::string {
    absl::StatusOr<NamespaceVersion> v = store().GetNamespaceAsOf("orders", as_of);
    if (!v.ok()) return std::string(absl::StatusCodeToString(v.status().code()));
    return v->record.info().description();
  };
  // Before it was created.
  EXPECT_EQ(description_at(kT0 - absl::Milliseconds(1)), "NOT_FOUND");
  EXPECT_EQ(description_at(kT0 - absl::Nanoseconds(1)), "NOT_FOUND");
  EXPECT_EQ(description_at(absl::UnixEpoch()), "NOT_FOUND");
  // valid_from is inclusive and valid_to exclusive: a boundary belongs to the newer version.
  EXPECT_EQ(description_at(kT0), "v1");
  EXPECT_EQ(description_at(kT0 + absl::Seconds(5)), "v1");
  EXPECT_EQ(description_at(t2 - absl::Milliseconds(1)), "v1");
  EXPECT_EQ(description_at(t2 - absl::Nanoseconds(1)), "v1");
  EXPECT_EQ(description_at(t2), "v2");
  EXPECT_EQ(description_at(t2 + absl::Microseconds(999)), "v2");
  EXPECT_EQ(description_at(t3), "v3");
  EXPECT_EQ(description_at(kT0 + absl::Hours(24 * 365)), "v3");

  absl::StatusOr<NamespaceVersion> v2 = store().GetNamespaceAsOf("orders", t2);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->version, 2);
  EXPECT_EQ(v2->valid_from, t2);
  EXPECT_EQ(v2->valid_to, t3);
  EXPECT_EQ(v2->operation, "update");
}

TEST_P(NamespaceStoreTest, ListPagesInNameOrderWithOnlyCurrentVersions) {
  for (const char* name : {"e", "b", "d", "a", "c"}) {
    ASSERT_TRUE(store().CreateNamespace(Record(name, std::string("id-") + name), kT0).ok());
  }
  // Several versions of one namespace still list once, as the current version.
  ASSERT_TRUE(store().AppendNamespaceVersion(Record("b", "id-b", "new"), 1, "update", kT0).ok());
  NamespaceRecord deprecated = Record("d", "id-d");
  deprecated.mutable_info()->set_state(NAMESPACE_STATE_DEPRECATED);
  ASSERT_TRUE(store().AppendNamespaceVersion(deprecated, 1, "deprecate", kT0).ok());

  using Names = std::vector<std::string>;
  EXPECT_EQ(Pages(2, false), (std::vector<Names>{{"a", "b"}, {"c", "d"}, {"e"}}));
  EXPECT_EQ(Pages(5, false), (std::vector<Names>{{"a", "b", "c", "d", "e"}}));
  EXPECT_EQ(Pages(1, false).size(), 5u);

  absl::StatusOr<NamespacePage> all = store().ListNamespaces(0, "", false);  // 0: up to 100
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->namespaces.size(), 5u);
  EXPECT_TRUE(all->next_page_token.empty());
  EXPECT_EQ(all->namespaces[1].record.info().description(), "new");
  EXPECT_EQ(all->namespaces[1].version, 2);
  for (const NamespaceVersion& v : all->namespaces) EXPECT_FALSE(v.valid_to.has_value());
}

TEST_P(NamespaceStoreTest, ListFiltersDeletedUnlessAsked) {
  for (const char* name : {"e", "b", "d", "a", "c"}) {
    ASSERT_TRUE(store().CreateNamespace(Record(name, std::string("id-") + name), kT0).ok());
  }
  NamespaceRecord deleted = Record("c", "id-c");
  deleted.mutable_info()->set_state(NAMESPACE_STATE_DELETED);
  ASSERT_TRUE(store().AppendNamespaceVersion(deleted, 1, "delete", kT0).ok());

  using Names = std::vector<std::string>;
  // Four left: the second page is full and is the last (no empty third page).
  EXPECT_EQ(Pages(2, false), (std::vector<Names>{{"a", "b"}, {"d", "e"}}));
  EXPECT_EQ(Pages(2, true), (std::vector<Names>{{"a", "b"}, {"c", "d"}, {"e"}}));

  // A deleted namespace is still there to read, and lists again when undeleted.
  EXPECT_EQ(store().GetNamespaceByName("c")->record.info().state(), NAMESPACE_STATE_DELETED);
  ASSERT_TRUE(store().AppendNamespaceVersion(Record("c", "id-c"), 2, "update", kT0).ok());
  EXPECT_EQ(Pages(10, false), (std::vector<Names>{{"a", "b", "c", "d", "e"}}));
}

TEST_P(NamespaceStoreTest, ListTokenIsAPositionAndBadTokensAreRefused) {
  for (const char* name : {"b", "d", "f"}) {
    ASSERT_TRUE(store().CreateNamespace(Record(name, std::string("id-") + name), kT0).ok());
  }
  absl::StatusOr<NamespacePage> first = store().ListNamespaces(2, "", false);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->next_page_token.empty());
  // Namespaces registered between two pages: the next page continues after the last name
  // it returned, with nothing repeated or skipped.
  ASSERT_TRUE(store().CreateNamespace(Record("a", "id-a"), kT0).ok());
  ASSERT_TRUE(store().CreateNamespace(Record("e", "id-e"), kT0).ok());
  absl::StatusOr<NamespacePage> second = store().ListNamespaces(2, first->next_page_token, false);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->namespaces.size(), 2u);
  EXPECT_EQ(second->namespaces[0].record.info().name(), "e");
  EXPECT_EQ(second->namespaces[1].record.info().name(), "f");
  EXPECT_TRUE(second->next_page_token.empty());

  for (const std::string& bad : {std::string("garbage"), std::string("n:***"),
                                 first->next_page_token + "%", std::string("\x01\x02", 2)}) {
    absl::Status s = store().ListNamespaces(2, bad, false).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST_P(NamespaceStoreTest, HistoryIsOldestFirstAndIncludesTheDeletion) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1"), kT0).ok());
  ASSERT_TRUE(store().CreateNamespace(Record("other", "id-2"), kT0).ok());
  ASSERT_TRUE(store()
                  .AppendNamespaceVersion(Record("orders", "id-1", "x"), 1, "update",
                                          kT0 + absl::Seconds(1))
                  .ok());
  ASSERT_TRUE(
      store()
          .AppendNamespaceVersion(Record("other", "id-2", "y"), 1, "update", kT0 + absl::Seconds(2))
          .ok());
  NamespaceRecord deleted = Record("orders", "id-1", "x");
  deleted.mutable_info()->set_state(NAMESPACE_STATE_DELETED);
  ASSERT_TRUE(store().AppendNamespaceVersion(deleted, 2, "delete", kT0 + absl::Seconds(3)).ok());

  std::vector<NamespaceVersion> history = History("orders");
  ASSERT_EQ(history.size(), 3u);
  std::vector<std::string> operations;
  for (const NamespaceVersion& v : history) {
    operations.push_back(absl::StrCat(v.version, ":", v.operation));
    EXPECT_EQ(v.record.info().id(), "id-1");  // nothing of the other namespace
  }
  EXPECT_EQ(operations, (std::vector<std::string>{"1:register", "2:update", "3:delete"}));
  EXPECT_EQ(History("other").size(), 2u);
}

TEST_P(NamespaceStoreTest, ConcurrentWritersSerialize) {
  // Every thread registers the same name: exactly one wins.
  constexpr int kThreads = 4;
  std::atomic<int> created{0};
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        if (store().CreateNamespace(Record("orders", absl::StrCat("id-", t)), kT0).ok()) {
          ++created;
        }
      });
    }
  }
  ASSERT_EQ(created.load(), 1);
  const std::string id = store().GetNamespaceByName("orders")->record.info().id();

  // Every thread appends read-then-write with the same `now`, retrying when it loses a race:
  // no update is lost and the versions stay dense, each 1 ms after the previous.
  constexpr int kAppendsPerThread = 10;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kAppendsPerThread;) {
          absl::StatusOr<NamespaceVersion> current = store().GetNamespaceByName("orders");
          ASSERT_TRUE(current.ok()) << current.status();
          absl::Status s =
              store()
                  .AppendNamespaceVersion(Record("orders", id, absl::StrCat(t, "/", i)),
                                          current->version, "update", kT0)
                  .status();
          if (s.ok()) {
            ++i;
          } else {
            ASSERT_EQ(s.code(), absl::StatusCode::kAborted) << s;
          }
        }
      });
    }
  }
  std::vector<NamespaceVersion> history = History("orders");
  ASSERT_EQ(history.size(), 1u + kThreads * kAppendsPerThread);
  for (size_t i = 0; i < history.size(); ++i) {
    EXPECT_EQ(history[i].version, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(history[i].valid_from, kT0 + absl::Milliseconds(i));
    if (i + 1 < history.size()) EXPECT_EQ(history[i].valid_to, history[i + 1].valid_from);
  }
  EXPECT_FALSE(history.back().valid_to.has_value());
}

TEST_P(NamespaceStoreTest, SurvivesCloseAndReopen) {
  ASSERT_TRUE(store().CreateNamespace(Record("orders", "id-1", "one"), kT0).ok());
  ASSERT_TRUE(
      store().AppendNamespaceVersion(Record("orders", "id-1", "two"), 1, "update", kT0).ok());
  std::vector<NamespaceVersion> before = History("orders");
  persistence_.reset();
  persistence_ = Open();
  ASSERT_NE(persistence_, nullptr);
  absl::StatusOr<std::vector<NamespaceVersion>> after = store().GetNamespaceHistory("orders");
  if (!Durable()) {
    EXPECT_EQ(after.status().code(), absl::StatusCode::kNotFound);
    return;
  }
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(Dump((*after)[i]), Dump(before[i]));
  // And it carries on where it stopped.
  auto v3 = store().AppendNamespaceVersion(Record("orders", "id-1", "three"), 2, "update", kT0);
  ASSERT_TRUE(v3.ok()) << v3.status();
  EXPECT_EQ(v3->version, 3);
  EXPECT_EQ(v3->valid_from, kT0 + absl::Milliseconds(2));
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(NamespaceStoreTest);

}  // namespace
}  // namespace tock::persistence
