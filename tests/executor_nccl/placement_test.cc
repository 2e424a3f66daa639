// GPU choice, NCCL_HOSTID and the ncclCommSplit arithmetic of the hierarchical
// communicators, checked against the MPI layout they must reproduce.
#include "executor/nccl/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace autotune::executor {
namespace {

TEST(Placement, RanksOnOneGpuGetTheirOwnHostId) {
  for (int r = 0; r < 4; ++r) {
    const DevicePlacement p = PlaceOnDevice(r, 4, 1, "gpu1", 10 + r, nullptr);
    EXPECT_EQ(p.device, 0);
    EXPECT_TRUE(p.shared);
    EXPECT_EQ(p.host_id, "gpu1#rank" + std::to_string(10 + r));
  }
}

TEST(Placement, OneRankPerGpuLeavesTheHostIdAlone) {
  for (int r = 0; r < 4; ++r) {
    const DevicePlacement p = PlaceOnDevice(r, 4, 8, "gpu1", r, nullptr);
    EXPECT_EQ(p.device, r);
    EXPECT_FALSE(p.shared);
    EXPECT_EQ(p.host_id, "");
  }
}

TEST(Placement, MoreRanksThanGpusShareRoundRobin) {
  std::vector<int> devices;
  for (int r = 0; r < 4; ++r) devices.push_back(PlaceOnDevice(r, 4, 2, "h", r, "").device);
  EXPECT_EQ(devices, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_FALSE(PlaceOnDevice(0, 4, 2, "h", 0, "").host_id.empty());  // "" = unset
}

TEST(Placement, AUsersHostIdWins) {
  const DevicePlacement p = PlaceOnDevice(1, 2, 1, "h", 1, "mine");
  EXPECT_TRUE(p.shared);
  EXPECT_EQ(p.host_id, "");
}

// The layout of every world rank for nodes x local ranks, by node ("block", mpirun's
// default) or dealt round-robin ("cyclic"), as executor/layout.cc detects it.
std::vector<NodeLayout> Layouts(int nodes, int local_size, bool cyclic) {
  const int size = nodes * local_size;
  std::vector<NodeLayout> all(size);
  std::vector<int> world_rank_of(size);
  for (int r = 0; r < size; ++r) {
    NodeLayout& l = all[r];
    l.rank = r;
    l.size = size;
    l.nodes = nodes;
    l.local_size = local_size;
    l.node = cyclic ? r % nodes : r / local_size;
    l.local_rank = cyclic ? r / nodes : r % local_size;
    world_rank_of[l.node * local_size + l.local_rank] = r;
  }
  for (NodeLayout& l : all) l.world_rank_of = world_rank_of;
  return all;
}

// ncclCommSplit's semantics: ranks with one color form a communicator, ranked by key (ties
// by parent rank). Returns each world rank's (communicator id = color, rank in it, size).
struct Member {
  int color, rank, size;
};
std::vector<Member> Split(const std::vector<std::pair<int, int>>& color_key) {
  std::map<int, std::vector<std::pair<int, int>>> groups;  // color -> (key, parent rank)
  for (int r = 0; r < static_cast<int>(color_key.size()); ++r) {
    groups[color_key[r].first].push_back({color_key[r].second, r});
  }
  std::vector<Member> out(color_key.size());
  for (auto& [color, members] : groups) {
    std::sort(members.begin(), members.end());
    for (int i = 0; i < static_cast<int>(members.size()); ++i) {
      out[members[i].second] = {color, i, static_cast<int>(members.size())};
    }
  }
  return out;
}

class SplitKeys : public ::testing::TestWithParam<std::tuple<int, int, bool>> {};

TEST_P(SplitKeys, ReproduceTheMpiLayout) {
  const auto [nodes, local_size, cyclic] = GetParam();
  const std::vector<NodeLayout> layouts = Layouts(nodes, local_size, cyclic);
  std::vector<std::pair<int, int>> intra, cross;
  for (const NodeLayout& l : layouts) {
    const NcclSplitKeys k = SplitKeysFor(l);
    intra.push_back({k.intra_color, k.intra_key});
    cross.push_back({k.cross_color, k.cross_key});
  }
  const std::vector<Member> intra_comm = Split(intra), cross_comm = Split(cross);
  for (const NodeLayout& l : layouts) {
    const int r = l.rank;
    // Intra: the ranks of this node, ranked by local rank.
    EXPECT_EQ(intra_comm[r].size, local_size);
    EXPECT_EQ(intra_comm[r].rank, l.local_rank);
    // Cross: one rank per node, all with this local rank, ranked by node.
    EXPECT_EQ(cross_comm[r].size, nodes);
    EXPECT_EQ(cross_comm[r].rank, l.node);
    for (const NodeLayout& o : layouts) {
      EXPECT_EQ(intra_comm[o.rank].color == intra_comm[r].color, o.node == l.node);
      EXPECT_EQ(cross_comm[o.rank].color == cross_comm[r].color, o.local_rank == l.local_rank);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, SplitKeys,
    ::testing::Values(std::make_tuple(1, 1, false), std::make_tuple(1, 4, false),
                      std::make_tuple(4, 1, false), std::make_tuple(2, 2, false),
                      std::make_tuple(2, 2, true), std::make_tuple(3, 4, false),
                      std::make_tuple(3, 4, true)));

}  // namespace
}  // namespace autotune::executor
