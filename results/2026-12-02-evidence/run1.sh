#!/usr/bin/env bash
# Call 1: every GPU test (pytest-xdist, 12 workers; what failed is then run again alone, so that
# a host-time test is not judged under the others' compiles), and compute-sanitizer beside them
# on attention's tails and GQA and on the FP8 GEMM. Logs packed into one archive.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$logs/gpu.txt"
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error|ERROR SUMMARY|RACECHECK SUMMARY)' "$logs/$2" | tail -1)"; }
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
echo "=== tests $(date -u +%T)"
run 400 gpu-tests.log $P -n 12 --durations=25 test/python test/robustness &
for tool in memcheck racecheck synccheck; do
  run 300 "sanitizer-smoke_attention-$tool.log" compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_attention.py &
done
run 200 sanitizer-smoke_fp8-synccheck.log compute-sanitizer --tool synccheck --report-api-errors no python3 bench/smoke_fp8.py &
wait
echo "=== failures again, alone $(date -u +%T)"
run 120 gpu-tests-rerun.log $P --lf --lfnf=none test/python test/robustness
tar -czf "$out/logs.tar.gz" -C "$logs" .
echo "=== done $(date -u +%T)"
