#!/usr/bin/env bash
# Session 11, runC: the tree with softmax's 2-instruction exp for 16-bit rows (b6a116a). The
# three norms through their front doors at the long widths, both dtypes (torch and the copy
# alongside); rows that keep an SM to themselves (65536 and up) with 32 warps a CTA beside
# the default 16 (32 elements a thread a tile, and 16), and split over clusters of 4, 8
# and 16 CTAs (parts in registers: one exp an element); then the norms' GPU sweep and compute-sanitizer memcheck, racecheck and
# synccheck on bench/smoke_norms.py, in parallel, after the timing.
set -u
out=$(realpath -m "${OUT:-device-out}"); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
run() { timeout "$1" "${@:3}" > "$out/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error|ERROR SUMMARY|RACECHECK SUMMARY)' "$out/$2" | tail -1)"; }
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
run 210 norms.log python3 bench/norms.py --lengths 1024,4096,32000,50257,65536,128256,151936 --rep-ms 25 --out "$out/norms.md"
run 110 norms-warps.log python3 bench/norms.py --lengths 65536,128256,151936 --dtypes bfloat16 --stage-warps 32 --rep-ms 25 --out "$out/norms-warps.md"
run 110 norms-warps16.log python3 bench/norms.py --lengths 65536,128256,151936 --dtypes bfloat16 --per-thread 16 --stage-warps 32 --rep-ms 25 --out "$out/norms-warps16.md"
run 110 norms-clusters.log python3 bench/norms.py --lengths 65536,128256,151936 --dtypes bfloat16 --clusters 4,8,16 --rep-ms 25 --out "$out/norms-clusters.md"
run 200 gpu-tests.log $P -n 8 test/python/test_norms_gpu.py &
for tool in memcheck racecheck synccheck; do
  run 200 "sanitizer-smoke_norms-$tool.log" compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_norms.py &
done
wait
for f in norms norms-warps norms-warps16 norms-clusters; do
  grep -E "^\| (softmax|rms|layer)" "$out/$f.md" | awk -F'|' '{print $2,$3,$4,$11,$12}'
done
