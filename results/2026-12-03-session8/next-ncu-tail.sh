#!/usr/bin/env bash
# Where the mid-size rows' time goes (1280 x 4096 x 4096, 0.83-0.85x cuBLAS, no candidate
# at 0.95x): ncu --set full of hgemm_v7 with TAIL_SPLIT=4 (whole wave, then the last wave's
# pairs split 4 ways and fixed up through the fp32 workspace), of hgemm_v6 64 x 128 (the best
# candidate in session 5) and of cuBLAS, each by kernel name; the source page (tilemlir's PTX
# carries line info) shows which lines of parts/split_k.py the stalls sit on. Logs in one
# archive; the headline figures printed.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
SHAPE=1280x4096x4096
for who in "v7t4 hgemm_v7 hgemm:KERNEL=hgemm_v7:TAIL_SPLIT=4" \
           "v6 hgemm_v6 hgemm:KERNEL=hgemm_v6:BM=64:BN=128:STAGES=8:GROUP_M=16" \
           "cublas nvjet cublas"; do
  set -- $who
  timeout 120 ncu --set full --import-source yes --kernel-name "regex:$2" --launch-skip 1 \
      --launch-count 1 -o "$logs/$1" python3 bench/profile_gemm.py "$3" $SHAPE > "$logs/ncu-$1.log" 2>&1
  echo "ncu $1 rc=$?"
  timeout 60 ncu --import "$logs/$1.ncu-rep" --page details > "$logs/$1.txt" 2>&1
  if [ "$1" != cublas ]; then
    timeout 60 ncu --import "$logs/$1.ncu-rep" --page source --print-source cuda --csv \
        > "$logs/$1-source.csv" 2>&1
  fi
  grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Registers Per Thread|Executed Instructions  )" "$logs/$1.txt"
done
tar -czf "$out/logs.tar.gz" -C "$logs" --exclude='*.ncu-rep' .
