// SharedLink: collectives in flight at once on one link
// (simulator/shared_link.h), forward and inverse, on cases worked out by hand.
#include "simulator/shared_link.h"

#include <gtest/gtest.h>

#include <vector>

namespace autotune::sim {
namespace {

// Two collectives of 1000 us fixed part and 10000 us of link time each,
// launched at 1750 and 2500 us, two slots. A runs its fixed part 1750-2750 and
// has the link alone 2750-3500 (750 of its 10000 done). B's fixed part
// 2500-3500 overlaps A. From 3500 both share the link at half rate: A's 9250
// left take 18500, A ends at 22000; B has got 9250 by then, its last 750 alone:
// B ends at 22750. One after another B would end at 1750 + 11000 + 11000 =
// 23750: sharing hides B's fixed part only.
std::vector<LinkJob> TwoBuckets() {
  return {{1750.0, 1000.0, 10000.0, 0.0}, {2500.0, 1000.0, 10000.0, 0.0}};
}

TEST(SharedLinkTest, TwoCollectivesOverlapTheirLatencyAndSplitTheLink) {
  const std::vector<LinkRun> runs = ShareLink(TwoBuckets(), 2);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NEAR(runs[0].start_us, 1750.0, 1e-6);
  EXPECT_NEAR(runs[0].shared_start_us, 2750.0, 1e-6);
  EXPECT_NEAR(runs[0].end_us, 22000.0, 1e-6);
  EXPECT_NEAR(runs[1].start_us, 2500.0, 1e-6);
  EXPECT_NEAR(runs[1].shared_start_us, 3500.0, 1e-6);
  EXPECT_NEAR(runs[1].end_us, 22750.0, 1e-6);
}

TEST(SharedLinkTest, OneSlotIsOneStream) {
  const std::vector<LinkRun> runs = ShareLink(TwoBuckets(), 1);
  EXPECT_NEAR(runs[0].end_us, 12750.0, 1e-6);  // 1750 + 1000 + 10000
  EXPECT_NEAR(runs[1].start_us, 12750.0, 1e-6);
  EXPECT_NEAR(runs[1].end_us, 23750.0, 1e-6);
}

TEST(SharedLinkTest, ALaunchWaitsForAFreeSlotAndCopiesDoNotShare) {
  // Three launches at 0, two slots, no fixed part, 100 us of link each, a 50 us
  // copy-out each. A and B share the link 0-200 (each gets 100), then copy out
  // alone until 250; C gets A's slot at 250 and has the link alone: 350, its
  // copy-out 400.
  const std::vector<LinkJob> jobs = {{0, 0, 100, 50}, {0, 0, 100, 50}, {0, 0, 100, 50}};
  const std::vector<LinkRun> runs = ShareLink(jobs, 2);
  EXPECT_NEAR(runs[0].shared_end_us, 200.0, 1e-9);
  EXPECT_NEAR(runs[0].end_us, 250.0, 1e-9);
  EXPECT_NEAR(runs[1].end_us, 250.0, 1e-9);
  EXPECT_NEAR(runs[2].start_us, 250.0, 1e-9);
  EXPECT_NEAR(runs[2].shared_end_us, 350.0, 1e-9);
  EXPECT_NEAR(runs[2].end_us, 400.0, 1e-9);
}

TEST(SharedLinkTest, ASlowdownUntilTheComputeEndsSlowsLatencyAndLinkButNotCopies) {
  // Two launches at 0, two slots, 20 us fixed part, 100 us of link, 50 us copy-out each; at
  // half speed until 100 us. Fixed parts 0-40 (20 us of work at half speed); sharing the link
  // at a quarter rate each 40-100 (15 us done each); from 100 at half rate: 85 left take 170,
  // to 270; copy-outs at full speed, to 320.
  const std::vector<LinkJob> jobs = {{0, 20, 100, 50}, {0, 20, 100, 50}};
  const std::vector<LinkRun> runs = ShareLink(jobs, 2, {100.0, 2.0});
  EXPECT_NEAR(runs[0].shared_start_us, 40.0, 1e-9);
  EXPECT_NEAR(runs[0].shared_end_us, 270.0, 1e-9);
  EXPECT_NEAR(runs[1].end_us, 320.0, 1e-9);
  // Without it: 20, 20 + 200 = 220, 270.
  const std::vector<LinkRun> plain = ShareLink(jobs, 2);
  EXPECT_NEAR(plain[0].shared_end_us, 220.0, 1e-9);
  EXPECT_NEAR(plain[1].end_us, 270.0, 1e-9);
  // A launch after the slowdown ends is untouched; one stream (one slot) as the serial replay:
  // 0-100 does 50 of the 120 us (20 + 100), the other 70 at full speed: 170, copy-out 220.
  EXPECT_NEAR(ShareLink(std::vector<LinkJob>{{150, 20, 100, 50}}, 2, {100.0, 2.0})[0].end_us,
              320.0, 1e-9);
  EXPECT_NEAR(ShareLink(std::vector<LinkJob>{{0, 20, 100, 50}}, 1, {100.0, 2.0})[0].end_us,
              220.0, 1e-9);
}

TEST(SharedLinkTest, SoloTimesUndoTheSharing) {
  // The two buckets as recorded (launch, end, fixed part): each took 1000 +
  // 10000 alone.
  const std::vector<RecordedFlight> flights = {{1750.0, 22000.0, 1000.0},
                                               {2500.0, 22750.0, 1000.0}};
  std::vector<double> solo = SoloTimes(flights, 2);
  EXPECT_NEAR(solo[0], 11000.0, 1e-6);
  EXPECT_NEAR(solo[1], 11000.0, 1e-6);
  // Read as one stream, B starts when A ended (22000): its fixed part runs to
  // 22750, its end.
  solo = SoloTimes(flights, 1);
  EXPECT_NEAR(solo[0], 20250.0, 1e-6);
  EXPECT_NEAR(solo[1], 750.0, 1e-6);
}

}  // namespace
}  // namespace autotune::sim
