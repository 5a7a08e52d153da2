// Identifiers (lib/common/ids.h): random version-4 and time-ordered version-7 UUIDs in
// canonical form.
#include "lib/common/ids.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace tock {
namespace {

TEST(IdsTest, NewUuidIsCanonicalVersionFour) {
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewUuid();
    ASSERT_TRUE(IsUuid(id)) << id;
    ASSERT_EQ(id.size(), 36u);
    EXPECT_EQ(id[14], '4') << "version nibble: " << id;
    EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << "RFC 4122 variant: " << id;
    EXPECT_EQ(id.find_first_of("ABCDEF"), std::string::npos) << "lower case: " << id;
  }
}

TEST(IdsTest, NewUuidsAreUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) EXPECT_TRUE(seen.insert(NewUuid()).second);
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(IdsTest, TimeOrderedUuidsCarryTheMillisecondAndSortByIt) {
  const absl::Time t = absl::FromUnixMillis(1'764'300'000'123);  // 2025-11-28
  const std::string id = NewTimeOrderedUuid(t);
  ASSERT_TRUE(IsUuid(id)) << id;
  EXPECT_EQ(id[14], '7') << "version nibble: " << id;
  EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << "RFC 4122 variant: " << id;
  // The first 48 bits are the Unix milliseconds: 0x019ac8798b7b.
  EXPECT_EQ(id.substr(0, 13), "019ac879-8b7b") << id;
  std::set<std::string> seen;
  std::string previous;
  for (int ms = 0; ms < 1000; ++ms) {
    const std::string next = NewTimeOrderedUuid(t + absl::Milliseconds(ms));
    EXPECT_TRUE(seen.insert(next).second);
    EXPECT_LT(previous, next) << "a later millisecond sorts after";
    previous = next;
  }
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.insert(NewTimeOrderedUuid(t)).second) << "unique within a millisecond";
}

TEST(IdsTest, IsUuidAcceptsOnlyThe8_4_4_4_12HexForm) {
  EXPECT_TRUE(IsUuid("123e4567-e89b-12d3-a456-426614174000"));
  EXPECT_TRUE(IsUuid("00000000-0000-0000-0000-000000000000"));
  EXPECT_TRUE(IsUuid("123E4567-E89B-12D3-A456-426614174000"));
  EXPECT_FALSE(IsUuid(""));
  EXPECT_FALSE(IsUuid("not-a-uuid"));
  EXPECT_FALSE(IsUuid("123e4567e89b12d3a456426614174000"));       // no dashes
  EXPECT_FALSE(IsUuid("0123456789abcdef0123456789abcdef0123"));   // 36, no dashes
  EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-42661417400"));    // 35
  EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-4266141740000"));  // 37
  EXPECT_FALSE(IsUuid("123e4567-e89b-12d3-a456-42661417400g"));   // not hex
  EXPECT_FALSE(IsUuid("123e4567-e89b-12d3a-456-426614174000"));   // dash moved
  EXPECT_FALSE(IsUuid("{23e4567-e89b-12d3-a456-426614174000}"));
}

}  // namespace
}  // namespace tock
