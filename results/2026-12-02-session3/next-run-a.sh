#!/usr/bin/env bash
# For the next session's first H200 call (not run yet): norms with rows split over clusters
# (8a48334: interpreter- and ptxas-checked only) on the GPU, their sanitizers, and their
# bandwidth against one CTA per row; the GEMM tests of the pads_k rule; do_bench's read flush.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$logs/gpu.txt"
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|ERROR SUMMARY|RACECHECK SUMMARY|WRONG)' "$logs/$2" | tail -1)"; }
T=test/python
run 240 tests.log python3 -m pytest -q -rfE -m gpu -p no:cacheprovider -n 8 \
    $T/test_norms_gpu.py $T/test_gemm_splitk_gpu.py $T/test_do_bench.py &
for tool in memcheck racecheck synccheck; do
  run 240 "sanitizer-smoke_norms-$tool.log" compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_norms.py &
done
wait
run 200 norms.log python3 bench/norms.py --lengths 1024,4096,32000,50257,128256,151936 --clusters 1,2,4,8,16 --rep-ms 40 --out "$logs/norms-clusters.md"
run 150 norms-staging.log python3 bench/norms.py --lengths 50257,128256 --dtypes bfloat16 --stage-kib 0,48,96 --stage-warps 8 --rep-ms 40 --out "$logs/norms-staging.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
for f in "$logs"/norms-*.md; do grep -E "^\| (softmax|rms|layer)" "$f" | awk -F'|' '{print $2,$3,$4,$11,$12}'; done
