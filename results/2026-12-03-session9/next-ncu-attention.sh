#!/usr/bin/env bash
# Issue 22: where GQA attention loses to cuDNN (2x32/4 x 4096 x 128 without a mask: 0.917-0.941x
# cuDNN in session 5, while MHA at the same size runs level with it). ncu of our kernel with
# grouped K/V heads and with as many K/V heads as query heads (the same work), and of cuDNN's
# SDPA on the GQA tensors: duration, tensor-pipe and issue activity, L2 and DRAM traffic, the
# warp stalls; our source page (the kernel has line info). Logs in one archive.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
SECTIONS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --section WarpStateStats --section SourceCounters --section SchedulerStats"
for who in "gqa flash_attention hkv=4" "mha flash_attention hkv=32" \
           "cudnn [Ss]dpa|fmha|[Ff]lash|cudnn hkv=4:cudnn"; do
  set -- $who
  python3 bench/profile_attention.py 2 32 4096 128 bfloat16 ${3/:/ } > /dev/null 2>&1   # compile
  timeout 120 ncu $SECTIONS --import-source yes --kernel-name "regex:$2" --launch-skip 1 \
      --launch-count 1 -o "$logs/$1" python3 bench/profile_attention.py 2 32 4096 128 \
      bfloat16 ${3/:/ } > "$logs/ncu-$1.log" 2>&1
  echo "ncu $1 rc=$?"
  timeout 40 ncu --import "$logs/$1.ncu-rep" --page details > "$logs/$1.txt" 2>&1
  [ "$1" != cudnn ] && timeout 60 ncu --import "$logs/$1.ncu-rep" --page source --csv \
      --print-source cuda > "$logs/$1-source.csv" 2>&1
  grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|L2 Hit Rate|Compute \(SM\) Throughput|Issue Slots Busy|Grid Size|Registers Per Thread)" "$logs/$1.txt"
done
tar -czf "$out/ncu-attention.tar.gz" -C "$logs" --exclude='*.ncu-rep' .
