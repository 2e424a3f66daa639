// ResponseCache: LRU order, slot reuse, and the bit-vector round trip.
#include "executor/response_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace autotune::executor {
namespace {

TEST(ResponseCacheTest, CapacityZeroNeverCaches) {
  ResponseCache cache(0);
  EXPECT_EQ(cache.Put(3), -1);
  EXPECT_FALSE(cache.Contains(3));
  EXPECT_EQ(cache.words(), 1);  // the flag bit only
}

TEST(ResponseCacheTest, FillsSlotsInOrderThenEvictsLeastRecentlyUsed) {
  ResponseCache cache(3);
  EXPECT_EQ(cache.Put(10), -1);
  EXPECT_EQ(cache.Put(11), -1);
  EXPECT_EQ(cache.Put(12), -1);
  EXPECT_EQ(cache.SlotOf(10), 0);
  EXPECT_EQ(cache.SlotOf(11), 1);
  EXPECT_EQ(cache.SlotOf(12), 2);
  cache.Touch(10);               // order now 10, 12, 11 (most recent first)
  EXPECT_EQ(cache.Put(13), 11);  // evicts 11 and reuses its slot
  EXPECT_FALSE(cache.Contains(11));
  EXPECT_EQ(cache.SlotOf(13), 1);
  EXPECT_EQ(cache.Put(14), 12);
  EXPECT_EQ(cache.SlotOf(14), 2);
  EXPECT_EQ(cache.size(), 3);
}

TEST(ResponseCacheTest, PutOfCachedTensorTouchesIt) {
  ResponseCache cache(2);
  cache.Put(1);
  cache.Put(2);
  EXPECT_EQ(cache.Put(1), -1);  // touch: 2 is now least recent
  EXPECT_EQ(cache.Put(3), 2);
}

TEST(ResponseCacheTest, BitsRoundTripAcrossWords) {
  ResponseCache cache(130);
  for (int t = 0; t < 130; ++t) cache.Put(1000 + t);
  EXPECT_EQ(cache.words(), 3);  // 131 bits
  const std::vector<int> ready = {1000, 1063, 1064, 1129, 7 /* uncached: ignored */};
  std::vector<uint64_t> bits = cache.Bits(ready, /*flag=*/false);
  EXPECT_FALSE(ResponseCache::Flag(bits));
  EXPECT_EQ(cache.TensorsIn(bits), (std::vector<int>{1000, 1063, 1064, 1129}));
  EXPECT_TRUE(ResponseCache::Flag(cache.Bits({}, /*flag=*/true)));
}

TEST(ResponseCacheTest, BitwiseAndKeepsOnlyTensorsPendingEverywhere) {
  ResponseCache cache(8);
  for (int t = 0; t < 8; ++t) cache.Put(t);
  std::vector<uint64_t> a = cache.Bits(std::vector<int>{1, 2, 5}, true);
  std::vector<uint64_t> b = cache.Bits(std::vector<int>{2, 5, 7}, false);
  for (size_t i = 0; i < a.size(); ++i) a[i] &= b[i];
  EXPECT_EQ(cache.TensorsIn(a), (std::vector<int>{2, 5}));
  EXPECT_FALSE(ResponseCache::Flag(a));
}

}  // namespace
}  // namespace autotune::executor
