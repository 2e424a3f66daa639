// Element conversions for the executor's dtypes: IEEE half and bfloat16 to and from float
// (round to nearest even), and typed loads/stores through double for test data.
#pragma once

#include <cstdint>

#include "traces/workload.h"

namespace autotune::executor {

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float BFloat16ToFloat(uint16_t b);
uint16_t FloatToBFloat16(float f);

// Stores v (converted to dtype) at element index i of base / loads element i as a double.
void StoreElement(DType dtype, void* base, int64_t i, double v);
double LoadElement(DType dtype, const void* base, int64_t i);

}  // namespace autotune::executor
