set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUDA_VISIBLE_DEVICES=0
B=.carry/symmcoll-cuda
for c in 2 1; do for sms in 132 66 32; do
 $B gemm-bench --shapes 16384,3584,4096 --dtype bf16 --schedule coop --cluster $c --sms $sms --iters 20 --warmup 5 --timing-only --mode graph --impl tile | grep -v "^#\|dtype"
done; done
