#!/usr/bin/env bash
# 4fd1f73 (two stages of Q, O in 32-column parts; runC timed the same PTX but for one
# bar.sync's place): the attention GPU tests, the general suite against torch's backends, and
# compute-sanitizer on bench/smoke_attention.py.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
timeout 120 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_attention_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "gpu tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
timeout 150 python3 bench/attention.py --suite general --out "$logs/attention-general.md" \
    > "$logs/attention-general.log" 2>&1
echo "general rc=$?: $(tail -1 "$logs/attention-general.log")"
grep -E "^\| [0-9]" "$logs/attention-general.md" | awk -F'|' '{print $2,$3,$4,$10,$13}'
for tool in memcheck racecheck synccheck; do
  timeout 55 compute-sanitizer --tool $tool python3 bench/smoke_attention.py \
      > "$logs/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-$tool.log" | tail -1)"
done
tar -czf "$out/runD-logs.tar.gz" -C "$logs" .
