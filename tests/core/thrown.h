// The message of the symm::Error a call throws ("" if it throws none), expecting `code`: the
// core tests' way of checking a refusal's one line.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/common.h"

namespace symm::testing {

inline std::string thrown(const std::function<void()>& f, ErrorCode code) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  return "";
}

}  // namespace symm::testing
