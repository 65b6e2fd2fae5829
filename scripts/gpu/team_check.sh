#!/usr/bin/env bash
# A short in-process team check on one GPU (the device tool), from the repository root, binary in
# .carry/: the fused plans' correctness at 4 and 8 ranks, the fused bench at 4 ranks and the
# collective bench at 4 and 8 ranks, each under its own bound; results and log under $OUT
# (experiments/results/h200x1/team/run8). Multicast stays off.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64 CUDA_VISIBLE_DEVICES=0
B=".carry/symmcoll-cuda bench --backend cuda"
L=$OUT/team2_h200x1.log; : > $L
for w in 4 8; do echo "### fused check world $w" >> $L; timeout 40 $B --world $w --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --n 512 --k 1024 --m $((64*w)),$((384*w)) --chunk-rows 32 --no-timing --replays 20 >> $L 2>&1; echo "### rc $?" >> $L; done
echo "### fused bench world 4" >> $L; timeout 60 $B --world 4 --op ag_mm,mm_rs --algo all --shape 8b,70b --m 4096,16384 --mode both --iters 5 --warmup 1 --machine h200x1 --csv $OUT/fused_team_w4_h200x1.csv >> $L 2>&1; echo "### rc $?" >> $L
echo "### bench world 4" >> $L; timeout 80 $B --world 4 --op all_reduce,reduce_scatter,all_gather --algo all --sizes 4K:64M:x4 --mode both --check-up-to 64M --iters 5 --warmup 1 --machine h200x1 --csv $OUT/bench_team_w4_h200x1.csv >> $L 2>&1; echo "### rc $?" >> $L
echo "### bench world 8" >> $L; timeout 60 $B --world 8 --op all_reduce,reduce_scatter,all_gather --algo all --sizes 4K:16M:x4 --mode both --check-up-to 16M --iters 5 --warmup 1 --machine h200x1 --csv $OUT/bench_team_w8_h200x1.csv >> $L 2>&1; echo "### rc $?" >> $L
grep -E "^###|FAIL|error|check failure|skip ag_mm" $L
