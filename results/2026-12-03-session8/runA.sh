#!/usr/bin/env bash
# Session 8, second device call (the first ran session 7's runD.sh): memcheck again without the
# torch's cuGetProcAddress probes (API errors, not memory errors: runD's 34), the staged
# epilogue for FP8 and the fused GEMM against their direct stores, and every hgemm_decode
# candidate (BN 64 / 128, SPLIT_K 1-16) on decode and narrow-N shapes with K not a multiple
# of 8 (the realigned producer) and a few with K a multiple of 8.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 100 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
    python3 bench/smoke_shapes.py > "$out/sanitizer-memcheck.log" 2>&1
echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY' "$out/sanitizer-memcheck.log" | tail -1)"
SHAPES=1x4096x4095,1x4610x5313,16x14336x4095,64x4096x4097,8x4096x14335,32x1000x777,4x32000x4095,17x4354x1529,516x1x5323,664x62x5507,837x5x8051,4300x41x347,2000x16x4095,1000x1x4096,300x16x8192,6665x1x8152
timeout 330 python3 bench/gemm_shapes.py --suite given --shapes $SHAPES --dtypes float16 \
    --candidates 32 --workers 14 --compile-first --flush read --case-timeout 60 \
    --out "$out/decode-candidates.md" > "$out/decode-candidates.log" 2>&1
echo "candidates rc=$?"; grep -E "^\| given" "$out/decode-candidates.md" | cut -d'|' -f3,7,8,10,13 | head -20
timeout 150 python3 results/2026-12-03-session8/staged_defaults.py > "$out/staged_defaults.log" 2>&1
echo "staged rc=$?"; grep "^|" "$out/staged_defaults.log"
