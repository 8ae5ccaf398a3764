#!/usr/bin/env bash
# Session 8, third device call: the refitted decode model, the swapped kernel as the front
# door's choice for N <= 64, and the staged stores as FP8's and the fused GEMM's default for
# an odd N: their GPU tests; narrow_n.py (tiled against the swapped pick); the 16 shapes of
# runA at the front door (f16, bf16); epilogue_k.py (even N % 8 != 0: staged against direct
# stores over K); the random sweep (seed 21, as session 7's runA);
# compute-sanitizer on bench/smoke_shapes.py and bench/smoke_fp8.py (the API errors of torch's
# driver-entry probes left out).
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
S=results/2026-12-03-session8
timeout 100 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 14 \
    test/python/test_gemm_epilogue_gpu.py test/python/test_fp8_gemm_gpu.py \
    test/python/test_gemm_splitk_gpu.py > "$out/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$out/gpu-tests.log")"; grep -E "^FAILED|^ERROR" "$out/gpu-tests.log" | head
timeout 60 python3 results/2026-12-03-session7/narrow_n.py > "$out/narrow_n.log" 2>&1
echo "narrow rc=$?"; grep "^|" "$out/narrow_n.log"
SHAPES=1x4096x4095,1x4610x5313,16x14336x4095,64x4096x4097,8x4096x14335,32x1000x777,4x32000x4095,17x4354x1529,516x1x5323,664x62x5507,837x5x8051,4300x41x347,2000x16x4095,1000x1x4096,300x16x8192,6665x1x8152
timeout 90 python3 bench/gemm_shapes.py --suite given --shapes $SHAPES --workers 14 \
    --compile-first --flush read --case-timeout 60 --out "$out/given.md" > "$out/given.log" 2>&1
echo "given rc=$?"; grep "^- \*\*given" "$out/given.md"
timeout 80 python3 $S/epilogue_k.py > "$out/epilogue_k.log" 2>&1
echo "epilogue_k rc=$?"; grep "^|" "$out/epilogue_k.log"
timeout 170 python3 bench/gemm_shapes.py --workers 15 --case-timeout 60 --suite random --count 150 \
    --random-reps 6 --compile-first --out "$out/random.md" > "$out/random.log" 2>&1
echo "random rc=$?"; grep "^- \*\*random" "$out/random.md"
for t in racecheck synccheck memcheck; do
  for s in smoke_shapes smoke_fp8; do
    timeout 80 compute-sanitizer --tool $t --report-api-errors no --error-exitcode 9 \
        python3 bench/$s.py > "$out/sanitizer-$s-$t.log" 2>&1 &
  done
done
wait
for f in "$out"/sanitizer-*.log; do
  echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) / $(grep -E 'cases right|^[0-9]+ of' $f | tail -1)"
done
