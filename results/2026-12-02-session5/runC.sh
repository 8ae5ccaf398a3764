#!/usr/bin/env bash
# Session 5, third call (session 4's next-run-a.sh): what the decode GEMM waits on at
# N = K = 4096 (53% of a copy, 1.05x cuBLAS) beside cuBLAS's kernel, profiled by name (the
# last try caught a torch fill); the mid-size rows with every candidate (to fit the model).
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
for who in "hgemm hgemm_decode" "cublas nvjet"; do
  set -- $who
  timeout 90 ncu --set full --kernel-name "regex:$2" --launch-skip 1 --launch-count 1 \
      -o "$logs/decode-$1" python3 bench/profile_gemm.py $1 1x4096x4096 > "$logs/ncu-$1.log" 2>&1
  echo "ncu $1 rc=$?: $(grep Profiling "$logs/ncu-$1.log" | tail -1)"
  timeout 60 ncu --import "$logs/decode-$1.ncu-rep" --page details > "$logs/decode-$1.txt" 2>&1
done
timeout 200 python3 bench/gemm_shapes.py --workers 15 --case-timeout 90 --suite midsize \
    --candidates 16 --out "$logs/midsize.md" > "$logs/midsize.log" 2>&1
grep -A4 "^## Summary" "$logs/midsize.md" | grep "^-"
tar -czf "$out/logs.tar.gz" -C "$logs" --exclude='*.ncu-rep' .
