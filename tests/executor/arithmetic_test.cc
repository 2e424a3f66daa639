// Pure arithmetic of the executor: hierarchical chunking, dtype conversions, test pattern,
// pseudo-node parsing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "executor/dtype_convert.h"
#include "executor/hierarchical.h"
#include "executor/layout.h"
#include "executor/pattern.h"

namespace autotune::executor {
namespace {

TEST(HierarchicalSplitTest, DivisibleCountHasNoRemainder) {
  HierarchicalSplit s = SplitForLocalSize(1000, 4);
  EXPECT_EQ(s.chunk, 250);
  EXPECT_EQ(s.remainder, 0);
}

TEST(HierarchicalSplitTest, RemainderIsLessThanLocalSize) {
  for (int local = 1; local <= 8; ++local) {
    for (int64_t count = 0; count < 50; ++count) {
      HierarchicalSplit s = SplitForLocalSize(count, local);
      EXPECT_EQ(s.chunk * local + s.remainder, count);
      EXPECT_GE(s.remainder, 0);
      EXPECT_LT(s.remainder, local);
    }
  }
}

TEST(HierarchicalSplitTest, CountBelowLocalSizeGoesAllThroughRemainder) {
  HierarchicalSplit s = SplitForLocalSize(3, 4);
  EXPECT_EQ(s.chunk, 0);
  EXPECT_EQ(s.remainder, 3);
}

TEST(DTypeConvertTest, HalfKnownValues) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65536.0f), 0x7c00);               // overflow -> inf
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(2049.0f), 0x6800);                // tie -> even (2048)
  EXPECT_EQ(FloatToHalf(2051.0f), 0x6802);                // tie -> even (2052)
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DTypeConvertTest, HalfRoundTripsEverySmallInteger) {
  for (int v = -2048; v <= 2048; ++v) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(static_cast<float>(v))), static_cast<float>(v));
  }
}

TEST(DTypeConvertTest, BFloat16KnownValues) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBFloat16(-3.0f), 0xc040);
  EXPECT_EQ(BFloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(FloatToBFloat16(257.0f), 0x4380);  // tie -> even (256)
  for (int v = -256; v <= 256; ++v) {
    EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v))), static_cast<float>(v));
  }
}

TEST(DTypeConvertTest, StoreLoadEveryDType) {
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                  DType::kInt32, DType::kInt64}) {
    alignas(8) char buf[64] = {};
    StoreElement(d, buf, 3, -7.0);
    EXPECT_EQ(LoadElement(d, buf, 3), -7.0) << DTypeName(d);
  }
}

TEST(PatternTest, ValuesAreSmallIntegersAndSumsMatch) {
  for (int t = 0; t < 5; ++t) {
    for (int64_t e = 0; e < 40; ++e) {
      int64_t sum = 0;
      for (int r = 0; r < 6; ++r) {
        const int v = PatternValue(r, t, e);
        EXPECT_GE(v, -4);
        EXPECT_LE(v, 4);
        sum += v;
      }
      EXPECT_EQ(PatternSum(6, t, e), sum);
      EXPECT_EQ(PatternSum(6, t, e), PatternSum(6, t, e % 9));  // period 9 (VerifyOutputs)
    }
  }
  EXPECT_NE(PatternValue(0, 0, 0), PatternValue(1, 0, 0));  // ranks differ
}

TEST(RanksPerNodeTest, ParsesAndRejects) {
  int k = -1;
  bool cyclic = true;
  EXPECT_TRUE(ParseRanksPerNode(nullptr, 4, &k, &cyclic).ok());
  EXPECT_EQ(k, 0);
  EXPECT_TRUE(ParseRanksPerNode("2", 4, &k, &cyclic).ok());
  EXPECT_EQ(k, 2);
  EXPECT_FALSE(cyclic);
  EXPECT_TRUE(ParseRanksPerNode("2:cyclic", 4, &k, &cyclic).ok());
  EXPECT_TRUE(cyclic);
  EXPECT_FALSE(ParseRanksPerNode("3", 4, &k, &cyclic).ok());
  EXPECT_FALSE(ParseRanksPerNode("0", 4, &k, &cyclic).ok());
  EXPECT_FALSE(ParseRanksPerNode("two", 4, &k, &cyclic).ok());
  EXPECT_FALSE(ParseRanksPerNode("2:round", 4, &k, &cyclic).ok());
}

}  // namespace
}  // namespace autotune::executor
