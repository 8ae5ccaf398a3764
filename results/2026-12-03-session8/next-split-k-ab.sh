#!/usr/bin/env bash
# A/B of next-split-k-v4.patch (split-K partials as each thread's registers in 16-byte runs,
# not the tile's rows in 8-byte pairs: half the fix-up's loads and stores, the same bytes and
# registers; interpreter- and ptxas-checked only): the split-K GPU tests on the patched tree,
# then split_k_ab.py from each tree, twice, alternating. Land the patch if it is no slower.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1
S=results/2026-12-03-session8
new=/tmp/ab-new; rm -rf $new; mkdir -p $new
cp -r tilemlir dialects test bench results pyproject.toml $new/ 2>/dev/null
(cd $new && { git apply "$OLDPWD/$S/next-split-k-v4.patch" 2>/dev/null || patch -p1 < "$OLDPWD/$S/next-split-k-v4.patch"; }) || { echo "patch failed"; exit 1; }
(cd $new && PYTHONPATH=/tmp/site:$new:$OLDPWD/.devbundle/pylibs TILEMLIR_CACHE_DIR=/tmp/tc-new \
  timeout 200 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 14 \
  test/python/test_gemm_splitk_gpu.py -k "split or swapped or decode or tail" > "$out/gpu-tests-new.log" 2>&1)
echo "tests (patched) rc=$?: $(tail -1 "$out/gpu-tests-new.log")"
for i in 1 2; do
  TILEMLIR_CACHE_DIR=/tmp/tc-old timeout 100 python3 $S/split_k_ab.py > "$out/ab-old-$i.log" 2>&1
  (cd $new && PYTHONPATH=/tmp/site:$new:$OLDPWD/.devbundle/pylibs TILEMLIR_CACHE_DIR=/tmp/tc-new \
    timeout 100 python3 $S/split_k_ab.py > "$out/ab-new-$i.log" 2>&1)
done
paste -d'|' <(grep "^| [0-9]" "$out/ab-old-2.log" | cut -d'|' -f2-5) \
             <(grep "^| [0-9]" "$out/ab-new-2.log" | cut -d'|' -f4-6)
