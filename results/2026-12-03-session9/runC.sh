#!/usr/bin/env bash
# Session 9's third call, on the tree with hgemm_v7's 128 x 192 / 128 x 320 tiles and the
# refitted model: the GPU tests of the hand-written kernels' file (new v7 cases), split-K and
# the front door's alignment cases; pick_ab.py (every pick the model changed, old against new,
# both dtypes); the mid-size suite through bench/gemm_shapes.py (with Triton). Logs in $OUT.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
S=results/2026-12-03-session9
timeout 170 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 15 \
    test/python/test_hgemm_hopper_gpu.py test/python/test_gemm_splitk_gpu.py \
    test/python/test_alignment_gpu.py > "$out/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$out/gpu-tests.log")"; grep -E "^FAILED|^ERROR" "$out/gpu-tests.log" | head
timeout 170 python3 $S/pick_ab.py float16 > "$out/pick-ab-f16.md" 2>&1
echo "pick ab f16 rc=$?"; tail -1 "$out/pick-ab-f16.md"
timeout 120 python3 $S/pick_ab.py bfloat16 > "$out/pick-ab-bf16.md" 2>&1
echo "pick ab bf16 rc=$?"; tail -1 "$out/pick-ab-bf16.md"
timeout 120 python3 bench/gemm_shapes.py --suite midsize --workers 15 --compile-first \
    --case-timeout 60 --out "$out/midsize.md" > "$out/midsize.log" 2>&1
echo "midsize rc=$?: $(grep '^- \*\*midsize' "$out/midsize.md")"
grep "^| midsize" "$out/midsize.md" | awk -F'|' '$8+0 < 0.95 {print $3, $4, $8, $(NF-1)}'
