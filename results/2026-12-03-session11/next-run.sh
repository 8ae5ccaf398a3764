#!/usr/bin/env bash
# For the next session's first call: the GPU tests of the tree whose warp-index shuffle sits at
# the kernel's top (994b11d: PTX reordered against 4bc70e4, which runA tested; not run on the
# GPU in session 11); the norms at 65536-128256 with 64 and 96 KiB staged; then
# next-ncu-norms.sh. Logs in one archive in $OUT.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
timeout 240 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_hgemm_hopper_gpu.py test/python/test_gemm_splitk_gpu.py \
    test/python/test_fp8_gemm_gpu.py test/python/test_attention_gpu.py \
    test/python/test_norms_gpu.py test/python/test_language_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "gpu tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
# rows that keep an SM, with less staged so that two CTAs share it (session 4 measured this
# with softmax's 8-instruction exp only)
timeout 150 python3 bench/norms.py --lengths 65536,100000,128256 --dtypes bfloat16 \
    --stage-kib 64,96 --rep-ms 25 --out "$logs/norms-staging.md" > "$logs/norms-staging.log" 2>&1
echo "staging rc=$?"; grep -E "^ *(softmax|rms|layer)" "$logs/norms-staging.log"
mkdir -p "$logs/ncu"; OUT=$logs/ncu timeout 300 bash results/2026-12-03-session11/next-ncu-norms.sh > "$logs/ncu-norms.log" 2>&1
echo "ncu rc=$?"; cat "$logs/ncu-norms.log"
tar -czf "$out/next-run-logs.tar.gz" -C "$logs" .
