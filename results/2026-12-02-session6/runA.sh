#!/usr/bin/env bash
# Call 1: shifted rows (norms whose N is not a multiple of 8) timed against torch and a copy,
# with the aligned neighbours 32000 / 50256 in the same run; then the norms' GPU sweep.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$logs/gpu.txt"
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error|ERROR SUMMARY|RACECHECK SUMMARY)' "$logs/$2" | tail -1)"; }
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
echo "=== bench $(date -u +%T)"
run 330 norms.log python3 bench/norms.py --lengths 1025,4097,20001,32000,32001,50256,50257,50258,128257 --rep-ms 30 --out "$logs/norms.md"
echo "=== tests $(date -u +%T)"
run 240 gpu-tests.log $P -n 12 test/python/test_norms_gpu.py
tar -czf "$out/logs.tar.gz" -C "$logs" .
grep -E "^\| (softmax|rms|layer)" "$logs/norms.md" | awk -F'|' '{print $2,$3,$4,$11,$12}'
echo "=== done $(date -u +%T)"
