// What every registry entry says about itself, beside its Config: the entry is self-describing,
// so the registry (core/registry.h) is a type list (core/dispatch.h) and adding an algorithm is
// its file plus one entry in that list.
#pragma once

#include "core/common.h"

namespace symm {

// What kind of thing an entry is. Device programs are block-level kernels written in the verbs
// (core/verbs.h); host plans (per-rank stream programs: copy engines, flags, events, GEMM) are
// listed beside them under the same names and checks; fused plans are host plans over matrices
// (a matmul fused with a collective, core/fused.h: FusedArgs, not PlanArgs). Each kind has its
// type list and its dispatch in core/dispatch.h (with_program, with_plan, with_fused_plan).
enum class EntryKind : int { kDeviceProgram = 0, kHostPlan = 1, kFusedPlan = 2 };

struct Descriptor {
  EntryKind kind = EntryKind::kDeviceProgram;
  Op op = Op::kAllReduce;
  const char* name = "";              // the id's suffix, after the program's phases: "rs_ld_ag_st"
  const char* alias = "";             // the friendly name: "two_shot"
  const char* summary = "";           // one line for `symmcoll list`
  bool needs_multicast = false;       // NVLS: refused where multicast is off (check_args, backends)
  FusedOp fused_op = FusedOp::kAgMm;  // kFusedPlan: the operation, the id's prefix ("mm_rs"); op unused
  // kFusedPlan: one of its kernels spins on flags that its peers' copy-engine streams write, so the
  // peers' copies must run beside that kernel (no CUDA graph where ranks share a GPU; the CUDA
  // executor's stream waits stay stream memory operations there: backends/cuda/plan_exec.h).
  bool kernel_spins_on_copies = false;
};

}  // namespace symm
