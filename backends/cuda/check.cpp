#include "backends/cuda/check.h"

namespace symm::cuda {

void throw_call_failed(const char* call, const char* where, int code, const char* text) {
  fail(ErrorCode::kCuda,
       std::string(call) + " failed at " + where + ": code " + std::to_string(code) + " (" + (text ? text : "?") + ")");
}

}  // namespace symm::cuda
