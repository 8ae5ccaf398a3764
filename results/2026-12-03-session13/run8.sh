#!/usr/bin/env bash
# Block scales where the front door's model picked 64 x 128 tiles (one consumer warpgroup,
# run6: 0.67x torch) against 128 x 128 with clusters (its pick elsewhere), and 4096^3 for
# reference; each configuration its own process.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
shapes=16384x4096x14336,8192x8192x28672,4096x4096x4096
i=0
for config in BM=64:BN=128:CLUSTER=1 BM=128:BN=128:CLUSTER=1 BM=128:BN=128:CLUSTER=0; do
  i=$((i + 1))
  timeout 120 python3 bench/fp8_gemm.py --shapes $shapes --scalings block --accum promoted \
      --rep-ms 40 --config $config --out "$logs/block-$i.md" > "$logs/block-$i.log" 2>&1
  echo "$config rc=$?"
  grep -E "^\| [0-9]" "$logs/block-$i.md" | awk -F'|' '{print $2,$5,$6,$7}'
done
tar -czf "$out/run8-logs.tar.gz" -C "$logs" .
