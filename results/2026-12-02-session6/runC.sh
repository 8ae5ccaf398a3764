#!/usr/bin/env bash
# Call 3: runB's A/B again (its parent tree lacked dialects/): the rows held in registers
# (1025, 4097) and 20001 on the parent tree (c09cfae^, 2-byte accesses; parent-tree/ =
# `git archive c09cfae^ tilemlir bench dialects`, copied in untracked for this call), then on
# this tree, one process each, the same run.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1
(cd parent-tree && PYTHONPATH=/tmp/site:$PWD:$OLDPWD/.devbundle/pylibs TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache-parent \
  timeout 200 python3 bench/norms.py --lengths 1025,4097,20001,50257 --rep-ms 30 --out "$logs/norms-parent.md" > "$logs/norms-parent.log" 2>&1; echo "parent rc=$?")
TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache timeout 200 python3 bench/norms.py --lengths 1025,4097,20001,50257 --rep-ms 30 --out "$logs/norms-this.md" > "$logs/norms-this.log" 2>&1; echo "this rc=$?"
tar -czf "$out/logs.tar.gz" -C "$logs" .
for f in norms-parent.md norms-this.md; do echo "-- $f"; grep -E "^\| (softmax|rms|layer)" "$logs/$f" | awk -F'|' '{print $2,$3,$4,$5,$11}'; done
