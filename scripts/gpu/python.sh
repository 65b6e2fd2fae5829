#!/usr/bin/env bash
# The Python package's CUDA path on one GPU (the device tool), from the repository root; carried in
# .carry/: libsymmcoll.so and libboost_program_options.so.1.74.0 (the GPU machines have no Boost).
#   scripts/gpu/python.sh <out-dir>         -> python_<machine>.log
# torch_one_gpu.py at 2, 4 and 8 ranks on one GPU (symmcoll.CudaNode, bf16 tensors checked against
# torch's sum in float64), the simulator example and the package's tests. Multicast stays off.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.carry:/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=32 SYMMCOLL_LIBRARY=$PWD/.carry/libsymmcoll.so
DIR=${1:?usage: python.sh <out-dir>}
M=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -d ' ')
L=$DIR/python_$M.log; : > "$L"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$L"
python3 -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__)" >> "$L" 2>&1
for w in 2 4 8; do
  echo "### torch_one_gpu.py $w" >> "$L"
  timeout 120 python3 examples/python/torch_one_gpu.py $w >> "$L" 2>&1; echo "### rc $?" >> "$L"
done
echo "### sim_numpy.py --quick" >> "$L"
timeout 60 python3 examples/python/sim_numpy.py --quick >> "$L" 2>&1; echo "### rc $?" >> "$L"
echo "### tests/python/test_python_api.py" >> "$L"
SYMM_TEST_HAVE_GPU=1 timeout 60 python3 tests/python/test_python_api.py >> "$L" 2>&1; echo "### rc $?" >> "$L"
cat "$L"
# On a machine with 2 GPUs or more (kind nvidia-h200-x2): the process-group adoption under torchrun.
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
  echo "### torchrun --nproc_per_node 2 torch_process_group.py" >> "$L"
  CUDA_VISIBLE_DEVICES=0,1 timeout 180 torchrun --nproc_per_node 2 examples/python/torch_process_group.py >> "$L" 2>&1
  echo "### rc $?" >> "$L"
  tail -8 "$L"
fi
