#!/usr/bin/env bash
# Session 5, last call: the launcher with run-time extents built once per signature (this
# tree): the GPU tests of the launch paths, the GEMM front door's host time per call against
# df31d6e's tilemlir (unpacked from before-tilemlir.tar.xz) in the same run, and the random
# sweep of session 4 (seed 21, 150 shapes x 2 dtypes) again.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
T=test/python
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 $T/test_run_time_dims_gpu.py \
    $T/test_language_gpu.py $T/test_driver_path_gpu.py $T/test_gemm_splitk_gpu.py \
    > "$logs/tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$logs/tests.log")"
mkdir -p /tmp/before && tar -xJf before-tilemlir.tar.xz -C /tmp/before
for tree in after before; do
  extra=""; [ $tree = before ] && extra=/tmp/before:
  PYTHONPATH=$extra$PYTHONPATH timeout 120 python3 results/2026-12-02-session5/hostcost.py \
      > "$logs/hostcost-$tree.log" 2>&1
  echo "== $tree rc=$? $(head -1 "$logs/hostcost-$tree.log")"; grep "^| [0-9]" "$logs/hostcost-$tree.log" | tail -7 | cut -c1-60
done
timeout 200 python3 bench/gemm_shapes.py --workers 15 --case-timeout 60 --suite random --count 150 \
    --random-reps 6 --compile-first --out "$logs/random.md" > "$logs/random.log" 2>&1
echo "random rc=$?"; grep "^- \*\*random" "$logs/random.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
