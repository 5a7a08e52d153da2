// ReapplyParts: a forward of a losing branch's events to the active cluster fits the
// receiver's request limit (4 MiB) whatever the events, and keeps their order.
#include "server-core/history/reapply_parts.h"

#include <gtest/gtest.h>

#include <string>

namespace tock::server::history {
namespace {

persistence::HistoryEvent Signal(int64_t id, size_t payload_bytes) {
  persistence::HistoryEvent e;
  e.set_event_id(id);
  e.mutable_workflow_execution_signaled_event_attributes()
      ->mutable_input()
      ->add_payloads()
      ->set_data(std::string(payload_bytes, 'x'));
  return e;
}

size_t Bytes(const std::vector<persistence::HistoryEvent>& part) {
  size_t n = 0;
  for (const auto& e : part) n += e.ByteSizeLong();
  return n;
}

TEST(ReapplyPartsTest, ManySmallEventsAreCutByCount) {
  std::vector<persistence::HistoryEvent> events;
  for (int i = 1; i <= 2500; ++i) events.push_back(Signal(i, 10));
  const auto parts = ReapplyParts(events);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].size(), kMaxReapplyEvents);
  EXPECT_EQ(parts[2].size(), 500u);
  EXPECT_EQ(parts[2].back().event_id(), 2500);
}

TEST(ReapplyPartsTest, LargeEventsAreCutByBytesAndKeepTheirOrder) {
  // Three signals of 1.5 MiB: two would be 3 MiB (within), three 4.5 MiB (over the limit).
  std::vector<persistence::HistoryEvent> events;
  for (int i = 1; i <= 5; ++i) events.push_back(Signal(i, 1536 * 1024));
  const auto parts = ReapplyParts(events);
  ASSERT_EQ(parts.size(), 3u);
  int64_t next = 1;
  for (const auto& part : parts) {
    EXPECT_LE(Bytes(part), kMaxReapplyBytes);
    for (const auto& e : part) EXPECT_EQ(e.event_id(), next++);
  }
  EXPECT_EQ(next, 6);
}

TEST(ReapplyPartsTest, AnEventLargerThanAPartGoesAlone) {
  std::vector<persistence::HistoryEvent> events = {Signal(1, 10), Signal(2, kMaxReapplyBytes),
                                                   Signal(3, 10)};
  const auto parts = ReapplyParts(events);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].size(), 1u);
  EXPECT_EQ(parts[1].front().event_id(), 2);
}

TEST(ReapplyPartsTest, NoEventsNoCalls) { EXPECT_TRUE(ReapplyParts({}).empty()); }

}  // namespace
}  // namespace tock::server::history
