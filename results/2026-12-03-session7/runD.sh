#!/usr/bin/env bash
# Session 7, last call (about 170 s of device time left): the staged epilogue (odd N) and the
# swapped decode kernel (N <= 64) as the front door's choices. In order of need, each log
# written to $OUT as it completes: their GPU tests (the front door's shapes, FP8's), narrow_n.py
# (timing: swapped against tiled), compute-sanitizer on bench/smoke_shapes.py.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 85 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 14 \
    test/python/test_gemm_splitk_gpu.py test/python/test_fp8_gemm_gpu.py \
    -k "staged or swapped or dequantized" > "$out/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$out/gpu-tests.log")"; grep -E "^FAILED|^ERROR" "$out/gpu-tests.log" | head
timeout 45 python3 results/2026-12-03-session7/narrow_n.py > "$out/narrow_n.log" 2>&1
echo "narrow rc=$?"; grep "^|" "$out/narrow_n.log"
for tool in memcheck racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 python3 bench/smoke_shapes.py \
      > "$out/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tail -1)"
done
