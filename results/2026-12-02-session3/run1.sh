#!/usr/bin/env bash
# Call 1: the front door with PAD_K (K not a multiple of 8 padded to TMA rows) on the unaligned
# suite; the decode and mid-size suites with every candidate timed (--candidates), to see what
# tuning would find where the heuristic misses (issue 21). Logs and results in one archive.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$logs/gpu.txt"
G="python3 bench/gemm_shapes.py --workers 15 --case-timeout 60"
timeout 150 $G --suite unaligned --out "$logs/unaligned.md" > "$logs/unaligned.log" 2>&1
echo "unaligned rc=$?"; grep -A3 "^## Summary" "$logs/unaligned.md"
timeout 200 $G --suite decode --candidates 32 --out "$logs/decode.md" > "$logs/decode.log" 2>&1
echo "decode rc=$?"; grep -A3 "^## Summary" "$logs/decode.md"
timeout 170 $G --suite midsize --candidates 16 --out "$logs/midsize.md" > "$logs/midsize.log" 2>&1
echo "midsize rc=$?"; grep -A3 "^## Summary" "$logs/midsize.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
