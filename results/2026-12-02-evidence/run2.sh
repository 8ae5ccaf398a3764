#!/usr/bin/env bash
# Call 2, timings alone on the GPU: host time per call (this tree and 13bb44b's, Triton, torch),
# the front door against its configuration compiled for the one M (ab_gemm), the GEMM sweep
# (bench/gemm.py's 20 rows) with this tree and then 13bb44b's, and the attention sweep (24
# cases: the front door, the fixed-shape kernel, the SDPA backends).
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?"; }
echo "=== $(date -u +%T)"
run 45 overhead-new.log python3 bench/launch_overhead.py --calls 10000 --out "$logs/launch-overhead.md"
run 45 overhead-old.log python3 old/bench/launch_overhead.py --calls 10000 --out "$logs/launch-overhead-13bb44b.md"
run 60 ab-fixed-m.log python3 bench/ab_gemm.py --kernels hgemm,hgemm_fixed_m --blocks 8 --settle-s 2 \
    --shapes 4096x4096x512,2048x2048x2048,4096x4096x4096,3000x5120x2056 --out "$logs/ab-run-time-m.md"
G="--kernels hgemm --reps 20 --warmup-ms 300 --settle-s 2 --checks 1"
run 150 gemm-sweep-new.log python3 bench/gemm.py $G --out "$logs/gemm-sweep-new.md"
run 150 gemm-sweep-old.log python3 old/bench/gemm.py $G --out "$logs/gemm-sweep-13bb44b.md"
run 170 attention.log python3 bench/attention.py --fixed-shapes --out "$logs/attention-sweep.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
for f in "$logs"/*.md; do echo "== $(basename $f)"; grep -iE "geometric|^\| (ours|kernel|hgemm)" "$f" | tail -4; done
echo "=== done $(date -u +%T)"
