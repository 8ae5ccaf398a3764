#!/usr/bin/env bash
# For the next session's first call (this one's device time ran out): hgemm_v7 STREAM_K on the
# GPU for the first time. Its GPU tests (test_gemm_splitk_gpu.py's STREAM_K and TAIL_SPLIT cases)
# and compute-sanitizer on smoke_stream_k.py, then midsize_tiles.py with MIDSIZE_SET=stream
# (STREAM_K at 128 x 192 / 256 / 320 against the widths, TAIL_SPLIT and 64 x 128 on the rows
# still below 0.95x cuBLAS), then the aligned suite (bench/gemm.py's rows) and the mid-size suite
# on this tree. If STREAM_K wins, give gemm.py's model its cost and candidates. Logs land in $OUT.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
S=results/2026-12-03-session9
timeout 120 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_gemm_splitk_gpu.py -k "STREAM or TAIL" > "$out/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$out/gpu-tests.log")"; grep -E "^FAILED|^ERROR" "$out/gpu-tests.log" | head
python3 $S/smoke_stream_k.py > "$out/smoke-stream-k.log" 2>&1; tail -4 "$out/smoke-stream-k.log"
for t in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $t --report-api-errors no --error-exitcode 9 \
      python3 $S/smoke_stream_k.py > "$out/sanitizer-stream-k-$t.log" 2>&1 &
done
wait
for t in memcheck racecheck synccheck; do
  echo "$t: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-stream-k-$t.log" | tail -1)"
done
MIDSIZE_SET=stream timeout 200 python3 $S/midsize_tiles.py both > "$out/stream-k.md" 2>&1
echo "stream rc=$?"; cat "$out/stream-k.md"
timeout 150 python3 bench/gemm_shapes.py --suite aligned,midsize --workers 15 --compile-first \
    --case-timeout 60 --out "$out/aligned-midsize.md" > "$out/aligned-midsize.log" 2>&1
echo "suites rc=$?"; grep '^- \*\*' "$out/aligned-midsize.md"
