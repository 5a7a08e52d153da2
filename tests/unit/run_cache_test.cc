#include "server-core/history/run_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tock::server::history {
namespace {

struct Entry {
  std::mutex mu;
  int value = 0;
};
using Cache = RunCache<Entry>;
constexpr size_t kFixed = Cache::kEntryBytes + 1;  // an entry of a one-letter key, uncharged

TEST(RunCacheTest, OneEntryPerKey) {
  Cache cache({.max_entries = 10, .max_bytes = 1 << 20});
  std::shared_ptr<Entry> a = cache.Get("a");
  a->value = 7;
  EXPECT_EQ(cache.Get("a"), a);
  EXPECT_NE(cache.Get("b"), a);
  EXPECT_EQ(cache.Get("b")->value, 0) << "a new entry is value-initialised";
  EXPECT_EQ(cache.size(), 2u);
}

TEST(RunCacheTest, CountBoundEvictsTheLeastRecentlyUsed) {
  Cache cache({.max_entries = 3, .max_bytes = 1 << 20});
  cache.Get("a")->value = 1;
  cache.Get("b");
  cache.Get("c");
  cache.Get("a");  // now b is the least recently used
  cache.Get("d");
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_FALSE(cache.Contains("b"));
  EXPECT_TRUE(cache.Contains("a"));
  EXPECT_EQ(cache.Get("a")->value, 1);
  cache.Get("e");  // c is the oldest now (a and d were used since)
  EXPECT_FALSE(cache.Contains("c"));
  EXPECT_TRUE(cache.Contains("d"));
}

TEST(RunCacheTest, AnEvictedKeyStartsAgainEmpty) {
  Cache cache({.max_entries = 1, .max_bytes = 1 << 20});
  cache.Get("a")->value = 5;
  cache.Get("b");
  EXPECT_EQ(cache.Get("a")->value, 0);
}

TEST(RunCacheTest, ByteBoundCountsCharges) {
  Cache cache({.max_entries = 100, .max_bytes = 3 * kFixed + 1000});
  cache.Get("a");
  cache.Get("b");
  cache.Get("c");
  EXPECT_EQ(cache.bytes(), 3 * kFixed);
  cache.Charge("a", 600);
  cache.Charge("b", 300);
  EXPECT_EQ(cache.bytes(), 3 * kFixed + 900);
  EXPECT_EQ(cache.size(), 3u);
  // Over the bound: the least recently used goes first, whichever entry was charged.
  cache.Charge("c", 200);
  EXPECT_FALSE(cache.Contains("a"));
  EXPECT_EQ(cache.bytes(), 2 * kFixed + 500);
  // A charge replaces the last one.
  cache.Charge("b", 0);
  EXPECT_EQ(cache.bytes(), 2 * kFixed + 200);
  cache.Charge("gone", 50);  // no entry: nothing
  EXPECT_EQ(cache.bytes(), 2 * kFixed + 200);
}

TEST(RunCacheTest, AChargeOverTheBoundKeepsTheHeldEntry) {
  Cache cache({.max_entries = 100, .max_bytes = 2 * kFixed + 100});
  std::shared_ptr<Entry> a = cache.Get("a");
  cache.Get("b");
  cache.Charge("a", 10'000);  // over the bound by itself: b goes, a is held so stays
  EXPECT_TRUE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("b"));
  a.reset();
  cache.Get("c");  // now a is unheld and the least recently used
  EXPECT_FALSE(cache.Contains("a"));
  EXPECT_EQ(cache.bytes(), kFixed);
}

TEST(RunCacheTest, EntriesHeldAreNeverEvicted) {
  Cache cache({.max_entries = 2, .max_bytes = 1 << 20});
  std::vector<std::shared_ptr<Entry>> held;
  for (const char* key : {"a", "b", "c", "d"}) {
    held.push_back(cache.Get(key));
    held.back()->value = 1;
  }
  EXPECT_EQ(cache.size(), 4u) << "all four are in use";
  for (const char* key : {"a", "b", "c", "d"}) EXPECT_EQ(cache.Get(key)->value, 1) << key;
  held.erase(held.begin() + 1, held.end());  // b, c and d released; a still held
  cache.Get("e");
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.Contains("a")) << "held, though least recently used";
  EXPECT_TRUE(cache.Contains("e"));
}

// Many threads on a few keys, with bounds small enough that entries are evicted all the
// time: the callers of one key at one moment still share one entry, so its lock excludes.
TEST(RunCacheTest, CallersOfOneKeyShareItsLockUnderEviction) {
  Cache cache({.max_entries = 2, .max_bytes = 4 * kFixed});
  constexpr int kKeys = 6, kThreads = 8, kRounds = 20'000;
  std::atomic<int> inside[kKeys] = {};
  std::atomic<bool> overlapped{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        const int k = (i * 7 + t) % kKeys;
        std::shared_ptr<Entry> entry = cache.Get(std::to_string(k));
        std::lock_guard lock(entry->mu);
        if (inside[k]++ != 0) overlapped = true;
        cache.Charge(std::to_string(k), static_cast<size_t>(i % 3) * 100);
        --inside[k];
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(overlapped);
  cache.Get("0");  // the first call with none held (the last ones ran while others held theirs)
  EXPECT_LE(cache.size(), 2u) << "back within the bound once none is held";
  EXPECT_LE(cache.bytes(), 4 * kFixed);
}

}  // namespace
}  // namespace tock::server::history
