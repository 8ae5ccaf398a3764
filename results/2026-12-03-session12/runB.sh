#!/usr/bin/env bash
# The attention pipeline carried across items (CARRY): the attention GPU tests, the timing
# against CARRY=False and cuDNN (attention_carry.py), and compute-sanitizer on
# bench/smoke_attention.py (which now has front-door cases of several items a CTA).
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export PYTHONUNBUFFERED=1 TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
S=results/2026-12-03-session12
timeout 150 python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache -n 8 \
    test/python/test_attention_gpu.py > "$logs/gpu-tests.log" 2>&1
echo "gpu tests rc=$?: $(tail -1 "$logs/gpu-tests.log")"
timeout 190 python3 $S/attention_carry.py > "$logs/attention-carry.md" 2>&1
echo "carry rc=$?"; cat "$logs/attention-carry.md"
for tool in memcheck racecheck synccheck; do
  timeout 70 compute-sanitizer --tool $tool python3 bench/smoke_attention.py \
      > "$logs/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer-$tool.log" | tail -1)"
done
tar -czf "$out/runB-logs.tar.gz" -C "$logs" .
