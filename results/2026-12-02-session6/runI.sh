#!/usr/bin/env bash
# Call 9: the front door's new default for rows that keep an SM to themselves (tiles of 32
# elements a thread, 16-bit rows on 16 bytes): the norms timed at the long widths, both dtypes,
# with 32000 and 50257 beside; the norms' GPU sweep (65536, 128256, 131071, 131072 among its
# widths), the masked-copy GPU tests (shifted_rows new) and compute-sanitizer on the smoke cases.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
run() { timeout "$1" "${@:3}" > "$logs/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error|ERROR SUMMARY|RACECHECK SUMMARY)' "$logs/$2" | tail -1)"; }
P="python3 -m pytest -q -rfE -m gpu -o cache_dir=/tmp/pytest-cache"
run 240 norms.log python3 bench/norms.py --lengths 1024,4096,32000,50257,65536,100000,128256,151936 --rep-ms 25 --out "$logs/norms.md"
run 240 gpu-tests.log $P -n 8 test/python/test_norms_gpu.py test/python/test_masked_copies_gpu.py &
for tool in memcheck racecheck; do
  run 240 "sanitizer-smoke_norms-$tool.log" compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_norms.py &
done
wait
tar -czf "$out/logs.tar.gz" -C "$logs" .
grep -E "^\| (softmax|rms|layer)" "$logs/norms.md" | awk -F'|' '{print $2,$3,$4,$11,$12}'
