#!/usr/bin/env bash
# 2x H200, one device call: our fused bench and PyTorch's fused operations (torch.ops.symm_mem) at
# the same shapes, in the same call, so the "faster than torch's fused op" targets compare like
# with like; then mm_rs in eager mode over --streams (the eager target); then in-process teams
# spread over both GPUs (world 4: two ranks per GPU, peers across NVLink through peer access).
#   scripts/gpu/fused_torch.sh <out-dir>
#   -> fused_<sha>_h200x2.csv/.log, torch_fused_h200x2.csv/.log, mmrs_eager_h200x2.log,
#      team2gpu_h200x2.log
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=0,1
DIR=${1:?usage: scripts/gpu/fused_torch.sh <out-dir>}
BIN=.carry/symmcoll-cuda
SHA=$($BIN --version 2>/dev/null | awk '{print substr($2, 1, 7)}')
SHA=${SHA:-$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)}
B="$BIN launch -n 2 -- $BIN bench --backend cuda"
SECONDS=0
timeout 240 $B --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b --m 4096,16384 --mode both \
  --csv "$DIR/fused_${SHA}_h200x2.csv" > "$DIR/fused_${SHA}_h200x2.log" 2>&1
echo "# fused bench: rc $? at ${SECONDS}s"
grep -E "FAIL|error" "$DIR/fused_${SHA}_h200x2.log" | head -5
python3 -c "import torch; print('# torch', torch.__version__)"
timeout 240 torchrun --nproc-per-node 2 scripts/gpu/torch_fused.py --out "$DIR/torch_fused_h200x2.csv" \
  --machine h200x2 > "$DIR/torch_fused_h200x2.log" 2>&1
echo "# torch fused: rc $? at ${SECONDS}s"
grep -E "^(ag_mm|mm_rs)|not measured|Error" "$DIR/torch_fused_h200x2.log" | head -40
L="$DIR/mmrs_eager_h200x2.log"; : > "$L"
for st in 2 4; do
  for algo in ce ce_acc; do
    echo "# knobs: streams $st algo $algo" >> "$L"
    timeout 60 $B --op mm_rs --algo $algo --shape 70b --m 16384 --mode eager --timing-only --streams $st >> "$L" 2>&1
  done
done
echo "# mm_rs eager sweep at ${SECONDS}s"; grep -E "^# knobs|^mm_rs" "$L"
L="$DIR/team2gpu_h200x2.log"; : > "$L"
for w in 4 3; do
  echo "### world $w on 2 GPUs: collectives, checked, 100 graph replays" >> "$L"
  timeout 90 $BIN bench --backend cuda --world $w --op all_reduce,reduce_scatter,all_gather --algo all --dtype bf16,fp32 \
    --sizes 16K,1M --no-timing --replays 100 >> "$L" 2>&1; echo "### rc $?" >> "$L"
  echo "### world $w on 2 GPUs: fused, checked, 100 graph replays" >> "$L"
  timeout 90 $BIN bench --backend cuda --world $w --op ag_mm,mm_rs --algo all --dtype bf16 --m $((128 * w)) --n 256 --k 512 \
    --no-timing --replays 100 >> "$L" 2>&1; echo "### rc $?" >> "$L"
done
echo "### world 4 on 2 GPUs: bench 4K..64M" >> "$L"
timeout 120 $BIN bench --backend cuda --world 4 --op all_reduce,reduce_scatter,all_gather --algo all --dtype bf16 \
  --sizes 4K:64M:x16 --mode graph --iters 10 --warmup 2 --csv "$DIR/team2gpu_w4_h200x2.csv" >> "$L" 2>&1; echo "### rc $?" >> "$L"
echo "# teams on 2 GPUs at ${SECONDS}s"; grep -E "^###|FAIL|error" "$L" | head -20
