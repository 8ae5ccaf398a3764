#!/usr/bin/env bash
# Session 5, eighth call: the GEMM front door's host time per call (hostcost.py) with run-time
# extents built once per signature (this tree) and as before (df31d6e's tilemlir, unpacked
# from before-tilemlir.tar.xz), Triton and torch.matmul in each run.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
mkdir -p /tmp/before && tar -xJf before-tilemlir.tar.xz -C /tmp/before
timeout 200 python3 results/2026-12-02-session5/hostcost.py > "$logs/hostcost-after.log" 2>&1
echo "after rc=$?"
PYTHONPATH=/tmp/before:$PYTHONPATH timeout 200 python3 results/2026-12-02-session5/hostcost.py \
    > "$logs/hostcost-before.log" 2>&1
echo "before rc=$?"
timeout 100 python3 results/2026-12-02-session5/hostcost.py --profile > "$logs/hostcost-profile.log" 2>&1
tar -czf "$out/logs.tar.gz" -C "$logs" .
for f in after before; do echo "== $f"; grep "^| [0-9]" "$logs/hostcost-$f.log" | tail -7; done
