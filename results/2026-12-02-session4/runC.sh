#!/usr/bin/env bash
# Session 4's last H200 call: the persistent long-row norms (interpreter-checked) on the GPU,
# their sanitizers, and their bandwidth against one CTA per row; cluster=16 through the
# runtime's non-portable opt-in; the do_bench spin test as rewritten.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$logs/gpu.txt"
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|ERROR SUMMARY|RACECHECK SUMMARY|WRONG)' "$logs/$2" | tail -1)"; }
T=test/python
run 230 tests.log python3 -m pytest -q -rfE -m gpu -p no:cacheprovider -n 6 \
    "$T/test_norms_gpu.py::test_persistent_long_rows" "$T/test_norms_gpu.py::test_rows_split_over_clusters" \
    "$T/test_do_bench.py" &
for tool in memcheck racecheck synccheck; do
  run 230 "sanitizer-smoke_norms-$tool.log" compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_norms.py &
done
wait
run 230 norms.log python3 bench/norms.py --lengths 32000,50257,128256 --dtypes bfloat16 --persistent 1,2 --rep-ms 40 --out "$logs/norms-persistent.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
grep -E "^\| (softmax|rms|layer)" "$logs/norms-persistent.md" | awk -F'|' '{print $2,$3,$4,$11,$12}'
