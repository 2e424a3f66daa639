#include "executor/negotiation.h"

#include <algorithm>
#include <string>

namespace autotune::executor {

MessageTable::MessageTable(int world_size, int num_tensors)
    : world_size_(world_size),
      num_tensors_(num_tensors),
      count_(num_tensors, 0),
      seen_(static_cast<size_t>(world_size) * num_tensors, 0) {}

Status MessageTable::Add(int rank, std::span<const int> tensors, std::vector<int>* complete) {
  for (int t : tensors) {
    if (t < 0 || t >= num_tensors_ || rank < 0 || rank >= world_size_) {
      return Status::Internal("negotiation: rank " + std::to_string(rank) + " requested tensor " +
                              std::to_string(t) + " of " + std::to_string(num_tensors_));
    }
    uint8_t& seen = seen_[static_cast<size_t>(rank) * num_tensors_ + t];
    if (seen) {
      return Status::Internal("negotiation: rank " + std::to_string(rank) + " requested tensor " +
                              std::to_string(t) + " twice in a step");
    }
    seen = 1;
    if (++count_[t] == world_size_) complete->push_back(t);
  }
  return Status::Ok();
}

void MessageTable::Reset() {
  std::fill(count_.begin(), count_.end(), 0);
  std::fill(seen_.begin(), seen_.end(), 0);
}

Negotiator::Negotiator(int num_tensors, int cache_capacity, ControlChannel* channel)
    : num_tensors_(num_tensors),
      channel_(channel),
      cache_(cache_capacity),
      table_(channel->size(), num_tensors) {}

void Negotiator::BeginStep() {
  cached_pending_.clear();
  unsent_.clear();
  sent_ = 0;
  table_.Reset();
}

Status Negotiator::Cycle(std::span<const int> newly_ready, CycleOutcome* out) {
  *out = CycleOutcome();
  for (int t : newly_ready) (cache_.Contains(t) ? cached_pending_ : unsent_).push_back(t);

  std::vector<int> hits;
  bool round = true;
  if (cache_.capacity() > 0) {
    std::vector<uint64_t> bits = cache_.Bits(cached_pending_, /*flag=*/unsent_.empty());
    AUTOTUNE_RETURN_IF_ERROR(channel_->AndBits(&bits));
    hits = cache_.TensorsIn(bits);
    round = !ResponseCache::Flag(bits);
    std::erase_if(cached_pending_,
                  [&](int t) { return std::binary_search(hits.begin(), hits.end(), t); });
  }

  std::vector<int> misses;
  if (round) {
    std::vector<std::vector<int>> all;
    AUTOTUNE_RETURN_IF_ERROR(channel_->GatherLists(unsent_, &all));
    if (channel_->rank() == 0) {
      for (int r = 0; r < static_cast<int>(all.size()); ++r) {
        AUTOTUNE_RETURN_IF_ERROR(table_.Add(r, all[r], &misses));
      }
      std::sort(misses.begin(), misses.end());
    }
    AUTOTUNE_RETURN_IF_ERROR(channel_->BroadcastList(&misses));
    sent_ += static_cast<int>(unsent_.size());
    unsent_.clear();
    sent_ -= static_cast<int>(misses.size());
    out->coordinated = true;
  }

  // The same cache updates on every rank, in the same order.
  for (int t : hits) cache_.Touch(t);
  for (int t : misses) {
    const int evicted = cache_.Put(t);
    if (evicted < 0) continue;
    // An evicted tensor still pending here can no longer be offered by its bit.
    auto it = std::find(cached_pending_.begin(), cached_pending_.end(), evicted);
    if (it != cached_pending_.end()) {
      cached_pending_.erase(it);
      unsent_.push_back(evicted);
    }
  }

  out->cache_hits = static_cast<int>(hits.size());
  out->responses.reserve(hits.size() + misses.size());
  std::merge(hits.begin(), hits.end(), misses.begin(), misses.end(),
             std::back_inserter(out->responses));
  return Status::Ok();
}

}  // namespace autotune::executor
