// bench's read-bandwidth sweep: where the last-level cache's knee falls and which tier's rate a
// model's weights are compared with (apps/pocketlm/bandwidth.h). The probe itself is timed, so
// only its shape is checked here; the rules run on recorded sweeps.
#include <gtest/gtest.h>

#include <cstring>

#include "bandwidth.h"

namespace pocketlm::cli {
namespace {

BandwidthSweep sweep_of(std::initializer_list<SweepPoint> points) {
  BandwidthSweep s;
  s.points = points;
  find_limits(&s);
  return s;
}

TEST(BandwidthSweep, TheKneeIsTheLastSizeAtCacheSpeed) {
  // The VM (cpuid: 320 MiB of L3, sysfs: 32): 1 MiB 66 GB/s, 16 MiB 59, 32 MiB 33, then 21-28.
  const BandwidthSweep s = sweep_of({{1, 66}, {2, 64}, {4, 62}, {8, 61}, {16, 59}, {32, 33}, {64, 28}, {128, 24},
                                     {256, 21}});
  EXPECT_EQ(s.knee_mib, 16);
  EXPECT_EQ(s.llc_gb_per_s, 59);
  EXPECT_EQ(s.dram_mib, 256);
  EXPECT_EQ(s.dram_gb_per_s, 21);
  // synth15M q80 (17.1 MB) is past the knee: DRAM; stories1M's 3.7 MB is in the cache.
  EXPECT_STREQ(read_limit_for(s, 17101764).tier, "dram");
  EXPECT_EQ(read_limit_for(s, 17101764).gb_per_s, 21);
  EXPECT_STREQ(read_limit_for(s, 3708928).tier, "llc");
  EXPECT_EQ(read_limit_for(s, 3708928).gb_per_s, 59);
}

TEST(BandwidthSweep, AnL2PeakDoesNotSetThePlateau) {
  // 1-2 MiB read from L2 at twice the L3 rate: the plateau is taken from 4 MiB on.
  const BandwidthSweep s = sweep_of({{1, 120}, {2, 100}, {4, 60}, {8, 58}, {16, 50}, {32, 30}, {64, 22}, {128, 20}});
  EXPECT_EQ(s.knee_mib, 16);  // 50 >= (60 + 20) / 2
  EXPECT_EQ(s.dram_gb_per_s, 20);
}

TEST(BandwidthSweep, DramIsWhereTheCurveFlattens) {
  // A VM whose host's cache still served part of 128 MiB: 46.8 GB/s there, 35.7 at 1 GiB.
  BandwidthSweep s;
  s.points = {{1, 130}, {2, 105}, {4, 100}, {8, 92}, {16, 85}, {32, 64}, {64, 52}, {128, 46.8}};
  EXPECT_FALSE(sweep_reached_dram(&s));  // 52 is 11 % above 46.8
  s.points.push_back({256, 41.2});
  EXPECT_FALSE(sweep_reached_dram(&s));
  s.points.push_back({512, 36.9});
  EXPECT_FALSE(sweep_reached_dram(&s));
  s.points.push_back({1024, 35.7});
  EXPECT_FALSE(sweep_reached_dram(&s));  // one flat doubling; the sweep ends at 1 GiB all the same
  EXPECT_EQ(s.dram_mib, 1024);
  EXPECT_EQ(s.dram_gb_per_s, 35.7);
  s.points.push_back({2048, 35.2});
  EXPECT_TRUE(sweep_reached_dram(&s));
  // The same VM another minute: 64 and 128 MiB alone look flat, 256 does not.
  BandwidthSweep early;
  early.points = {{1, 130}, {2, 105}, {4, 100}, {8, 92}, {16, 85}, {32, 64}, {64, 44}, {128, 40.6}};
  EXPECT_FALSE(sweep_reached_dram(&early));
  // The VM: flat from 64 MiB, done at 256.
  BandwidthSweep flat;
  flat.points = {{1, 66}, {2, 64}, {4, 62}, {8, 61}, {16, 59}, {32, 33}, {64, 25}, {128, 24}};
  EXPECT_FALSE(sweep_reached_dram(&flat));
  flat.points.push_back({256, 23});
  EXPECT_TRUE(sweep_reached_dram(&flat));
  // Flat but still at cache speed (a 256 MiB cache): not yet.
  BandwidthSweep big;
  big.points = {{1, 90}, {2, 88}, {4, 86}, {8, 86}, {16, 85}, {32, 85}, {64, 84}, {128, 84}};
  EXPECT_FALSE(sweep_reached_dram(&big));
}

TEST(BandwidthSweep, PairedFractionIsTheMedianOverRunsOfTheirOwnMinute) {
  // 1 GB per token; run 0: 30 tokens in 1 s (30 GB/s) between probes of 36 and 34 (0.857);
  // run 1: 30 GB/s between 34 and 26 (1.0); run 2: 20 tokens in 1 s between 26 and 24 (0.8).
  const double fraction = paired_fraction(1e9, {30, 30, 20}, {1.0, 1.0, 1.0}, {36, 34, 26, 24});
  EXPECT_DOUBLE_EQ(fraction, 30.0 / 35.0);
  // An even count: the mean of the middle two; a run without passes or its second probe is left out.
  EXPECT_DOUBLE_EQ(paired_fraction(1e9, {30, 20, 0}, {1.0, 1.0, 1.0}, {30, 30, 20, 20}), (1.0 + 0.8) / 2);
  EXPECT_DOUBLE_EQ(paired_fraction(1e9, {30, 30}, {1.0, 1.0}, {30, 30}), 1.0);
  EXPECT_EQ(paired_fraction(1e9, {}, {}, {30}), 0.0);
}

TEST(BandwidthSweep, AProbeReadsItsBufferAgainAndAgain) {
  ReadProbe probe(2, 32);
  ASSERT_TRUE(probe.ok());
  EXPECT_GT(probe.gb_per_s(), 0);
  EXPECT_GT(probe.gb_per_s(1), 0);
  EXPECT_FALSE(ReadProbe(1, 16).ok());  // under 32 MiB: a cache's rate, not the memory's
}

TEST(BandwidthSweep, TheProbeSweepsPastTheKnee) {
  const BandwidthSweep s = sweep_read_bandwidth(1, 1);
  ASSERT_GE(s.points.size(), 8u);
  EXPECT_EQ(s.points.front().mib, 1);
  EXPECT_GE(s.dram_mib, 128);
  EXPECT_GE(s.dram_mib, 2 * s.knee_mib);
  for (const SweepPoint& p : s.points) EXPECT_GT(p.gb_per_s, 0) << p.mib;
}

}  // namespace
}  // namespace pocketlm::cli
