#!/usr/bin/env bash
# One GPU: the GPU suite as in-process teams (SYMM_TEST_TEAM=1) after the team graph (one graph per
# team, flags as edges): correctness (worlds 2 and 4, 16K and 1M, 100 graph replays, the fused plans
# and tile programs), the hang cases and compute-sanitizer (world 2).
#   scripts/gpu/team_suite.sh <out-dir> <machine>   -> suite_team_<m>.log, sanitize_team_<m>.tgz
. "$(dirname "$0")/one_gpu_env.sh" "$@"
SECONDS=0
BIN=.carry/symmcoll-cuda
SB=$(mktemp -d); mkdir -p "$SB/apps" && ln -s "$PWD/$BIN" "$SB/apps/symmcoll-cuda"
timeout 480 env SYMM_TEST_TEAM=1 SYMM_TEST_WORLDS="2 4" SYMM_TEST_SIZES=16K,1M SYMM_TEST_SIZES_ODD=48K,768K \
  SYMM_TEST_REPLAYS=100 SYMM_TEST_LOGDIR="$SB/logs" SAN_WORLDS=2 bash tests/gpu/run.sh "$SB" correctness hang sanitize \
  > "$DIR/suite_team_$M.log" 2>&1
echo "# suite: rc $? at ${SECONDS}s"
(cd "$SB/logs" 2>/dev/null && tar czf "$DIR/sanitize_team_$M.tgz" sanitize_*.log 2>/dev/null)
grep -E "^--- FAIL|GPU suite|^=== " "$DIR/suite_team_$M.log" | tail -40
