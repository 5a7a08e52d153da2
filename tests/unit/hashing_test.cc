// FarmHash fingerprints (lib/common/hashing.h) must be byte-for-byte Temporal's (Go's
// github.com/dgryski/go-farm): they place executions on shards and name archive files.
#include "lib/common/hashing.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace tock {
namespace {

// Published vectors for farm.Fingerprint32 (go-farm's farm_test.go golden32 table; in go-farm
// Fingerprint32 is Hash32, farmhashmk). The lengths cover every branch: 0-4, 5-12, 13-24, >24.
TEST(HashingTest, Fingerprint32MatchesGoFarm) {
  EXPECT_EQ(Fingerprint32("a"), 0x3c973d4du);
  EXPECT_EQ(Fingerprint32("ab"), 0x417330fdu);
  EXPECT_EQ(Fingerprint32("abc"), 0x2f635ec7u);
  EXPECT_EQ(Fingerprint32("abcd"), 0x98b51e95u);
  EXPECT_EQ(Fingerprint32("abcde"), 0xa3f366acu);
  EXPECT_EQ(Fingerprint32("abcdefghij"), 0xf2669361u);
  EXPECT_EQ(Fingerprint32("size:  a.out:  bad magic"), 0xc6246b8du);
  EXPECT_EQ(Fingerprint32("Nepal premier won't resign."), 0x322984d9u);
  EXPECT_EQ(Fingerprint32("Discard medicine more than two years old."), 0xe273108fu);
  EXPECT_EQ(Fingerprint32("How can you write a big system without C++?  -Paul Glick"), 0x0819a4e8u);
  EXPECT_EQ(Fingerprint32("The fugacity of a constituent in a mixture of gases at a given "
                          "temperature is proportional to its mole fraction.  Lewis-Randall Rule"),
            0x11c493bbu);
}

// Published vectors for Fingerprint64 (farmhashna): the empty input is CityHash's constant
// k2; the others are from the FarmHash Fingerprint64 test tables of Airship's SDKs and of
// farmhash-dart.
TEST(HashingTest, Fingerprint64MatchesPublishedVectors) {
  EXPECT_EQ(Fingerprint64(""), 0x9ae16a3b2f90404fULL);
  EXPECT_EQ(Fingerprint64(""), 11160318154034397263ULL);
  EXPECT_EQ(Fingerprint64("Q"), 13816109650407654260ULL);
  EXPECT_EQ(Fingerprint64("test"), 8581389452482819506ULL);
  EXPECT_EQ(Fingerprint64(")D<l91"), 6440615040757739207ULL);
  EXPECT_EQ(Fingerprint64("K6Pjv<>ad"), 16506019169567922731ULL);
  EXPECT_EQ(Fingerprint64("2/?98ns)xbzEVL^:wCS$7l3@_g!zP^<D.-bd6"), 9728733090894310797ULL);
  EXPECT_EQ(Fingerprint64("F7479877-4690-4A44-AFC9-8FE987EA512F:some_other_id"),
            6862335115798125349ULL);
}

// Temporal's shard of an execution: Fingerprint32(namespace_id + "_" + workflow_id) %
// shards + 1 (SPEC §4). The expected hashes were computed with an independent Python port
// of farmhashmk checked against the go-farm table above.
TEST(HashingTest, TemporalShardPlacement) {
  auto shard = [](const std::string& namespace_id, const std::string& workflow_id,
                  uint32_t shards) {
    return Fingerprint32(namespace_id + "_" + workflow_id) % shards + 1;
  };
  const std::string kNamespaceId = "9a1b1a3e-6f2f-4c36-9d8a-0f2c4f1d7e21";
  EXPECT_EQ(Fingerprint32(kNamespaceId + "_order-12345"), 0xf9717053u);
  EXPECT_EQ(shard(kNamespaceId, "order-12345", 1), 1u);
  EXPECT_EQ(shard(kNamespaceId, "order-12345", 4), 4u);
  EXPECT_EQ(shard(kNamespaceId, "order-12345", 512), 84u);
  EXPECT_EQ(Fingerprint32("default_wf"), 0xdbde708eu);
  EXPECT_EQ(shard("default", "wf", 4), 3u);
  EXPECT_EQ(shard("default", "wf", 16), 15u);
  EXPECT_EQ(shard("default", "wf", 512), 143u);
}

TEST(HashingTest, DeterministicAndInputSensitive) {
  EXPECT_EQ(Fingerprint32("ns_wf"), Fingerprint32(std::string("ns_") + "wf"));
  EXPECT_EQ(Fingerprint64("ns_wf"), Fingerprint64(std::string("ns_") + "wf"));
  EXPECT_NE(Fingerprint32("ns_wf1"), Fingerprint32("ns_wf2"));
  EXPECT_NE(Fingerprint64("ns_wf1"), Fingerprint64("ns_wf2"));
  // The length counts: an embedded NUL is data, not a terminator.
  EXPECT_NE(Fingerprint32(absl::string_view("a\0b", 3)), Fingerprint32("a"));
  EXPECT_NE(Fingerprint64(absl::string_view("a\0b", 3)), Fingerprint64("a"));
}

}  // namespace
}  // namespace tock
