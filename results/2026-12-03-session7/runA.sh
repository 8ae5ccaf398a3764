#!/usr/bin/env bash
# Session 7, first call: the realigned producer for odd K (session 6's patch, applied):
# its GPU tests, odd_k.py against the parent tree (b39e113, parent-tree/) in one run, then the
# random sweep (seed 21, 150 shapes x 2 dtypes, as sessions 4 and 5) on this tree.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
S=results/2026-12-02-session6
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
timeout 170 $P -n 12 test/python/test_gemm_splitk_gpu.py test/python/test_alignment_gpu.py \
    test/python/test_masked_copies_gpu.py -k "unaligned or front_door or misaligned or shared or shifted" \
    > "$logs/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
(cd parent-tree && PYTHONPATH=/tmp/site:$PWD:$OLDPWD/.devbundle/pylibs TILEMLIR_CACHE_DIR=/tmp/tc-parent \
  timeout 80 python3 "$OLDPWD/$S/odd_k.py" > "$logs/odd-k-parent.log" 2>&1; echo "parent rc=$?")
timeout 80 python3 $S/odd_k.py > "$logs/odd-k-this.log" 2>&1; echo "this rc=$?"
timeout 200 python3 bench/gemm_shapes.py --workers 15 --case-timeout 60 --suite random --count 150 \
    --random-reps 6 --compile-first --out "$logs/random.md" > "$logs/random.log" 2>&1
echo "random rc=$?"; grep "^- \*\*random" "$logs/random.md"
tar -czf "$out/logs.tar.gz" -C "$logs" .
echo "-- parent"; tail -8 "$logs/odd-k-parent.log"; echo "-- this"; tail -8 "$logs/odd-k-this.log"
