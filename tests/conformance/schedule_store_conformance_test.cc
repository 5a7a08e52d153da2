// The ScheduleStore contract (schedule_store.h) on every backend: create once per schedule id
// and namespace, compare-and-swap updates on the revision (a stale revision is ABORTED, a gone
// schedule NOT_FOUND), delete, keyset pages per namespace and across namespaces, and records
// that outlive a reopen.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/schedule_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

ScheduleRecord Record(const std::string& ns, const std::string& id) {
  ScheduleRecord r;
  r.set_namespace_id(ns);
  r.set_namespace_(absl::StrCat("name-", ns));
  r.set_schedule_id(id);
  r.mutable_schedule()->mutable_spec()->add_cron_string("0 12 * * *");
  r.mutable_schedule()->mutable_state()->set_notes("created");
  r.set_conflict_token(1);
  return r;
}

class ScheduleStoreTest : public BackendTest {};

TEST_P(ScheduleStoreTest, CreateOnceAndCompareAndSwap) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ScheduleStore& store = p->schedules();
  ASSERT_TRUE(store.Create(Record("ns", "s1")).ok());
  ASSERT_TRUE(store.Create(Record("other", "s1")).ok()) << "schedule ids are per namespace";
  EXPECT_EQ(store.Create(Record("ns", "s1")).code(), absl::StatusCode::kAlreadyExists);

  auto got = store.Get("ns", "s1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->revision, 1);
  EXPECT_EQ(got->record.schedule().state().notes(), "created");

  ScheduleRecord changed = got->record;
  changed.mutable_schedule()->mutable_state()->set_notes("changed");
  changed.set_next_sequence(5);
  ASSERT_TRUE(store.Update(changed, 1).ok());
  // A second writer that read revision 1 too loses and learns it.
  ScheduleRecord stale = got->record;
  stale.mutable_schedule()->mutable_state()->set_notes("stale");
  EXPECT_EQ(store.Update(stale, 1).code(), absl::StatusCode::kAborted);

  got = store.Get("ns", "s1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->revision, 2);
  EXPECT_EQ(got->record.schedule().state().notes(), "changed");
  EXPECT_EQ(got->record.next_sequence(), 5);
  auto other = store.Get("other", "s1");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->record.schedule().state().notes(), "created") << "the other namespace's is apart";

  EXPECT_EQ(store.Get("ns", "nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Update(Record("ns", "nope"), 1).code(), absl::StatusCode::kNotFound);

  ASSERT_TRUE(store.Delete("ns", "s1").ok());
  EXPECT_EQ(store.Get("ns", "s1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Delete("ns", "s1").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Update(changed, 2).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store.Create(Record("ns", "s1")).ok()) << "an id is free again after a delete";
  got = store.Get("ns", "s1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->revision, 1);
}

TEST_P(ScheduleStoreTest, PagesByIdPerNamespaceAndAcrossNamespaces) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ScheduleStore& store = p->schedules();
  for (const char* id : {"b", "a", "c", "a-2"}) ASSERT_TRUE(store.Create(Record("ns1", id)).ok());
  for (const char* id : {"a", "z"}) ASSERT_TRUE(store.Create(Record("ns2", id)).ok());

  auto page = store.List("ns1", "", 2);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].record.schedule_id(), "a");
  EXPECT_EQ((*page)[1].record.schedule_id(), "a-2");
  page = store.List("ns1", "a-2", 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].record.schedule_id(), "b");
  EXPECT_EQ((*page)[1].record.schedule_id(), "c");
  page = store.List("ns1", "c", 10);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->empty());

  std::vector<std::string> all;
  std::string after_ns, after_id;
  for (int pages = 0; pages < 10; ++pages) {
    auto some = store.ListAll(after_ns, after_id, 4);
    ASSERT_TRUE(some.ok()) << some.status();
    if (some->empty()) break;
    for (const StoredSchedule& s : *some) {
      all.push_back(absl::StrCat(s.record.namespace_id(), "/", s.record.schedule_id()));
    }
    after_ns = some->back().record.namespace_id();
    after_id = some->back().record.schedule_id();
  }
  EXPECT_EQ(all, (std::vector<std::string>{"ns1/a", "ns1/a-2", "ns1/b", "ns1/c", "ns2/a", "ns2/z"}));
}

TEST_P(ScheduleStoreTest, RecordsOutliveAReopen) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database does not outlive its connection";
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    ScheduleRecord r = Record("ns", "kept");
    r.add_buffered_starts()->set_sequence(3);
    ASSERT_TRUE(p->schedules().Create(r).ok());
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto got = p->schedules().Get("ns", "kept");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->record.buffered_starts_size(), 1);
  EXPECT_EQ(got->record.buffered_starts(0).sequence(), 3);
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(ScheduleStoreTest);

}  // namespace
}  // namespace tock::persistence
