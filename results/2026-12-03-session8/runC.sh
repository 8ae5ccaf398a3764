#!/usr/bin/env bash
# Session 8, last device call (about 300 s of device time left, so a short one): the staged
# stores for an even N at K <= 64 (parts.STAGED_EVEN_MAX_K) at the front door: the GPU tests of
# the GEMM epilogues, FP8 and split-K on the unaligned, staged and swapped cases (runB's full
# run stopped at its cap at 81%, none failed), then (f16) ten shapes with K <= 64 and N not a
# multiple of 8 (from runB/random.md's K <= 64 class) against cuBLAS and Triton.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 100 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 15 \
    test/python/test_gemm_epilogue_gpu.py test/python/test_fp8_gemm_gpu.py \
    test/python/test_gemm_splitk_gpu.py -k "staged or swapped or unaligned or 1003 or 1001 or 1002 or 447 or 2050" \
    > "$out/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$out/gpu-tests.log")"; grep -E "^FAILED|^ERROR" "$out/gpu-tests.log" | head
SHAPES=5518x6246x20,5993x2814x46,5122x6410x2,644x7230x8,1482x2261x3,1027x7233x2,1560x2881x40,691x4989x50,2048x4100x16,777x11010x64
timeout 70 python3 bench/gemm_shapes.py --suite given --shapes $SHAPES --dtypes float16 --workers 15 \
    --compile-first --case-timeout 30 --out "$out/given.md" > "$out/given.log" 2>&1
echo "given rc=$?"; grep "^- \*\*given" "$out/given.md"; grep "^| given" "$out/given.md" | cut -d'|' -f3,8,9,10,13
