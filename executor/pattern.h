// Deterministic test data whose sums over ranks are exact in every dtype, and the checks
// of reduced and gathered results against it.
//
// value(rank, tensor, element) = ((7 * rank + 3 * tensor + element) mod 9) - 4, an integer
// in [-4, 4]; a sum over W ranks is an integer of magnitude <= 4 W, exact in float16 for
// W <= 512 and in every other dtype far beyond.
#pragma once

#include <cstdint>

#include "executor/backend.h"
#include "executor/tensor_memory.h"
#include "traces/status.h"
#include "traces/workload.h"

namespace autotune::executor {

int PatternValue(int rank, int tensor, int64_t element);
// Sum of PatternValue over ranks 0..world_size-1.
int64_t PatternSum(int world_size, int tensor, int64_t element);

// Writes this rank's pattern into every tensor's input.
Status FillInputs(Backend* backend, const Workload& w, int rank, TensorMemory* memory);
// Overwrites every output with a value no correct result can have (byte 0x7f), so a
// result that was never written is caught by VerifyOutputs.
Status PoisonOutputs(Backend* backend, TensorMemory* memory);
// Checks every output: allreduce = PatternSum, allgather block r = rank r's pattern.
// The first wrong value gives an error naming rank, tensor, element, expected and got.
Status VerifyOutputs(Backend* backend, const Workload& w, int rank, int world_size,
                     TensorMemory* memory);

}  // namespace autotune::executor
