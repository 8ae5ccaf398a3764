#!/usr/bin/env bash
# Host time per call of the attention, FP8 and f16 GEMM front doors against torch's, and where
# it goes (cProfile): hostcost_fronts.py.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
timeout 200 python3 results/2026-12-03-session13/hostcost_fronts.py > "$logs/hostcost-fronts.log" 2>&1
echo "rc=$?"; grep -E "us, torch|Error|error" "$logs/hostcost-fronts.log" | head
cp "$logs/hostcost-fronts.log" "$out/"
