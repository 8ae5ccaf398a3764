#!/usr/bin/env bash
# Call 6: ncu of LayerNorm on long rows, shifted (50257) against aligned (50256), float16, on
# the tree that fetches the shifted rows' weight and bias a tile ahead (8 elements a thread a
# tile): where the shifted kernel's time goes.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
for N in 50256 50257; do
  timeout 90 ncu --set full --kernel-name regex:layer_norm --launch-count 1 -o "$logs/ln-$N" \
      python3 bench/norms.py --shapes 1336x$N --ops layer_norm --dtypes float16 --rep-ms 1 \
      > "$logs/ncu-ln-$N.log" 2>&1
  timeout 60 ncu --import "$logs/ln-$N.ncu-rep" --page details > "$logs/ln-$N.txt" 2>&1
  rm -f "$logs/ln-$N.ncu-rep"
done
tar -czf "$out/logs.tar.gz" -C "$logs" .
for N in 50256 50257; do echo "-- $N"; grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Registers Per Thread|Achieved Occupancy|Executed Instructions  |Mem Pipes Busy|Warp Cycles Per Issued)" "$logs/ln-$N.txt"; grep -E "Stall|stall" "$logs/ln-$N.txt" | head -4; done
