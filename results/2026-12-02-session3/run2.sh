#!/usr/bin/env bash
# Call 2: every GPU test (pytest-xdist; what failed then run again alone, so that a host-time
# test is not judged under the others' compiles), beside it the random-shape sweep's 300
# shapes x 2 dtypes checked against float32 (no timing: the GPU is shared). Logs in one archive.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$logs/gpu.txt"
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error)' "$logs/$2" | tail -1)"; }
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
echo "=== tests $(date -u +%T)"
run 370 gpu-tests.log $P -n 11 --durations=25 test/python test/robustness &
timeout 370 python3 bench/gemm_shapes.py --suite random --count 300 --no-timing --workers 4 \
    --case-timeout 60 --out "$logs/random.md" > "$logs/random.log" 2>&1 &
wait
echo "=== failures again, alone $(date -u +%T)"
run 40 gpu-tests-rerun.log $P --lf --lfnf=none test/python test/robustness
grep -A3 "^## Summary" "$logs/random.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
echo "=== done $(date -u +%T)"
