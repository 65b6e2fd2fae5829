#!/usr/bin/env bash
# The mm_rs tile programs' reduce task rows (MmRsTileLayout::kReduceRows, a compile-time constant):
# binaries built at each value, carried as .carry/symmcoll-cuda-r<rows>, checked (worlds W and 2, a
# team of 2W; bf16 and fp16; default bands and one-tile-row bands; 20 graph replays), then timed at
# world W and world 2 (GPUs 0, 1): tiles and tiles_push with their baselines, 70B and 8B at M 4096
# and 16384, graph and eager, 3 passes, the binaries in turn, twice.
#   ROWS="16 8 4" scripts/gpu/mmrs_rows.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
for r in ${ROWS:-16 8 4}; do
  X=.carry/symmcoll-cuda-r$r C="$DIR/check_r$r.log"; : > "$C"
  for opt in "--chunk-rows 0" "--chunk-rows 128"; do
    for w in $W 2; do
      echo "### world $w, $opt" >> "$C"
      timeout 60 env CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1))) $X launch -n $w -- $X bench --backend cuda --op mm_rs \
        --algo tiles,tiles_push --dtype bf16,fp16 --m 2048 --n 512 --k 1024 $opt --no-timing --replays 20 >> "$C" 2>&1
      echo "### rc $?" >> "$C"
    done
    echo "### team of $((2 * W)), $opt" >> "$C"
    timeout 60 $X bench --backend cuda --world $((2 * W)) --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 --m 2048 \
      --n 512 --k 1024 $opt --no-timing --replays 20 >> "$C" 2>&1
    echo "### rc $?" >> "$C"
  done
  echo "### world $W, 70b M 16384" >> "$C"
  timeout 60 $X launch -n $W -- $X bench --backend cuda --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b \
    --m 16384 --no-timing >> "$C" 2>&1
  echo "### rc $?" >> "$C"
  echo "# check r$r at ${SECONDS}s: $(grep -c '^### rc 0' "$C") ok, $(grep -c '^### rc [1-9]' "$C") failed, $(grep -ci fail "$C") FAIL lines"
done
for rep in 1 2; do
  for w in $W 2; do
    for r in ${ROWS:-16 8 4}; do
      X=.carry/symmcoll-cuda-r$r f="$DIR/time_${rep}_w${w}_r$r.log"
      timeout 150 env CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1))) $X launch -n $w -- $X bench --backend cuda --op mm_rs \
        --algo tiles,tiles_push --dtype bf16 --shape 70b,8b --m 4096,16384 --mode both --passes 3 --timing-only \
        --csv "$DIR/time_${rep}_w${w}_r$r.csv" > "$f" 2>&1
      echo "# rep $rep world $w r$r: rc $? at ${SECONDS}s"
      grep -E "^mm_rs +mm_rs.tile" "$f" | awk '{printf "    %-28s M %s N %s mode %s  %s\n", $2, $4, $5, $7, $8}'
    done
  done
done
