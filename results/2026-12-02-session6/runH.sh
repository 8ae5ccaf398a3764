#!/usr/bin/env bash
# Call 8: rows longer than fit two CTAs an SM (64K to 152K elements): the long-row defaults
# (16 elements a thread a tile, 16 warps) against 32 a thread and 32 warps, bfloat16, each op,
# the same run: whether the front door should take another tiling there.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 420 python3 bench/norms.py --lengths 65536,100000,128256,151936 --dtypes bfloat16 \
    --per-thread 16,32 --stage-warps 32 --rep-ms 25 --out "$logs/norms-long.md" > "$logs/norms-long.log" 2>&1
echo "rc=$?"
tar -czf "$out/logs.tar.gz" -C "$logs" .
grep -E "^\| (softmax|rms|layer)" "$logs/norms-long.md" | awk -F'|' '{print $2,$3,$5,$11}'
