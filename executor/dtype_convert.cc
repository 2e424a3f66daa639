#include "executor/dtype_convert.h"

#include <cmath>
#include <cstring>

namespace autotune::executor {

namespace {

uint32_t FloatBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  return x;
}

float BitsFloat(uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
}

}  // namespace

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float magnitude = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal
    return sign ? -magnitude : magnitude;
  }
  if (exp == 31) return BitsFloat(sign | 0x7f800000u | (mant << 13));  // inf / nan
  return BitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t FloatToHalf(float f) {
  const uint32_t x = FloatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // nan
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xffu) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (exp <= 0) {                                               // subnormal or zero
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // carry may reach inf
  return static_cast<uint16_t>(sign | half);
}

float BFloat16ToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

uint16_t FloatToBFloat16(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

void StoreElement(DType dtype, void* base, int64_t i, double v) {
  switch (dtype) {
    case DType::kFloat32:
      static_cast<float*>(base)[i] = static_cast<float>(v);
      return;
    case DType::kFloat64:
      static_cast<double*>(base)[i] = v;
      return;
    case DType::kFloat16:
      static_cast<uint16_t*>(base)[i] = FloatToHalf(static_cast<float>(v));
      return;
    case DType::kBFloat16:
      static_cast<uint16_t*>(base)[i] = FloatToBFloat16(static_cast<float>(v));
      return;
    case DType::kInt32:
      static_cast<int32_t*>(base)[i] = static_cast<int32_t>(v);
      return;
    case DType::kInt64:
      static_cast<int64_t*>(base)[i] = static_cast<int64_t>(v);
      return;
  }
}

double LoadElement(DType dtype, const void* base, int64_t i) {
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<const float*>(base)[i];
    case DType::kFloat64:
      return static_cast<const double*>(base)[i];
    case DType::kFloat16:
      return HalfToFloat(static_cast<const uint16_t*>(base)[i]);
    case DType::kBFloat16:
      return BFloat16ToFloat(static_cast<const uint16_t*>(base)[i]);
    case DType::kInt32:
      return static_cast<const int32_t*>(base)[i];
    case DType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(base)[i]);
  }
  return 0.0;
}

}  // namespace autotune::executor
