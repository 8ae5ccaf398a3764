#!/usr/bin/env bash
# Call 7: realigned loads from five 4-byte words a run (not two 16-byte granules and a run-time
# word choice), the weight fetched a tile ahead, LayerNorm 8 elements a thread a tile: the
# norms timed on long ragged rows with the aligned neighbours in the same run; the norms GPU
# sweep and the masked-copy GPU tests; compute-sanitizer on the norms' smoke cases.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error|ERROR SUMMARY|RACECHECK SUMMARY)' "$logs/$2" | tail -1)"; }
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
echo "=== bench $(date -u +%T)"
run 240 norms.log python3 bench/norms.py --lengths 20001,32000,32001,50256,50257,50258,128256,128257 --rep-ms 30 --out "$logs/norms.md"
echo "=== tests and sanitizers $(date -u +%T)"
run 300 gpu-tests.log $P -n 8 test/python/test_norms_gpu.py test/python/test_masked_copies_gpu.py &
for tool in memcheck racecheck synccheck; do
  run 300 "sanitizer-smoke_norms-$tool.log" compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_norms.py &
done
wait
tar -czf "$out/logs.tar.gz" -C "$logs" .
grep -E "^\| (softmax|rms|layer)" "$logs/norms.md" | awk -F'|' '{print $2,$3,$4,$5,$11,$12}'
echo "=== done $(date -u +%T)"
