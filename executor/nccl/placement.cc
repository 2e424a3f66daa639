#include "executor/nccl/placement.h"

namespace autotune::executor {

DevicePlacement PlaceOnDevice(int machine_local_rank, int machine_local_size, int device_count,
                              const std::string& host, int world_rank, const char* user_host_id) {
  DevicePlacement p;
  p.device = machine_local_rank % device_count;
  p.shared = machine_local_size > device_count;
  const bool user_set = user_host_id != nullptr && *user_host_id != '\0';
  if (p.shared && !user_set) p.host_id = host + "#rank" + std::to_string(world_rank);
  return p;
}

NcclSplitKeys SplitKeysFor(const NodeLayout& layout) {
  NcclSplitKeys k;
  k.intra_color = layout.node;
  k.intra_key = layout.local_rank;
  k.cross_color = layout.local_rank;
  k.cross_key = layout.node;
  return k;
}

}  // namespace autotune::executor
