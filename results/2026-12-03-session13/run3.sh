#!/usr/bin/env bash
# The final tree's FP8 GPU tests and the FP8 front door's 10-shape sweep with its own
# configurations (promoted: tensor, row and block scales; fast: tensor), torch._scaled_mm in
# the same process on the same inputs.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
timeout 120 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_fp8_gemm_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "fp8 gpu tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
timeout 330 python3 bench/fp8_gemm.py --scalings tensor,row,block --accum promoted,fast \
    --rep-ms 25 --out "$logs/fp8-sweep.md" > "$logs/fp8-sweep.log" 2>&1
echo "sweep rc=$?"
grep -E "^\| [0-9]" "$logs/fp8-sweep.md" | awk -F'|' '{print $2,$3,$4,$5,$6,$7,$12}'
grep -E "^\| [a-z]" "$logs/fp8-sweep.md" | tail -6
tar -czf "$out/run3-logs.tar.gz" -C "$logs" .
