#include "core/common.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

namespace symm {
namespace {

template <class E, std::size_t N>
E parse_enum(const std::string& s, const char* const (&names)[N], const char* what) {
  for (std::size_t i = 0; i < N; ++i)
    if (s == names[i]) return static_cast<E>(i);
  std::string valid;
  for (std::size_t i = 0; i < N; ++i) valid += (i ? ", " : "") + std::string(names[i]);
  fail(ErrorCode::kInvalidArgument, "unknown " + std::string(what) + " '" + s + "' (valid: " + valid + ")");
}

const char* const kDTypeNames[] = {"bf16", "fp16", "fp32"};
const char* const kOpNames[] = {"all_reduce", "reduce_scatter", "all_gather", "barrier"};
const char* const kReduceOpNames[] = {"sum", "max", "min"};
const char* const kOrderNames[] = {"relaxed", "release", "acquire"};

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

const char* dtype_name(DType t) { return kDTypeNames[int(t)]; }
DType parse_dtype(const std::string& s) { return parse_enum<DType>(s, kDTypeNames, "dtype"); }
const char* op_name(Op op) { return kOpNames[int(op)]; }
Op parse_op(const std::string& s) { return parse_enum<Op>(s, kOpNames, "op"); }
const char* reduce_op_name(ReduceOp op) { return kReduceOpNames[int(op)]; }
ReduceOp parse_reduce_op(const std::string& s) { return parse_enum<ReduceOp>(s, kReduceOpNames, "reduce op"); }
const char* order_name(MemOrder o) {
  return int(o) >= 0 && int(o) < int(std::size(kOrderNames)) ? kOrderNames[int(o)] : "invalid";
}

float to_float(bf16 v) { return float_of(uint32_t(v.bits) << 16); }

template <>
bf16 from_float<bf16>(float f) {
  uint32_t u = bits_of(f);
  if (std::isnan(f)) return bf16{uint16_t((u >> 16) | 0x40)};
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even
  return bf16{uint16_t(u >> 16)};
}

float to_float(fp16 v) {
  const uint32_t sign = uint32_t(v.bits & 0x8000) << 16;
  uint32_t exp = (v.bits >> 10) & 0x1F, man = v.bits & 0x3FF;
  if (exp == 0x1F) return float_of(sign | 0x7F800000 | (man << 13));  // inf / nan
  if (exp == 0) {
    if (man == 0) return float_of(sign);
    // subnormal: value = man * 2^-24
    float f = std::ldexp(float(man), -24);
    return sign ? -f : f;
  }
  return float_of(sign | ((exp + 112) << 23) | (man << 13));
}

template <>
fp16 from_float<fp16>(float f) {
  const uint32_t u = bits_of(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000);
  if (std::isnan(f)) return fp16{uint16_t(sign | 0x7E00)};
  const float a = std::fabs(f);
  if (a >= 65520.0f) return fp16{uint16_t(sign | 0x7C00)};  // rounds to inf
  if (a < std::ldexp(1.0f, -14)) {
    // subnormal range: quantum 2^-24, round half to even via nearbyint
    const float q = std::nearbyint(a * 16777216.0f);
    return fp16{uint16_t(sign | uint16_t(q))};
  }
  uint32_t exp = ((u >> 23) & 0xFF) - 112, man = u & 0x7FFFFF;
  uint32_t h = (exp << 10) | (man >> 13);
  const uint32_t rest = man & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // may carry into the exponent
  return fp16{uint16_t(sign | h)};
}

std::size_t parse_size(const std::string& s) {
  auto bad = [&](const char* why) {
    fail(ErrorCode::kInvalidArgument, "malformed size '" + s + "': " + why + " (examples: 4096, 4K, 1M, 256M, 1G)");
  };
  if (s.empty()) bad("empty");
  std::size_t i = 0;
  unsigned long long v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (v > (std::numeric_limits<unsigned long long>::max() - 9) / 10) bad("too large");
    v = v * 10 + unsigned(s[i] - '0');
    ++i;
  }
  if (i == 0) bad("must start with a number");
  if (i < s.size() && s[i] == '.') {
    // "1.5M": say what it is in whole bytes, when it is whole.
    std::size_t j = i + 1;
    unsigned long long frac = 0, scale = 1;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9' && scale < 1000000000ull)
      frac = frac * 10 + unsigned(s[j++] - '0'), scale *= 10;
    const char c = j < s.size() ? char(s[j] | 0x20) : 0;
    const unsigned sh = c == 'k' ? 10 : c == 'm' ? 20 : c == 'g' ? 30 : 0;
    std::string as;
    if (v < (1ull << 33) && ((frac << sh) % scale) == 0)
      as = " (" + s.substr(0, j + (sh ? 1 : 0)) + " is " + format_size(std::size_t((v << sh) + (frac << sh) / scale)) +
           ")";
    fail(ErrorCode::kInvalidArgument, "malformed size '" + s + "': sizes are whole numbers of bytes" + as);
  }
  unsigned shift = 0;
  if (i < s.size()) {
    switch (s[i]) {
      case 'K':
      case 'k': shift = 10; break;
      case 'M':
      case 'm': shift = 20; break;
      case 'G':
      case 'g': shift = 30; break;
      default: bad("unknown suffix");
    }
    ++i;
    if (i < s.size() && (s[i] == 'B' || s[i] == 'b' || s[i] == 'i')) ++i;
    if (i < s.size() && s[i - 1] == 'i' && (s[i] == 'B' || s[i] == 'b')) ++i;
    if (i != s.size()) bad("trailing characters");
  }
  if (shift && v > (std::numeric_limits<unsigned long long>::max() >> shift)) bad("too large");
  return std::size_t(v << shift);
}

std::string format_size(std::size_t bytes) {
  const char* suffix[] = {"G", "M", "K"};
  const unsigned shifts[] = {30, 20, 10};
  for (int i = 0; i < 3; ++i)
    if (bytes >= (std::size_t(1) << shifts[i]) && bytes % (std::size_t(1) << shifts[i]) == 0)
      return std::to_string(bytes >> shifts[i]) + suffix[i];
  return std::to_string(bytes);
}

}  // namespace symm
