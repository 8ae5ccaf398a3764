#!/usr/bin/env bash
# Call 10: after ffe0bbc (a dynamic offset along a dim of extent 1 kept): the masked-copy GPU
# tests (shifted_rows N = 1 failed in runI), the norms' sweep, and the GPU tests of run-time
# dims, the launch path, the language and the decode GEMM (kernels with dims of extent 1).
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
timeout 400 $P -n 12 test/python/test_masked_copies_gpu.py test/python/test_norms_gpu.py \
    test/python/test_run_time_dims_gpu.py test/python/test_driver_path_gpu.py \
    test/python/test_language_gpu.py test/python/test_gemm_splitk_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "rc=$?: $(tail -1 "$logs/gpu-tests.log")"
tar -czf "$out/logs.tar.gz" -C "$logs" .
