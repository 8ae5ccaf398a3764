#!/usr/bin/env bash
# Session 9's second call: compute-sanitizer (memcheck, racecheck, synccheck) on
# bench/smoke_shapes.py (session 8's even-N K <= 64 case among them, with the 16-byte-run
# split-K fix-up) and on smoke_wide_tiles.py (hgemm_v7 128 x 192 and 128 x 320 tiles, the latter
# two wgmma n160 along N); then midsize_tiles.py in both dtypes. Logs land in $OUT.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
S=results/2026-12-03-session9
python3 $S/smoke_wide_tiles.py > "$out/wide-tiles.log" 2>&1; echo "wide tiles rc=$?"; cat "$out/wide-tiles.log" | tail -6
python3 bench/smoke_shapes.py > /dev/null 2>&1      # compile outside the sanitizers
for t in memcheck racecheck synccheck; do
  for s in bench/smoke_shapes.py $S/smoke_wide_tiles.py; do
    timeout 150 compute-sanitizer --tool $t --report-api-errors no --error-exitcode 9 \
        python3 $s > "$out/sanitizer-$(basename $s .py)-$t.log" 2>&1 &
  done
done
wait
for f in "$out"/sanitizer-*.log; do
  echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -1)"
done
timeout 300 python3 $S/midsize_tiles.py both > "$out/midsize-tiles.md" 2>&1
echo "midsize rc=$?"; cat "$out/midsize-tiles.md"
