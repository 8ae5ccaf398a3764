#!/usr/bin/env bash
# 64 x 256 tiles (one consumer warpgroup; hgemm_v6 alone, hgemm_v7 in pairs) against 64 x 128
# and the front door on shapes of few tile rows (256 x 8192 x 2048 and 512 x 4096 x 4096 trail
# cuBLAS at 0.92-0.94x in runC): midsize_tiles.py with MIDSIZE_SET=small, both dtypes.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1 MIDSIZE_SET=small
timeout 280 python3 results/2026-12-03-session9/midsize_tiles.py both > "$out/small-m-tiles.md" 2>&1
echo "rc=$?"; cat "$out/small-m-tiles.md"
