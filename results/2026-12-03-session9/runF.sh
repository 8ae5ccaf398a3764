#!/usr/bin/env bash
# Split-K on shapes of few tile rows (hgemm_v6 128 x 256 and 128 x 192 split 2-3 ways, v7 128 x 192
# split 2, v8 split 2 and 4) against 64 x 128 and the front door, the fix-up in 16-byte runs
# (10535ab): midsize_tiles.py with MIDSIZE_SET=split, both dtypes.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1 MIDSIZE_SET=split
timeout 280 python3 results/2026-12-03-session9/midsize_tiles.py both > "$out/small-m-split.md" 2>&1
echo "rc=$?"; cat "$out/small-m-split.md"
