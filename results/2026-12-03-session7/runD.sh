#!/usr/bin/env bash
# For the next session's first call (session 7 had no device time left for it), with
# next-swapped-heuristic.patch applied: the staged epilogue (odd N: GEMM, fused GEMM, FP8) and
# the swapped decode kernel (N <= 64). In order of need, each log written to $OUT as it
# completes: their GPU tests, narrow_n.py (timing: swapped against tiled), compute-sanitizer on
# bench/smoke_shapes.py (odd N and narrow N among its shapes).
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 240 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 14 \
    test/python/test_gemm_splitk_gpu.py test/python/test_fp8_gemm_gpu.py \
    test/python/test_gemm_epilogue_gpu.py -k "staged or swapped or dequantized or 1003 or 447" > "$out/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$out/gpu-tests.log")"; grep -E "^FAILED|^ERROR" "$out/gpu-tests.log" | head
timeout 150 python3 results/2026-12-03-session7/narrow_n.py > "$out/narrow_n.log" 2>&1
echo "narrow rc=$?"; grep "^|" "$out/narrow_n.log"
for tool in memcheck racecheck synccheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 python3 bench/smoke_shapes.py \
      > "$out/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tail -1)"
done
