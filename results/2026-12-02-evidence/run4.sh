#!/usr/bin/env bash
# Call 4 (72 s, the session's last device time): the host-time test alone, then bench/norms.py
# after its tolerance fix (per element, one ulp of the output type relative).
set -u
out=${OUT:-device-out}; mkdir -p "$out"
timeout 25 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/test_do_bench.py -k spin_keeps > "$out/spin-test.log" 2>&1
tail -1 "$out/spin-test.log"
timeout 85 python3 bench/norms.py --out "$out/norms.md" > "$out/norms.log" 2>&1
echo rc=$?
