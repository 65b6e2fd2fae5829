#include "core/sizes.h"

#include "core/common.h"

namespace symm {

std::vector<std::size_t> parse_size_list(const std::string& spec) {
  auto bad = [&](const std::string& why) {
    fail(ErrorCode::kInvalidArgument,
         "bad size list '" + spec + "': " + why + " (forms: 4K:256M, 4K:256M:x4, 16K,64K,1M)");
  };
  auto size = [&](const std::string& part) {
    if (part.empty()) bad("empty element");
    const std::size_t s = parse_size(part);
    if (s == 0) bad("sizes must be above 0");
    return s;
  };
  if (spec.empty()) bad("empty");

  std::vector<std::string> parts;
  const char sep = spec.find(':') == std::string::npos ? ',' : ':';
  for (std::size_t start = 0;;) {
    const std::size_t end = spec.find(sep, start);
    parts.push_back(spec.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  std::vector<std::size_t> sizes;
  if (sep == ',') {
    for (const std::string& part : parts) {
      const std::size_t s = size(part);
      // A size named twice would run (and be written) twice.
      for (std::size_t k = 0; k < sizes.size(); ++k)
        if (sizes[k] == s) bad(part + " appears twice");
      sizes.push_back(s);
    }
    return sizes;
  }

  if (parts.size() > 3) bad("too many ':'");
  if (parts[0].find(',') != std::string::npos || parts[1].find(',') != std::string::npos)
    bad("a range and a list cannot be mixed");
  const std::size_t lo = size(parts[0]), hi = size(parts[1]);
  std::size_t factor = 2;
  if (parts.size() == 3) {
    const std::string& f = parts[2];
    // At most 4 digits: the value is checked below and never overflows.
    if (f.size() < 2 || f.size() > 5 || (f[0] != 'x' && f[0] != 'X')) bad("the step must look like x2 or x4");
    factor = 0;
    for (std::size_t i = 1; i < f.size(); ++i) {
      if (f[i] < '0' || f[i] > '9') bad("the step must look like x2 or x4");
      factor = factor * 10 + std::size_t(f[i] - '0');
    }
    if (factor < 2 || factor > 1024) bad("the step factor must be 2..1024");
  }
  if (lo > hi) bad("start is larger than end");
  // s * factor <= hi exactly when s <= hi / factor (integer division): the loop stops before
  // a step that would exceed hi, so it never multiplies past SIZE_MAX.
  for (std::size_t s = lo;; s *= factor) {
    sizes.push_back(s);
    if (s > hi / factor) break;
  }
  return sizes;
}

}  // namespace symm
