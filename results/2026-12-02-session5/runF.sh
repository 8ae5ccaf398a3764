#!/usr/bin/env bash
# Session 5, sixth call: where the random sweep's slowest GEMMs spend their time. Every kernel
# of three front-door calls with its GPU duration (ncu), then the full ncu set of our kernel on
# three of them (decode with odd K, K = 7 with the element-wise producer, N = 1).
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
for s in 1x411x1609 12x1x2735 1x4610x5313 1x4096x4095 352x7048x7 7181x2787x2 516x1x5323 101x8x6080 3731x7100x5; do
  python3 bench/profile_gemm.py hgemm $s > /dev/null 2>&1        # compile outside ncu
  timeout 60 ncu --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \
      --csv python3 bench/profile_gemm.py hgemm $s > "$logs/times-$s.csv" 2> "$logs/times-$s.err"
  echo "== $s"; grep -v "^==" "$logs/times-$s.csv" | awk -F'","' 'NR>1 {print $5, $(NF-2), $NF}' | tr -d '"' | cut -c1-120 | sort | uniq -c | head -12
done
for s in 1x4610x5313:hgemm_decode 352x7048x7:hgemm_v6 516x1x5323:hgemm_v6; do
  shape=${s%%:*}; name=${s##*:}
  timeout 90 ncu --set full --import-source no --kernel-name "regex:$name" --launch-skip 1 --launch-count 1 \
      -o "$logs/full-$shape" python3 bench/profile_gemm.py hgemm $shape > "$logs/full-$shape.log" 2>&1
  timeout 60 ncu --import "$logs/full-$shape.ncu-rep" --page details > "$logs/full-$shape.txt" 2>&1
  timeout 60 ncu --import "$logs/full-$shape.ncu-rep" --page raw --csv > "$logs/full-$shape-raw.csv" 2>&1
  echo "full $shape: $(grep -E '^\s+Duration' "$logs/full-$shape.txt")"
done
tar -czf "$out/logs.tar.gz" -C "$logs" --exclude='*.ncu-rep' .
