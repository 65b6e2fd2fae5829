#!/usr/bin/env bash
# One GPU, 2 ranks in process: the mm_rs graph stall, third round (team_diag7/8: neither uploading
# the graphs first, nor joining only the side streams a call uses, nor one chain per graph ended
# it). Which graphs stall: calls per graph, first replay only, chunk count, shape; every rank
# prints its stuck wait (SYMM_DEBUG_ALL_STUCK), the bound is 12 s. -> team_diag9_<m>.log
#   scripts/gpu/team_diag9.sh <out-dir> <machine-name>
. "$(dirname "$0")/one_gpu_env.sh" "$@"
export SYMM_STREAM_TIMEOUT_S=12 SYMM_DEBUG_ALL_STUCK=1
SECONDS=0
LOG="$DIR/team_diag9_$M.log"
: > "$LOG"
B=".carry/symmcoll-cuda bench --backend cuda --world 2 --dtype bf16 --mode graph --no-baselines"
variant() {
  local name=$1; shift
  echo "### $name: args [$*]" >> "$LOG"
  timeout 30 $B "$@" >> "$LOG" 2>&1
  echo "### $name: rc $? at ${SECONDS}s" >> "$LOG"
}
variant calls1 --op mm_rs --algo ce --shape 8b --m 4096 --iters 5 --warmup 1 --calls 1
variant calls2 --op mm_rs --algo ce --shape 8b --m 4096 --iters 5 --warmup 1 --calls 2
variant calls20_once --op mm_rs --algo ce --shape 8b --m 4096 --iters 1 --warmup 0
variant chunks2 --op mm_rs --algo ce --shape 8b --m 4096 --iters 5 --warmup 1 --chunk-rows 1024
variant m8192 --op mm_rs --algo ce --shape 8b --m 8192 --iters 5 --warmup 1
variant m1024 --op mm_rs --algo ce --shape 8b --m 1024 --iters 5 --warmup 1
variant ce_acc_chunk2048 --op mm_rs --algo ce_acc --shape 8b --m 4096 --iters 5 --warmup 1 --chunk-rows 2048
grep -E "^###|stuck|error|^mm_rs" "$LOG"
