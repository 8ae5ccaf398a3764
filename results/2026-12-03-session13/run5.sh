#!/usr/bin/env bash
# The FP8 front door with its kernel remembered per call shape (no configuration chosen
# again): host and GPU microseconds per call against torch._scaled_mm (hostcost_fp8.py);
# run4's two shapes again, twice; the FP8 GPU tests.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
S=results/2026-12-03-session13
timeout 120 python3 $S/hostcost_fp8.py > "$logs/hostcost.log" 2>&1
echo "hostcost rc=$?"; cat "$logs/hostcost.log" | tail -4
for i in 1 2; do
  timeout 150 python3 bench/fp8_gemm.py --shapes 2048x2048x2048,4096x4096x4096 \
      --scalings tensor,row --accum promoted,fast --rep-ms 80 --out "$logs/fp8-$i.md" \
      > "$logs/fp8-$i.log" 2>&1
  echo "pass $i rc=$?"
  grep -E "^\| [0-9]" "$logs/fp8-$i.md" | awk -F'|' '{print $2,$3,$4,$5,$6,$7,$10,$11}'
done
timeout 120 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_fp8_gemm_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "fp8 gpu tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
tar -czf "$out/run5-logs.tar.gz" -C "$logs" .
