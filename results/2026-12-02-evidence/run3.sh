#!/usr/bin/env bash
# Call 3. Side by side first (correctness only): every GPU test again, verbose, with the norms
# file in its own process (its module fixture compiles every norm configuration in a process
# pool: under xdist each worker that drew one of its tests compiled them all, the tail that the
# first call's cap cut), and the 300-shape random GEMM sweep in both dtypes (checked, not timed).
# Then, alone on the GPU: the decode, unaligned and mid-size GEMM suites against cuBLAS and
# Triton, and the norms at vocabulary-sized rows against torch and a copy.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error|Summary|correct)' "$logs/$2" | tail -1)"; }
P="python3 -m pytest -rfE -m gpu -p no:cacheprovider"
echo "=== correctness $(date -u +%T)"
run 330 gpu-tests.log $P -v -n 11 --durations=30 test/python test/robustness --ignore=test/python/test_norms_gpu.py &
run 330 gpu-tests-norms.log $P -v test/python/test_norms_gpu.py &
run 330 gemm-random.log python3 bench/gemm_shapes.py --suite random --count 300 --no-timing --workers 5 --out "$logs/gemm-random.md" &
wait
echo "=== timings $(date -u +%T)"
run 160 gemm-shapes.log python3 bench/gemm_shapes.py --suite decode,unaligned,midsize --dtypes float16 --workers 15 --out "$logs/gemm-shapes.md"
run 60 norms.log python3 bench/norms.py --out "$logs/norms.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
grep -A8 "^## Summary" "$logs"/gemm-*.md; grep -E "passed|failed" "$logs"/gpu-tests*.log | tail -3
echo "=== done $(date -u +%T)"
