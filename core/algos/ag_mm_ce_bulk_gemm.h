// ag_mm.ce_bulk_gemm ("ce_bulk"): the copy-engine all-gather + matmul whose peer GEMMs cover a
// peer's whole shard, started once every chunk flag of that peer has come. The phases are those
// of ag_mm_ce_chunk_gemm.h with step 4 as one wait-all-chunks + one GEMM per peer (rank-rotated).
#pragma once

#include "core/algos/ag_mm_ce_chunk_gemm.h"

namespace symm {
using AgMmCeBulkGemm = AgMmCeT<true>;
}  // namespace symm
