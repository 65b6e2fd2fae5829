#!/usr/bin/env bash
# Where the mm_rs tile programs' reduce costs at world W (timing only, results unchecked except the
# program's own: the diagnosis modes of SYMM_DEBUG_MMRS_TILES, backends/cuda/tile_fused.cu). Each
# configuration in turn, twice, tiles and tiles_push, 70B and 8B M 16384, graph and eager, 3 passes a call:
#   program       the program (default bands)            no-reduce    signals, no reduce at all
#   compute-only  no reduce, no signals                   no-tail      without the last band's reduce
#   no-side       without the earlier bands' reduce (the side lanes'), the last band's kept
#   side-no-sum   the side lanes' acquires and bulk loads, no sums or stores
#   rows512 / rows256  the program in 512- / 256-row bands (--chunk-rows)
#   -> split_<rep>_<cfg>_<m>.log; split_<m>.txt (the programs' graph / eager medians, us)
#   scripts/gpu/mmrs_split.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
CFGS=${CFGS:-program no-reduce compute-only no-tail no-side side-no-sum rows512 rows256}
for rep in 1 2; do
  for cfg in $CFGS; do
    mode=; opt=()
    case $cfg in
      program) ;;
      rows*) opt=(--chunk-rows "${cfg#rows}") ;;
      *) mode=$cfg ;;
    esac
    base=--no-baselines; [ $rep = 1 ] && [ $cfg = program ] && base=
    f="$DIR/split_${rep}_${cfg}_$M.log"
    echo "# $cfg rep $rep starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
    timeout 150 env SYMM_DEBUG_MMRS_TILES=$mode $L $BIN bench --backend cuda --op mm_rs --algo tiles,tiles_push \
      --dtype bf16 --shape 70b,8b --m 16384 --mode both --passes 3 --timing-only $base ${opt[@]+"${opt[@]}"} > "$f" 2>&1
    echo "# $cfg rep $rep: rc $? at ${SECONDS}s"
  done
done
for f in "$DIR"/split_*_"$M".log; do
  echo "$(basename "$f" .log): $(grep -h '^mm_rs  mm_rs.tile' "$f" | awk '{printf "%s N%s g%s %s | ", substr($2,12,5), $5, $8, $9}')"
done | tee "$DIR/split_$M.txt"
