// Negotiation: which tensors are ready on every rank, agreed once per background cycle
// (Horovod's controller). Tensors seen before (in the response cache) are agreed with one
// bitwise-AND allreduce of the cache bit-vector; the others go to the coordinator (rank 0),
// which gathers every rank's new requests, counts them across cycles in its message
// table, and broadcasts the tensors every rank has now requested.
//
// The coordinator round is skipped in a cycle where no rank has an unreported, uncached
// tensor (the flag bit of the AND says so); with the cache off it runs every cycle.
// The transport is a ControlChannel, so the bookkeeping is testable without MPI.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "executor/response_cache.h"
#include "traces/status.h"

namespace autotune::executor {

// The collectives negotiation needs; every rank calls them in the same order.
class ControlChannel {
 public:
  virtual ~ControlChannel() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place: every word becomes the bitwise AND of that word over the ranks.
  virtual Status AndBits(std::vector<uint64_t>* bits) = 0;
  // At rank 0, (*all)[r] = rank r's list; elsewhere *all is left empty.
  virtual Status GatherLists(std::span<const int> mine, std::vector<std::vector<int>>* all) = 0;
  // Rank 0's *list replaces *list on every rank.
  virtual Status BroadcastList(std::vector<int>* list) = 0;
};

// The coordinator's count of requests per tensor within one step.
class MessageTable {
 public:
  MessageTable(int world_size, int num_tensors);
  // Records rank's requests; appends to *complete the tensors that every rank has now
  // requested. A tensor index out of range or requested twice by one rank is an error.
  Status Add(int rank, std::span<const int> tensors, std::vector<int>* complete);
  void Reset();

 private:
  int world_size_, num_tensors_;
  std::vector<int> count_;
  std::vector<uint8_t> seen_;  // [rank * num_tensors + tensor]
};

struct CycleOutcome {
  std::vector<int> responses;  // agreed ready on every rank this cycle, ascending
  int cache_hits = 0;          // of which agreed through the cache bit-vector
  bool coordinated = false;    // a coordinator round ran this cycle
};

class Negotiator {
 public:
  // cache_capacity 0 = response cache off. channel must outlive the negotiator.
  Negotiator(int num_tensors, int cache_capacity, ControlChannel* channel);

  // Starts a step: forgets pending requests and the coordinator's table; the cache stays.
  void BeginStep();
  // One cycle on every rank: offers the tensors that became ready here since the last
  // cycle, returns what is now agreed.
  Status Cycle(std::span<const int> newly_ready, CycleOutcome* out);

  const ResponseCache& cache() const { return cache_; }
  // Tensors offered here and not yet agreed.
  int pending() const { return static_cast<int>(cached_pending_.size() + unsent_.size()) + sent_; }

 private:
  int num_tensors_;
  ControlChannel* channel_;
  ResponseCache cache_;
  MessageTable table_;               // used at rank 0 only
  std::vector<int> cached_pending_;  // ready here and cached: offered through the bits
  std::vector<int> unsent_;          // ready here, uncached, not yet sent to the coordinator
  int sent_ = 0;                     // sent to the coordinator, not yet agreed
};

}  // namespace autotune::executor
