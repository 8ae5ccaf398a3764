#!/usr/bin/env bash
# For the next session (not run yet): the data to refit the GEMM heuristic where the random
# sweep is weakest (decode with odd K, K <= 64, N < 64; runH/random.md), now that host time no
# longer hides the kernels: the random suite (seed 22, 60 shapes x 2 dtypes) with the first 6
# candidates of each case timed; and the padding variants again (variants.py, runD), whose
# timings the host time inflated. About 450 s.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 300 python3 bench/gemm_shapes.py --workers 15 --case-timeout 60 --suite random --count 60 \
    --seed 22 --random-reps 6 --candidates 6 --compile-first --out "$logs/random-candidates.md" \
    > "$logs/random-candidates.log" 2>&1
echo "random rc=$?"; grep "^- \*\*random" "$logs/random-candidates.md"
timeout 150 python3 results/2026-12-02-session5/variants.py > "$logs/variants.log" 2>&1
echo "variants rc=$?"
tar -czf "$out/logs.tar.gz" -C "$logs" .
