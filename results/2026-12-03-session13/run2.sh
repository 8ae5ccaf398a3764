#!/usr/bin/env bash
# FP8 promotion 128 columns at a time, so that promoted tiles can be 128 x 256 (the front
# door's new default for promoted accumulation and block scales): promoted 128 x 128 (the old
# default) against 128 x 256 with and without clusters, each kind of scales, at 8192^3 and
# 4096^3, torch._scaled_mm in the same process; the fast path for reference; the FP8 GPU tests;
# compute-sanitizer on bench/smoke_fp8.py.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
shapes=8192x8192x8192,4096x4096x4096
i=0
for config in BM=128:BN=128:CLUSTER=1:PROMOTE=1 BM=128:BN=256:CLUSTER=1:PROMOTE=1 \
              BM=128:BN=256:CLUSTER=0:PROMOTE=1; do
  i=$((i + 1))
  timeout 150 python3 bench/fp8_gemm.py --shapes $shapes --scalings tensor,row,block \
      --accum promoted --rep-ms 30 --config $config --out "$logs/fp8-promoted-$i.md" \
      > "$logs/fp8-promoted-$i.log" 2>&1
  echo "$config rc=$?"
  grep -E "^\| [0-9]" "$logs/fp8-promoted-$i.md" | awk -F'|' '{print $2,$3,$5,$6,$7}'
done
timeout 90 python3 bench/fp8_gemm.py --shapes $shapes --scalings tensor --accum fast \
    --rep-ms 30 --out "$logs/fp8-fast.md" > "$logs/fp8-fast.log" 2>&1
echo "fast (front door) rc=$?"; grep -E "^\| [0-9]" "$logs/fp8-fast.md" | awk -F'|' '{print $2,$3,$5,$6,$7,$12}'
timeout 120 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_fp8_gemm_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "fp8 gpu tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool python3 bench/smoke_fp8.py \
      > "$logs/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-$tool.log" | tail -1)"
done
tar -czf "$out/run2-logs.tar.gz" -C "$logs" .
