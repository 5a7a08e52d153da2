// The stored form of a run's history (history_batches.h): batches split where ids jump or a
// batch is full, parse as a temporal History, and give back each event's own bytes; bytes
// that are not a batch are DATA_LOSS, never a read past the end.
#include "server-core/persistence/history_batches.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "temporal/api/history/v1/message.pb.h"

namespace tock::persistence {
namespace {

std::string EventBytes(int64_t id, size_t payload = 10) {
  temporal::api::history::v1::HistoryEvent e;
  e.set_event_id(id);
  e.mutable_workflow_task_scheduled_event_attributes()->mutable_task_queue()->set_name(
      std::string(payload, 'q'));
  return e.SerializeAsString();
}

std::vector<std::pair<int64_t, std::string>> Visited(const EventBatch& batch) {
  std::vector<std::pair<int64_t, std::string>> out;
  absl::Status s = VisitBatch(batch.bytes, batch.first_event_id, [&](int64_t id, std::string_view b) {
    out.emplace_back(id, std::string(b));
    return true;
  });
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

TEST(HistoryBatchesTest, ConsecutiveEventsShareABatchThatParsesAsAHistory) {
  const std::vector<int64_t> ids = {4, 5, 6};
  // A 200-byte event needs two bytes of length prefix.
  const std::vector<std::string> events = {EventBytes(4), EventBytes(5, 200), EventBytes(6)};
  std::vector<EventBatch> batches = BatchEvents(ids, events);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].first_event_id, 4);
  EXPECT_EQ(batches[0].last_event_id(), 6);
  temporal::api::history::v1::History history;
  ASSERT_TRUE(history.ParseFromString(batches[0].bytes));
  ASSERT_EQ(history.events_size(), 3);
  EXPECT_EQ(history.events(1).SerializeAsString(), events[1]);
  EXPECT_EQ(Visited(batches[0]),
            (std::vector<std::pair<int64_t, std::string>>{{4, events[0]}, {5, events[1]}, {6, events[2]}}));
}

TEST(HistoryBatchesTest, ABatchEndsWhereIdsJumpOrItIsFull) {
  std::vector<int64_t> ids = {1, 2, 5};
  for (int64_t id = 6; id < 6 + static_cast<int64_t>(kMaxBatchEvents) + 1; ++id) ids.push_back(id);
  std::vector<std::string> events;
  for (int64_t id : ids) events.push_back(EventBytes(id));
  std::vector<EventBatch> batches = BatchEvents(ids, events);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].first_event_id, 1);
  EXPECT_EQ(batches[0].last_event_id(), 2);
  EXPECT_EQ(batches[1].first_event_id, 5);
  EXPECT_EQ(batches[1].event_count, static_cast<int64_t>(kMaxBatchEvents));
  EXPECT_EQ(batches[2].first_event_id, 5 + static_cast<int64_t>(kMaxBatchEvents));
  EXPECT_EQ(batches[2].last_event_id(), ids.back());

  // Large events end a batch by its bytes.
  const std::vector<int64_t> big_ids = {1, 2, 3};
  const std::vector<std::string> big = {EventBytes(1, kMaxBatchBytes), EventBytes(2),
                                        EventBytes(3)};
  std::vector<EventBatch> by_bytes = BatchEvents(big_ids, big);
  ASSERT_EQ(by_bytes.size(), 2u);
  EXPECT_EQ(by_bytes[1].first_event_id, 2);
  EXPECT_TRUE(BatchEvents({}, {}).empty());
}

TEST(HistoryBatchesTest, AVisitStopsWhenAsked) {
  std::vector<EventBatch> batches =
      BatchEvents({7, 8, 9}, {EventBytes(7), EventBytes(8), EventBytes(9)});
  std::vector<int64_t> seen;
  ASSERT_TRUE(VisitBatch(batches[0].bytes, 7, [&](int64_t id, std::string_view) {
                seen.push_back(id);
                return id < 8;
              }).ok());
  EXPECT_EQ(seen, (std::vector<int64_t>{7, 8}));
}

TEST(HistoryBatchesTest, BytesThatAreNotABatchAreDataLoss) {
  std::string good;
  AppendToBatch(good, EventBytes(1));
  const std::vector<std::string> bad = {
      std::string("\x12\x01x", 3),          // another field than History.events
      good.substr(0, good.size() - 1),      // the event cut short
      std::string("\x0a\xff\xff", 3),       // a length that runs off the end
      std::string("\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12),  // an overlong varint
      good + "\x0a",                        // a tag with no length
  };
  for (const std::string& bytes : bad) {
    absl::Status s = VisitBatch(bytes, 1, [](int64_t, std::string_view) { return true; });
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  }
}

}  // namespace
}  // namespace tock::persistence
