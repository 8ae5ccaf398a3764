#!/usr/bin/env bash
# Session 10, call E (the last, on the 315 s of device time left): D 256 attention without the
# intra-warpgroup pipeline against the default and cuDNN (attention_knobs.py d256); then
# STREAM_K's fix-up summing slot by slot (bed5bc9): its GPU tests and compute-sanitizer on
# smoke_stream_k.py. Logs in $OUT.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
S=results/2026-12-03-session9
timeout 70 python3 results/2026-12-03-session10/attention_knobs.py d256 > "$out/attention-d256.md" 2>&1
echo "d256 rc=$?"; cat "$out/attention-d256.md"
timeout 50 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_gemm_splitk_gpu.py -k "STREAM or TAIL" > "$out/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$out/gpu-tests.log")"
for t in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $t --report-api-errors no --error-exitcode 9 \
      python3 $S/smoke_stream_k.py > "$out/sanitizer-stream-k-$t.log" 2>&1 &
done
wait
for t in memcheck racecheck synccheck; do
  echo "$t: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-stream-k-$t.log" | tail -1)"
done
