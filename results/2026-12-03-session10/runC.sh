#!/usr/bin/env bash
# Session 10, call C: STREAM_K with the fix-up's sum unrolled over the tile's slots (a run-time
# arrival count had left a loop that waited for each load in turn): its GPU tests, then the
# stream set of midsize_tiles.py again (runA's was 0.19-0.88x cuBLAS); then the attention knobs
# against cuDNN (attention_knobs.py). Logs in $OUT.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
S=results/2026-12-03-session9
timeout 90 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_gemm_splitk_gpu.py -k "STREAM or TAIL" > "$out/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$out/gpu-tests.log")"
MIDSIZE_SET=stream timeout 230 python3 $S/midsize_tiles.py both > "$out/stream-k.md" 2>&1
echo "stream rc=$?"; cat "$out/stream-k.md"
timeout 240 python3 results/2026-12-03-session10/attention_knobs.py > "$out/attention-knobs.md" 2>&1
echo "knobs rc=$?"; cat "$out/attention-knobs.md"
