#!/usr/bin/env bash
# For the next session's first H200 call (not run yet): what the deadlock fix (ea3421c) must
# show on the GPU. The tests that hung, then the GEMM suites the deadlock cut short (each case
# under a watchdog), then compute-sanitizer on a 3-warpgroup cp.async GEMM. Logs in one archive.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|Summary|ERROR SUMMARY|RACECHECK SUMMARY)' "$logs/$2" | tail -1)"; }
T=test/python
run 200 tests-cp-async.log python3 -m pytest -q -rfE -m gpu -p no:cacheprovider -n 6 \
    $T/test_gemm_splitk_gpu.py $T/test_gemm_epilogue_gpu.py $T/test_gemm_mma_gpu.py $T/test_gemm_decode.py &
# this session's new GPU tests: misaligned and strided views, padded head dims, float32 norms
run 200 tests-new.log python3 -m pytest -q -rfE -m gpu -p no:cacheprovider $T/test_alignment_gpu.py \
    $T/test_attention_gpu.py $T/test_norms_gpu.py -k "alignment or misaligned or pads or float32" &
for tool in memcheck racecheck synccheck; do
  run 200 "sanitizer-smoke_shapes-$tool.log" compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_shapes.py &
done
wait
run 330 gemm-shapes.log python3 bench/gemm_shapes.py --suite random,unaligned,midsize --count 150 \
    --random-reps 4 --workers 15 --case-timeout 60 --out "$logs/gemm-shapes.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
grep -A6 "^## Summary" "$logs/gemm-shapes.md"
