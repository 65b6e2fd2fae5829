// reduce_scatter.ce_st_chunk_reduce ("ce_overlap"): the copy-engine reduce-scatter whose reduce
// of chunk k starts as soon as chunk k of every peer has landed, while the copy engines move
// the next chunks. The phases are those of reduce_scatter_ce_st_ring_reduce.h, overlapped.
#pragma once

#include "core/algos/reduce_scatter_ce_st_ring_reduce.h"

namespace symm {
using ReduceScatterCeStChunkReduce = ReduceScatterCeT<true>;
}  // namespace symm
