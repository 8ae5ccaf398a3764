#!/usr/bin/env bash
# For the next session (not run: session 12's device time ran out). LayerNorm of shifted rows
# (N not a multiple of 8, N > 16384) with the bias fetched a tile ahead, as the weight is
# (next-bias-ahead.patch; ptxas: 64 registers, one 4-byte spill and refill per CTA, outside the
# tile loop), against the tree (the bias read when its tile is normalised: ncu put the shifted
# LayerNorm's top stall at long-scoreboard, 4.27 warps per issued instruction against 2.88
# aligned). The bench before, patched, before again (each its own process and cache), then the
# GPU norms tests on the patched tree; then session 10's next-ncu-stalls.sh (attention's warp
# stalls against cuDNN's at GQA and D 256). About 6 minutes. Logs in one archive in $OUT.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1
S=results/2026-12-03-session12
patched() {    # $1: "" to apply the patch, -R to take it back (git apply, else patch)
  git apply $1 $S/next-bias-ahead.patch 2>/dev/null || patch -p1 $1 < $S/next-bias-ahead.patch
}
bench() {
  TILEMLIR_CACHE_DIR=/tmp/cache-$1 timeout 60 python3 bench/norms.py --ops layer_norm \
      --shapes 1336x50257,2098x32001,672x100003 --dtypes bfloat16,float16 --rep-ms 25 \
      > "$logs/ln-$2.log" 2>&1
  echo "$2 rc=$?"; grep -E "^ *layer" "$logs/ln-$2.log"
}
bench tree before
patched "" && bench ahead patched
patched -R && bench tree before-again
patched ""
TILEMLIR_CACHE_DIR=/tmp/cache-ahead timeout 90 python3 -m pytest -q -rfE -m gpu \
    -o cache_dir=/tmp/pytest-cache -n 8 test/python/test_norms_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "norms gpu tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
patched -R
mkdir -p "$logs/ncu"
OUT=$logs/ncu timeout 280 bash results/2026-12-03-session10/next-ncu-stalls.sh > "$logs/ncu-stalls.log" 2>&1
echo "ncu stalls rc=$?"; cat "$logs/ncu-stalls.log"
tar -czf "$out/next-run-logs.tar.gz" -C "$logs" .
