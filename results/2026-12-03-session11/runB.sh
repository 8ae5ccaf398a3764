#!/usr/bin/env bash
# Session 11, runB: is long-row softmax issue-bound on its exp? The front door (8-instruction
# exp, twice an element on rows through shared memory) against fast=True (ex2.approx.ftz of
# (x - max) log2 e: 2 instructions), softmax at the widths still under 90% of a copy, both
# 16-bit dtypes, M = 2^26 / N; each table with torch and the copy in the same process.
set -u
out=$(realpath -m "${OUT:-device-out}"); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/cache-b
L=16384,32000,50257,65536,128256,151936
timeout 260 python3 bench/norms.py --ops softmax --lengths $L --rep-ms 50 \
    --out "$out/softmax-exact.md" > "$out/softmax-exact.log" 2>&1
echo "exact rc=$?"
timeout 260 python3 bench/norms.py --ops softmax --lengths $L --rep-ms 50 --fast-exp \
    --out "$out/softmax-fast.md" > "$out/softmax-fast.log" 2>&1
echo "fast rc=$?"
paste <(grep -o '^ *softmax.*' "$out/softmax-exact.log") <(grep -o 'GB/s.*' "$out/softmax-fast.log")
