#!/usr/bin/env bash
# Call 5: the shifted rows' weight and bias fetched a tile ahead (as aligned rows' are), now
# that they load 16 bytes at a time; LayerNorm's shifted rows with 8 elements a thread a tile
# (the default tried here) and 16; RMSNorm and softmax at their default. Compare with runD
# (fetched when the tile is normalised).
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?"; }
run 200 norms.log python3 bench/norms.py --lengths 20001,32001,50256,50257,128257 --ops rms_norm,layer_norm --rep-ms 30 --out "$logs/norms.md"
run 200 norms-ln.log python3 bench/norms.py --lengths 20001,32001,50257,128257 --ops layer_norm --per-thread 8,16 --rep-ms 30 --out "$logs/norms-ln.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
for f in norms.md norms-ln.md; do echo "-- $f"; grep -E "^\| (softmax|rms|layer)" "$logs/$f" | awk -F'|' '{print $2,$3,$4,$5,$11,$12}'; done
