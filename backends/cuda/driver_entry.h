// A CUDA driver function by name, through the runtime (no link to libcuda): the stream memory
// operations the host plans' flags use (plan_exec.cpp) and calibrate's host_* rows probe.
#pragma once

namespace symm::cuda {

// The function's CUDA 12.0 version, e.g. driver_entry("cuStreamWriteValue32"); an error says the
// driver lacks it.
void* driver_entry(const char* name);

}  // namespace symm::cuda
