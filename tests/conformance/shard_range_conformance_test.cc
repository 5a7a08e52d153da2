// ExecutionStore::RenewShardRange on every backend: the owner's compare-and-swap of its
// shard's range id from R to R + 1 (its task-id block is used up). It fences the owner's
// older writes out like an acquisition, is idempotent for a retry by the same owner, and
// changes nothing when another owner took the shard, a second process at the same address
// included.
#include <gtest/gtest.h>

#include <latch>
#include <thread>

#include "server-core/history/shard_controller.h"
#include "server-core/persistence/execution_store.h"
#include "tests/conformance/execution_fixture.h"

namespace tock::persistence::conformance {
namespace {

using Code = absl::StatusCode;

class ShardRangeTest : public ExecutionStoreFixture {
 protected:
  static constexpr char kOwner[] = "test-owner";  // the fixture's acquisition

  // A commit on shard 1 fenced with `range_id` that changes one run.
  absl::Status WriteWith(int64_t range_id, int64_t db_version) {
    Commit c;
    c.shard_id = 1;
    c.range_id = range_id;
    c.runs = {RunChange("wf", "run", db_version)};
    return store().Write(c);
  }
};

TEST_P(ShardRangeTest, RenewalMovesTheRangeIdByOneAndFencesTheOldOneOut) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run"));
  ASSERT_TRUE(store().RenewShardRange(1, range_id_, kOwner).ok());
  EXPECT_EQ(WriteWith(range_id_, 2).code(), Code::kFailedPrecondition);
  EXPECT_EQ(StoredVersion("wf", "run"), 1);
  absl::Status renewed_write = WriteWith(range_id_ + 1, 2);
  EXPECT_TRUE(renewed_write.ok()) << renewed_write;
  EXPECT_EQ(StoredVersion("wf", "run"), 2);

  absl::StatusOr<int64_t> next = store().AcquireShard(1, "next-owner");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(*next, range_id_ + 2) << "an acquisition continues from the renewed range id";
}

TEST_P(ShardRangeTest, ARetryOfARenewalThatHappenedIsAnsweredOkAndMovesNothing) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run"));
  ASSERT_TRUE(store().RenewShardRange(1, range_id_, kOwner).ok());
  absl::Status again = store().RenewShardRange(1, range_id_, kOwner);
  EXPECT_TRUE(again.ok()) << again;
  absl::Status write = WriteWith(range_id_ + 1, 2);
  EXPECT_TRUE(write.ok()) << "the retry left the range id at R + 1: " << write;
  ASSERT_TRUE(store().RenewShardRange(1, range_id_ + 1, kOwner).ok());
  EXPECT_EQ(WriteWith(range_id_ + 2, 3).code(), Code::kOk);
  // Two renewals back is no retry: that range is long gone.
  EXPECT_EQ(store().RenewShardRange(1, range_id_, kOwner).code(), Code::kFailedPrecondition);
}

TEST_P(ShardRangeTest, ARenewalAfterAStealIsRefusedAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run"));
  absl::StatusOr<int64_t> stolen = store().AcquireShard(1, "thief");
  ASSERT_TRUE(stolen.ok()) << stolen.status();
  ASSERT_EQ(*stolen, range_id_ + 1);

  absl::Status renewed = store().RenewShardRange(1, range_id_, kOwner);
  EXPECT_EQ(renewed.code(), Code::kFailedPrecondition) << renewed;
  EXPECT_NE(renewed.message().find("owned by another server"), std::string::npos) << renewed;
  // Not the thief's range either: the owner names who holds it.
  EXPECT_EQ(store().RenewShardRange(1, *stolen, kOwner).code(), Code::kFailedPrecondition);
  absl::Status thief_write = WriteWith(*stolen, 2);
  EXPECT_TRUE(thief_write.ok()) << "the thief's range id is still the stored one: " << thief_write;
  ASSERT_TRUE(store().RenewShardRange(1, *stolen, "thief").ok());
  EXPECT_EQ(WriteWith(*stolen + 1, 3).code(), Code::kOk);
}

