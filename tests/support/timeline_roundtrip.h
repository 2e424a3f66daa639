// The Horovod-timeline round trip's check, shared by the traces test (hand-made traces) and
// the tools test (a run the executor recorded): a trace imported back from its written
// timeline has the original's workload and, step by step, its collectives.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "traces/trace.h"

namespace autotune::testing {

// Member names of a collective, sorted (the order inside a fused buffer is not compared).
inline std::vector<std::string> MemberNames(const Workload& w, const CollectiveRecord& c) {
  std::vector<std::string> names;
  for (int t : c.tensors) names.push_back(w.tensors.at(t).name);
  std::sort(names.begin(), names.end());
  return names;
}

// Workload: names, shapes, dtypes and ops in the same order. Per step: the collectives in
// start order with the same ops, members and bytes (fusion-buffer bytes, as recorded).
inline void ExpectSameWorkloadAndCollectives(const Trace& original, const Trace& imported) {
  const Workload& a = original.run.workload;
  const Workload& b = imported.run.workload;
  ASSERT_EQ(b.tensors.size(), a.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(b.tensors[i].name, a.tensors[i].name) << "tensor " << i;
    EXPECT_EQ(b.tensors[i].shape, a.tensors[i].shape) << a.tensors[i].name;
    EXPECT_EQ(b.tensors[i].dtype, a.tensors[i].dtype) << a.tensors[i].name;
    EXPECT_EQ(b.tensors[i].op, a.tensors[i].op) << a.tensors[i].name;
  }
  ASSERT_EQ(imported.steps.size(), original.steps.size());
  for (size_t s = 0; s < original.steps.size(); ++s) {
    std::vector<CollectiveRecord> want = original.steps[s].collectives;
    std::vector<CollectiveRecord> got = imported.steps[s].collectives;
    auto by_start = [](const CollectiveRecord& x, const CollectiveRecord& y) {
      return x.start_us < y.start_us;
    };
    std::stable_sort(want.begin(), want.end(), by_start);
    std::stable_sort(got.begin(), got.end(), by_start);
    ASSERT_EQ(got.size(), want.size()) << "step " << s;
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(got[k].op, want[k].op) << "step " << s << " collective " << k;
      EXPECT_EQ(MemberNames(b, got[k]), MemberNames(a, want[k]))
          << "step " << s << " collective " << k;
      EXPECT_EQ(got[k].bytes, want[k].bytes) << "step " << s << " collective " << k;
    }
  }
}

}  // namespace autotune::testing
