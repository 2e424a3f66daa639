#include "executor/response_cache.h"

#include <algorithm>

namespace autotune::executor {

ResponseCache::ResponseCache(int capacity) : capacity_(capacity < 0 ? 0 : capacity) {}

int ResponseCache::SlotOf(int tensor) const {
  auto it = slot_of_.find(tensor);
  return it == slot_of_.end() ? -1 : it->second.slot;
}

int ResponseCache::Put(int tensor) {
  if (capacity_ == 0) return -1;
  if (Contains(tensor)) {
    Touch(tensor);
    return -1;
  }
  int evicted = -1, slot;
  if (size() < capacity_) {
    slot = static_cast<int>(tensor_in_slot_.size());
    tensor_in_slot_.push_back(tensor);
  } else {
    evicted = lru_.back();
    lru_.pop_back();
    slot = slot_of_[evicted].slot;
    slot_of_.erase(evicted);
    tensor_in_slot_[slot] = tensor;
  }
  lru_.push_front(tensor);
  slot_of_[tensor] = Entry{slot, lru_.begin()};
  return evicted;
}

void ResponseCache::Touch(int tensor) {
  Entry& e = slot_of_.at(tensor);
  lru_.splice(lru_.begin(), lru_, e.pos);
  e.pos = lru_.begin();
}

std::vector<uint64_t> ResponseCache::Bits(std::span<const int> tensors, bool flag) const {
  std::vector<uint64_t> bits(words(), 0);
  if (flag) bits[0] |= 1u;
  for (int t : tensors) {
    const int slot = SlotOf(t);
    if (slot < 0) continue;
    const int bit = slot + 1;
    bits[bit / 64] |= uint64_t{1} << (bit % 64);
  }
  return bits;
}

std::vector<int> ResponseCache::TensorsIn(std::span<const uint64_t> bits) const {
  std::vector<int> out;
  for (int slot = 0; slot < static_cast<int>(tensor_in_slot_.size()); ++slot) {
    const int bit = slot + 1;
    if (bit / 64 < static_cast<int>(bits.size()) && (bits[bit / 64] >> (bit % 64)) & 1u) {
      out.push_back(tensor_in_slot_[slot]);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace autotune::executor
