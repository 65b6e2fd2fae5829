source scripts/gpu/nvlink_env.sh 2 $OUT/s >/dev/null
for rep in 1 2; do for st in 3 2; do
  echo "### rep $rep streams $st"
  timeout 60 $BIN launch -n 2 -- $BIN bench --backend cuda --op reduce_scatter --algo ce,ce_overlap --sizes 16M,64M,256M --mode both --timing-only --streams $st --csv $OUT/s/rs_s${st}_r$rep.csv 2>&1 | grep -E "^reduce_scatter +reduce|rror"
  timeout 60 $BIN launch -n 2 -- $BIN bench --backend cuda --op all_gather --algo ce,ce_sm --sizes 16M,64M --chunk-bytes 8M --mode both --timing-only --streams $st --csv $OUT/s/ag_s${st}_r$rep.csv 2>&1 | grep -E "^all_gather +all|rror"
  for op in mm_rs ag_mm; do a=ce,ce_acc; [ $op = ag_mm ] && a=ce,ce_bulk
  timeout 60 $BIN launch -n 2 -- $BIN bench --backend cuda --op $op --algo $a --shape 70b,8b --m 16384 --mode both --timing-only --streams $st 2>&1 | tee $OUT/s/${op}_s${st}_r$rep.log | grep -E "^(mm_rs|ag_mm) +(ag_mm|mm_rs|cublaslt)|rror"; done
done; done
timeout 60 $BIN launch -n 2 -- $BIN bench --backend cuda --op reduce_scatter --algo ce,ce_overlap --sizes 64M --mode eager --timing-only --streams 2 --trace $OUT/s/traces > /dev/null 2>&1
timeout 60 $BIN launch -n 2 -- $BIN bench --backend cuda --op ag_mm --algo ce --shape 70b --m 16384 --mode eager --timing-only --streams 2 --trace $OUT/s/traces > /dev/null 2>&1
ls $OUT/s/traces
cd $OUT && tar czf s.tgz s && rm -rf s
