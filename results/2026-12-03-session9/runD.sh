#!/usr/bin/env bash
# Session 9's last call, on c727051: the split-K GPU case moved from test_hgemm_hopper_gpu.py
# (128 x 320 tiles with TAIL_SPLIT, which needs the workspace that file's harness does not
# pass), then the random sweep (seed 21, 150 shapes in both dtypes) on the final tree.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 100 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 4 \
    test/python/test_gemm_splitk_gpu.py -k "BN320 or TAIL" > "$out/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$out/gpu-tests.log")"; grep -E "^FAILED|^ERROR" "$out/gpu-tests.log" | head
timeout 330 python3 bench/gemm_shapes.py --workers 15 --case-timeout 60 --suite random --count 150 \
    --random-reps 6 --compile-first --out "$out/random.md" > "$out/random.log" 2>&1
echo "random rc=$?: $(grep '^- \*\*random' "$out/random.md")"
python3 results/2026-12-03-session8/classes.py "$out/random.md"