TEST_P(ShardRangeTest, OnlyThatShardIsRenewedAndAShardNeverTakenIsRefused) {
  absl::StatusOr<int64_t> other = store().AcquireShard(2, kOwner);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(store().RenewShardRange(1, range_id_, kOwner).ok());
  absl::StatusOr<int64_t> other_next = store().AcquireShard(2, kOwner);
  ASSERT_TRUE(other_next.ok()) << other_next.status();
  EXPECT_EQ(*other_next, *other + 1) << "renewing shard 1 moved shard 2";
  EXPECT_EQ(store().RenewShardRange(7, 1, kOwner).code(), Code::kFailedPrecondition);
}

// A renewal racing a steal: exactly one order happened, and the range ids say which.
TEST_P(ShardRangeTest, ARenewalRacingASteal) {
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE(round);
    absl::StatusOr<int64_t> mine = store().AcquireShard(1, kOwner);
    ASSERT_TRUE(mine.ok()) << mine.status();
    absl::Status renewed;
    absl::StatusOr<int64_t> stolen;
    std::latch start(2);
    {
      std::jthread owner([&] {
        start.arrive_and_wait();
        renewed = store().RenewShardRange(1, *mine, kOwner);
      });
      std::jthread thief([&] {
        start.arrive_and_wait();
        stolen = store().AcquireShard(1, "thief");
      });
    }
    ASSERT_TRUE(stolen.ok()) << stolen.status();
    if (renewed.ok()) {
      EXPECT_EQ(*stolen, *mine + 2) << "renewed first, then stolen";
    } else {
      EXPECT_EQ(renewed.code(), Code::kFailedPrecondition) << renewed;
      EXPECT_EQ(*stolen, *mine + 1) << "stolen first, the renewal refused";
    }
  }
}

// Two processes that advertise one address (a restarted pod reusing its service name, a
// misconfigured advertise_address): each is its own owner (ShardController names its process
// in the rows), so once the new one took the shard, the stale one's renewal, and its retry,
// cannot pass for a retry of its own, and it gives the shard up.
TEST_P(ShardRangeTest, TwoProcessesOfOneAddressAreTwoOwners) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run"));
  constexpr char kAddress[] = "10.0.0.5:7233";
  server::history::ShardController stale(store(), 1, kAddress, /*block_size=*/2);
  ASSERT_TRUE(stale.AcquireAll().ok());
  const int64_t old_range = stale.RangeId(1);
  server::history::ShardController fresh(store(), 1, kAddress, /*block_size=*/2);
  ASSERT_TRUE(fresh.AcquireAll().ok());
  ASSERT_EQ(fresh.RangeId(1), old_range + 1);
  EXPECT_NE(stale.owner(), fresh.owner());
  EXPECT_EQ(server::history::ShardOwnerAddress(stale.owner()), kAddress);

  // The stale process's renewal of its range, then the same call again (a retry).
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::Status renewed = store().RenewShardRange(1, old_range, stale.owner());
    EXPECT_EQ(renewed.code(), Code::kFailedPrecondition)
        << "attempt " << attempt << ": " << renewed;
  }
  // Through the controller: its block used up, the renewal finds the shard taken.
  EXPECT_NE(stale.NextTaskId(1), server::history::ShardController::kNotOwned);
  EXPECT_NE(stale.NextTaskId(1), server::history::ShardController::kNotOwned);
  EXPECT_EQ(stale.NextTaskId(1), server::history::ShardController::kNotOwned);
  EXPECT_FALSE(stale.Owns(1));
  EXPECT_EQ(WriteWith(old_range + 1, 2).code(), Code::kOk) << "the new process's range moved";
  EXPECT_EQ(fresh.RangeId(1), old_range + 1);
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(ShardRangeTest);

}  // namespace
}  // namespace tock::persistence::conformance
