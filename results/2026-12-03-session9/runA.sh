#!/usr/bin/env bash
# Session 9's first call: (1) the GEMM GPU test files (epilogue, FP8, split-K, alignment) on the
# tree with session 8's next-split-k-v4.patch applied (the patch touches every split-K fix-up;
# the other files check session 8's even-N staged defaults, never run on a GPU); (2) split_k_ab.py
# from main and from the patched tree in one call; (3) ncu of hgemm_v7 TAIL_SPLIT=4 (main's
# fix-up) and cuBLAS at 1280x4096x4096, with the source page. Logs land in $OUT as they go.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1
S8=results/2026-12-03-session8
new=/tmp/ab-new; rm -rf $new; mkdir -p $new
cp -r tilemlir dialects test bench pyproject.toml $new/
mkdir -p $new/$S8 && cp $S8/split_k_ab.py $new/$S8/
(cd $new && patch -p1 -s < "$OLDPWD/$S8/next-split-k-v4.patch") || { echo "patch failed"; exit 1; }
(cd $new && PYTHONPATH=/tmp/site:$new:$OLDPWD/.devbundle/pylibs TILEMLIR_CACHE_DIR=/tmp/tc-new \
  timeout 190 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 15 \
  test/python/test_gemm_epilogue_gpu.py test/python/test_fp8_gemm_gpu.py \
  test/python/test_gemm_splitk_gpu.py test/python/test_alignment_gpu.py > "$out/gpu-tests-v4.log" 2>&1)
echo "tests (v4 tree) rc=$?: $(tail -1 "$out/gpu-tests-v4.log")"; grep -E "^FAILED|^ERROR" "$out/gpu-tests-v4.log" | head
TILEMLIR_CACHE_DIR=/tmp/tc-old timeout 75 python3 $S8/split_k_ab.py > "$out/ab-main.log" 2>&1
echo "ab main rc=$?"
(cd $new && PYTHONPATH=/tmp/site:$new:$OLDPWD/.devbundle/pylibs TILEMLIR_CACHE_DIR=/tmp/tc-new \
  timeout 75 python3 $S8/split_k_ab.py > "$out/ab-v4.log" 2>&1)
echo "ab v4 rc=$?"
paste -d'|' <(grep "^| [0-9]" "$out/ab-main.log" | cut -d'|' -f2-5) \
             <(grep "^| [0-9]" "$out/ab-v4.log" | cut -d'|' -f4-6)
export TILEMLIR_CACHE_DIR=/tmp/tc-old
logs=$(mktemp -d)
for who in "v7t4 hgemm_v7 hgemm:KERNEL=hgemm_v7:TAIL_SPLIT=4" "cublas nvjet|sm90|gemm cublas"; do
  set -- $who
  timeout 90 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats \
      --section Occupancy --section WarpStateStats --section SourceCounters --section SchedulerStats \
      --import-source yes --kernel-name "regex:$2" --launch-skip 1 --launch-count 1 \
      -o "$logs/$1" python3 bench/profile_gemm.py "$3" 1280x4096x4096 > "$logs/ncu-$1.log" 2>&1
  echo "ncu $1 rc=$?"
  timeout 30 ncu --import "$logs/$1.ncu-rep" --page details > "$out/ncu-$1.txt" 2>&1
  if [ "$1" != cublas ]; then
    timeout 40 ncu --import "$logs/$1.ncu-rep" --page source --print-source cuda --csv \
        > "$logs/$1-source.csv" 2>&1
    gzip -c "$logs/$1-source.csv" > "$out/ncu-$1-source.csv.gz"
  fi
  grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Grid Size|Registers Per Thread|Executed Instructions  )" "$out/ncu-$1.txt"
done
