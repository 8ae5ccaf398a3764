#!/usr/bin/env bash
# Session 11, runD: long rows' first pass takes the unstaged tiles first (unstaged-first.patch:
# their global loads in flight beside the staged tiles' cp.async from the start; rows over
# 192 KiB: N = 100000 has 1 unstaged tile of 7, 128256 2 of 8, 151936 4 of 10). The three norms
# at those widths, bfloat16, with the tree as it was (the patch reversed) and as it is, one
# after the other; then the norms' GPU sweep and compute-sanitizer (memcheck, racecheck,
# synccheck) on bench/smoke_norms.py, in parallel. Logs in one archive.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1
S=results/2026-12-03-session11
ROOT=$PWD
rm -rf /tmp/before && mkdir /tmp/before && cp -r . /tmp/before/ 2>/dev/null
(cd /tmp/before && patch -p1 -R -s < $S/unstaged-first.patch) || { echo "patch -R failed"; exit 1; }
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error|ERROR SUMMARY|RACECHECK SUMMARY)' "$logs/$2" | tail -1)"; }
for tree in /tmp/before $ROOT; do
  name=$([ "$tree" = "$ROOT" ] && echo after || echo before)
  (cd $tree && export PYTHONPATH=/tmp/site:$tree:$ROOT/.devbundle/pylibs TILEMLIR_CACHE_DIR=/tmp/cache-$name && \
   run 150 norms-$name.log python3 bench/norms.py --lengths 100000,128256,151936 --dtypes bfloat16 --rep-ms 25 --out "$logs/norms-$name.md")
done
export TILEMLIR_CACHE_DIR=/tmp/cache-after
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
run 200 gpu-tests.log $P -n 8 test/python/test_norms_gpu.py &
for tool in memcheck racecheck synccheck; do
  run 200 "sanitizer-smoke_norms-$tool.log" compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_norms.py &
done
wait
tar -czf "$out/runD-logs.tar.gz" -C "$logs" .
paste <(grep -E "^\| (softmax|rms|layer)" "$logs/norms-before.md" | awk -F'|' '{print $2,$3,$4,$11}') \
      <(grep -E "^\| (softmax|rms|layer)" "$logs/norms-after.md" | awk -F'|' '{print $11}')
