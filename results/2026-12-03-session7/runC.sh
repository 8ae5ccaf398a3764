#!/usr/bin/env bash
# Session 7: the staged epilogue (odd N) and the swapped decode kernel (N <= 64) as the front
# door's choices: their GPU tests and the front door's, compute-sanitizer on
# bench/smoke_shapes.py (odd N and narrow N among them), then narrow_n.py (timing).
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
timeout 200 $P -n 12 test/python/test_gemm_splitk_gpu.py test/python/test_alignment_gpu.py \
    test/python/test_run_time_dims_gpu.py test/python/test_fp8_gemm_gpu.py \
    -k "staged or swapped or front_door or unaligned or misaligned or run_time or dequantized" \
    > "$logs/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
python3 bench/smoke_shapes.py > "$logs/smoke.log" 2>&1; echo "smoke rc=$?"
for tool in memcheck racecheck synccheck; do
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 python3 bench/smoke_shapes.py \
      > "$logs/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-$tool.log" | tail -1)"
done
timeout 150 python3 results/2026-12-03-session7/narrow_n.py > "$logs/narrow_n.log" 2>&1
echo "narrow rc=$?"; grep "^|" "$logs/narrow_n.log"
tar -czf "$out/logs.tar.gz" -C "$logs" .
grep -E "FAILED|Error" "$logs/gpu-tests.log" | head -10
