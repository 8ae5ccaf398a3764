#!/usr/bin/env bash
# For the next session's first call (this one's device time ran out): what session 8 changed,
# checked whole. The GPU tests of the GEMM files (runB's cap cut one; runC ran a subset);
# compute-sanitizer on bench/smoke_shapes.py with its new even-N K <= 64 case; the decode suite
# (the refitted model keeps its picks: no change expected from session 4's 1.052x); the random
# sweep on the even-N rule (seed 21, as runB). Logs in one archive (the device tool returns at
# most eight files), the summary printed.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 240 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 15 \
    test/python/test_gemm_epilogue_gpu.py test/python/test_fp8_gemm_gpu.py \
    test/python/test_gemm_splitk_gpu.py test/python/test_alignment_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"; grep -E "^FAILED|^ERROR" "$logs/gpu-tests.log" | head
for t in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $t --report-api-errors no --error-exitcode 9 \
      python3 bench/smoke_shapes.py > "$logs/sanitizer-smoke_shapes-$t.log" 2>&1 &
done
wait
for t in memcheck racecheck synccheck; do
  echo "$t: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-smoke_shapes-$t.log" | tail -1)"
done
timeout 120 python3 bench/gemm_shapes.py --suite decode --workers 15 --compile-first --flush read \
    --case-timeout 60 --out "$logs/decode.md" > "$logs/decode.log" 2>&1
echo "decode rc=$?: $(grep '^- \*\*decode' "$logs/decode.md")"
timeout 180 python3 bench/gemm_shapes.py --workers 15 --case-timeout 60 --suite random --count 150 \
    --random-reps 6 --compile-first --out "$logs/random.md" > "$logs/random.log" 2>&1
echo "random rc=$?: $(grep '^- \*\*random' "$logs/random.md")"
python3 results/2026-12-03-session8/classes.py "$logs/random.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
