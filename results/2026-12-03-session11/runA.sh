#!/usr/bin/env bash
# Session 11, runA: session 10's next-uniform-index.sh with tighter timeouts (one call of 600 s).
# For the next session: next-uniform-index.patch (T.warp_id / T.warpgroup_id read from lane 0
# by a shuffle, so that ptxas keeps code keyed on them on the uniform datapath: hgemm_v7
# 688 -> 616 SASS instructions in all, attention D 256 2672 -> 2576,
# sass-uniform-index.txt). CPU-checked on this session's tree: lit 60 of 60, test/python 1656
# passed (uniform-index-cpu-tests.log). Here: the patched tree's GPU
# tests (Hopper GEMMs, split-K, FP8, attention, norms, language), then the aligned GEMM suite
# and the attention defaults against cuDNN in the tree as it is and patched, one after the
# other in one call. Logs in $OUT.
set -u
out=$(realpath -m "${OUT:-device-out}"); mkdir -p "$out"
export PYTHONUNBUFFERED=1
S=results/2026-12-03-session10
rm -rf /tmp/patched && mkdir /tmp/patched && cp -r . /tmp/patched/ 2>/dev/null
(cd /tmp/patched && patch -p1 -s < $S/next-uniform-index.patch) || { echo "patch failed"; exit 1; }
(cd /tmp/patched && TILEMLIR_CACHE_DIR=/tmp/cache-patched timeout 200 python3 -m pytest -q -rfE \
    -m gpu -o cache_dir=/tmp/pytest-cache -n 8 test/python/test_hgemm_hopper_gpu.py \
    test/python/test_gemm_splitk_gpu.py test/python/test_fp8_gemm_gpu.py \
    test/python/test_attention_gpu.py test/python/test_norms_gpu.py \
    test/python/test_language_gpu.py > "$out/gpu-tests-patched.log" 2>&1)
echo "patched tests rc=$?: $(tail -1 "$out/gpu-tests-patched.log")"
ROOT=$PWD
for tree in $ROOT /tmp/patched; do
  name=$([ "$tree" = "$ROOT" ] && echo main || echo patched)
  (cd $tree && export PYTHONPATH=/tmp/site:$tree:$ROOT/.devbundle/pylibs \
       TILEMLIR_CACHE_DIR=/tmp/cache-$name && \
   timeout 115 python3 bench/gemm_shapes.py --suite aligned --workers 15 --compile-first \
       --case-timeout 60 --out "$out/aligned-$name.md" > "$out/aligned-$name.log" 2>&1; \
   echo "$name aligned: $(grep '^- \*\*' "$out/aligned-$name.md")"; \
   timeout 70 python3 $ROOT/$S/attention_knobs.py defaults > "$out/attention-$name.md" 2>&1; \
   cat "$out/attention-$name.md")
done
