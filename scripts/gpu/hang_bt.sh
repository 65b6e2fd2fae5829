#!/usr/bin/env bash
# Diagnosis: where a rank waiting on a peer that never calls the fused mm_rs tile program sits (gdb backtraces of both
# ranks 12 s in, eager and graph). scripts/gpu/hang_bt.sh (writes under $OUT)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p .carry $OUT && xz -dc .carry/z/new.xz > .carry/symmcoll-cuda && chmod +x .carry/symmcoll-cuda
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=$PWD/.carry/symmcoll-cuda
which gdb eu-stack pstack > $OUT/tools.txt 2>&1
for mode in eager graph; do
CUDA_VISIBLE_DEVICES=0,1 SYMM_WAIT_TIMEOUT_S=2 SYMM_TEST_RANK_SKIP=1 timeout 40 $B launch -n 2 -- $B bench --backend cuda --no-baselines --timing-only --iters 3 --warmup 1 --dtype bf16 --m 2048 --n 512 --k 1024 --op mm_rs --algo tiles --mode $mode --plan-timeout 2 > $OUT/h_$mode.log 2>&1 &
sleep 12
for p in $(pgrep -f "bench --backend cuda --no-baselines"); do
  echo "== pid $p $(tr '\0' '\n' < /proc/$p/environ | grep -E 'RANK' | tr '\n' ' ')"
  for t in /proc/$p/task/*; do echo "$t $(cat $t/wchan 2>/dev/null) $(cat $t/comm)"; done | head -20
  command -v gdb >/dev/null && timeout 30 gdb -p $p -batch -ex "thread apply all bt 15" 2>&1 | grep -E "^#|^Thread" | head -80
done > $OUT/bt_$mode.txt 2>&1
wait
done
tail -n 5 $OUT/h_*.log; cat $OUT/tools.txt; head -120 $OUT/bt_eager.txt
