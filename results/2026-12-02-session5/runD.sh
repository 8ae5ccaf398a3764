#!/usr/bin/env bash
# Session 5, fourth call: the random sweep's slowest classes (decode with odd K, K <= 64 with N
# not a multiple of 8, N < 8) against padding at the front door (variants.py).
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 60 python3 results/2026-12-02-session5/variants.py --compile > "$logs/compile.log" 2>&1
echo "compile rc=$?"
timeout 300 python3 results/2026-12-02-session5/variants.py > "$logs/variants.log" 2>&1
echo "variants rc=$?"
tar -czf "$out/logs.tar.gz" -C "$logs" .
sed -n '/^| shape/,$p' "$logs/variants.log"
