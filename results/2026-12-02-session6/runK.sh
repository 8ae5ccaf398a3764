#!/usr/bin/env bash
# For the next session (not run: no device time was left). Apply next-realigned-producer.patch
# first: the realigned producer for 16-bit rows on 2 bytes (copy_async_masked/realign.py:
# GEMMs with odd K; lit passes, PTX 5 words and a 16-byte shared store per chunk). The GPU tests of odd-K GEMMs (front door, cp.async candidates, misaligned
# views) and masked copies; then odd_k.py on the parent tree (parent-tree/ = git archive of the
# commit before, element by element) and on this one.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
timeout 150 $P -n 12 test/python/test_gemm_splitk_gpu.py test/python/test_alignment_gpu.py \
    test/python/test_masked_copies_gpu.py -k "unaligned or front_door or misaligned or shared or shifted" \
    > "$logs/gpu-tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
(cd parent-tree && PYTHONPATH=/tmp/site:$PWD:$OLDPWD/.devbundle/pylibs TILEMLIR_CACHE_DIR=/tmp/tc-parent \
  timeout 60 python3 "$OLDPWD/results/2026-12-02-session6/odd_k.py" > "$logs/odd-k-parent.log" 2>&1; echo "parent rc=$?")
timeout 60 python3 results/2026-12-02-session6/odd_k.py > "$logs/odd-k-this.log" 2>&1; echo "this rc=$?"
tar -czf "$out/logs.tar.gz" -C "$logs" .
echo "-- parent"; cat "$logs/odd-k-parent.log" | tail -8; echo "-- this"; tail -8 "$logs/odd-k-this.log"
