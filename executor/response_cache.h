// ResponseCache: Horovod's response cache. Tensors negotiated before are remembered in
// numbered slots (at most `capacity`, least recently used evicted beyond that); a ready
// tensor that is cached is agreed by one bitwise-AND allreduce of a bit-vector (bit per
// slot) instead of going through the coordinator.
//
// Every rank applies the same Put/Touch sequence (from the agreed responses), so slot
// numbers mean the same tensor on every rank. Pure bookkeeping: no MPI.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace autotune::executor {

class ResponseCache {
 public:
  // capacity 0 = cache off (nothing is ever cached).
  explicit ResponseCache(int capacity);

  int capacity() const { return capacity_; }
  int size() const { return static_cast<int>(slot_of_.size()); }
  bool Contains(int tensor) const { return slot_of_.count(tensor) > 0; }
  // Slot of a cached tensor, -1 if not cached.
  int SlotOf(int tensor) const;

  // Caches tensor as most recently used; when full, evicts the least recently used tensor
  // (returned, else -1) and reuses its slot. Touches an already cached tensor instead.
  int Put(int tensor);
  // Marks a cached tensor most recently used. REQUIRES: Contains(tensor).
  void Touch(int tensor);

  // Bit-vector words for capacity slots plus one leading flag bit (bit 0 of word 0).
  int words() const { return (capacity_ + 1 + 63) / 64; }
  // Sets the bit of every cached tensor among `tensors`; bit 0 set to `flag`.
  std::vector<uint64_t> Bits(std::span<const int> tensors, bool flag) const;
  // Tensors whose slot bits are set in bits (slot bits only), ascending tensor order.
  std::vector<int> TensorsIn(std::span<const uint64_t> bits) const;
  static bool Flag(std::span<const uint64_t> bits) { return !bits.empty() && (bits[0] & 1u); }

 private:
  int capacity_;
  std::list<int> lru_;  // front = most recently used tensor
  struct Entry {
    int slot;
    std::list<int>::iterator pos;
  };
  std::unordered_map<int, Entry> slot_of_;
  std::vector<int> tensor_in_slot_;  // -1 = free
};

}  // namespace autotune::executor
