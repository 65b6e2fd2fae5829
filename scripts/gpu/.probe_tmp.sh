G=$(nvidia-smi --query-gpu=name --format=csv,noheader|head -1); N=$(nvidia-smi -L|wc -l); echo "GPU: $G x $N"
if echo "$G"|grep -q H200 && [ $N -ge 2 ]; then
  bash scripts/gpu/round.sh 2 $OUT/r2 123
  bash scripts/gpu/floors.sh 2 $OUT/f2 17
  if [ $N -ge 4 ]; then bash scripts/gpu/round.sh 4 $OUT/r4 13; fi
  echo done
else echo "not H200: nothing run"; fi
