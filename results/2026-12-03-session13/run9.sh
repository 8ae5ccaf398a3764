#!/usr/bin/env bash
# The final tree (promotion keeps 128-row tiles unless M fits 64): the FP8 GPU tests,
# compute-sanitizer on bench/smoke_fp8.py, and run8's block shapes through the front door's
# own choice.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
timeout 120 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_fp8_gemm_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "fp8 gpu tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool python3 bench/smoke_fp8.py \
      > "$logs/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-$tool.log" | tail -1) $(grep -c 'Invalid' "$logs/sanitizer-$tool.log") invalid accesses"
done
timeout 100 python3 bench/fp8_gemm.py --shapes 16384x4096x14336,8192x8192x28672 \
    --scalings block --accum promoted --rep-ms 40 --out "$logs/block.md" > "$logs/block.log" 2>&1
echo "block rc=$?"; grep -E "^\| [0-9]" "$logs/block.md" | awk -F'|' '{print $2,$5,$6,$7,$12}'
tar -czf "$out/run9-logs.tar.gz" -C "$logs" .
