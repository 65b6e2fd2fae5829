// symmcoll_cuda: the CUDA sub-commands alone (bench, launch), for device runs that should not
// carry the simulator. Same entry points and error handling as `symmcoll`.
#include <boost/program_options/errors.hpp>
#include <cstdio>
#include <string>

#include "apps/cmd_cuda.h"
#include "core/common.h"

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "bench") return symm::apps::cmd_bench_cuda(argc - 1, argv + 1);
    if (cmd == "launch") return symm::apps::cmd_launch(argc - 1, argv + 1);
    if (cmd == "gemm-bench") return symm::apps::cmd_gemm_bench_cuda(argc - 1, argv + 1);
    std::fprintf(stderr, "usage: symmcoll_cuda bench|launch|gemm-bench ...\n");
    return 2;
  } catch (const symm::Error& e) {
    std::fprintf(stderr, "symmcoll: error: %s\n", e.what());
    const auto c = e.code();
    return c == symm::ErrorCode::kInvalidArgument || c == symm::ErrorCode::kUnsupported || c == symm::ErrorCode::kIo
               ? 2
               : 1;
  } catch (const boost::program_options::error& e) {
    std::fprintf(stderr, "symmcoll: error: %s\n", e.what());
    return 2;
  }
}
