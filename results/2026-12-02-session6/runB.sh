#!/usr/bin/env bash
# Call 2: compute-sanitizer (memcheck, racecheck, synccheck) on the norms' smoke cases (shifted
# rows among them) beside the masked-copy and launch-path GPU tests; then, alone, the rows held
# in registers (1025, 4097) and 20001 timed on this tree and on its parent (c09cfae^, 2-byte
# accesses, from parent-tree/) in one process each, the same run.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error|ERROR SUMMARY|RACECHECK SUMMARY)' "$logs/$2" | tail -1)"; }
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
echo "=== tests and sanitizers $(date -u +%T)"
run 280 gpu-tests.log $P -n 8 test/python/test_masked_copies_gpu.py test/python/test_run_time_dims_gpu.py test/python/test_driver_path_gpu.py test/python/test_language_gpu.py &
for tool in memcheck racecheck synccheck; do
  run 290 "sanitizer-smoke_norms-$tool.log" compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_norms.py &
done
wait
echo "=== parent tree $(date -u +%T)"
# parent-tree/: `git archive c09cfae^ tilemlir bench`, copied in untracked for this call
(cd parent-tree && PYTHONPATH=/tmp/site:$PWD:$OLDPWD/.devbundle/pylibs TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache-parent \
  timeout 130 python3 bench/norms.py --lengths 1025,4097,20001 --rep-ms 30 --out "$logs/norms-parent.md" > "$logs/norms-parent.log" 2>&1; echo "parent rc=$?")
run 130 norms-registers.log python3 bench/norms.py --lengths 1025,4097,20001 --rep-ms 30 --out "$logs/norms-registers.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
for f in norms-parent.md norms-registers.md; do echo "-- $f"; grep -E "^\| (softmax|rms|layer)" "$logs/$f" | awk -F'|' '{print $2,$3,$4,$5,$11,$12}'; done
echo "=== done $(date -u +%T)"
