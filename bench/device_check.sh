#!/usr/bin/env bash
# One call on the GPU machine that checks a change: chosen GPU test files, compute-sanitizer on
# smoke scripts, and host time per call; logs in $OUT (or ./device-out).
#   TESTS="test/python/a_gpu.py ..." SMOKES="smoke_shapes.py 'smoke_hopper.py --small'" \
#   bash bench/device_check.sh [steps...]        steps: tests sanitize overhead (default all)
# TESTS may hold groups separated by ';': they run at once, one pytest each (compiles are CPU
# work and the GPU tests are small, so groups finish sooner side by side).
# Set up as for bench/device_session.sh (the .devbundle unpacked, PYTHONPATH set). Each step
# has a time limit (TESTS_S, SANITIZE_S, OVERHEAD_S seconds) so that one step cannot eat the
# call; a step that runs out says so in its log.
set -uo pipefail
out=${OUT:-device-out}; mkdir -p "$out"
steps=${*:-tests sanitize overhead}
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
status=0
for step in $steps; do
  echo "=== $step $(date -u +%H:%M:%S)"
  case $step in
    tests)    IFS=';' read -ra groups <<< "${TESTS:-test/python}"; pids=()
              for i in "${!groups[@]}"; do
                timeout "${TESTS_S:-300}" python3 -m pytest -q -rs -m gpu -p no:cacheprovider \
                  ${groups[$i]} > "$out/gpu-tests-$i.log" 2>&1 & pids+=($!)
              done
              for i in "${!pids[@]}"; do
                wait "${pids[$i]}" || status=1
                echo "group $i: $(grep -E '(passed|failed|error)' "$out/gpu-tests-$i.log" | tail -1)"
                grep -E "^(FAILED|ERROR)" "$out/gpu-tests-$i.log" | head -20
              done ;;
    sanitize) eval "smokes=(${SMOKES:-smoke_shapes.py})"
              for smoke in "${smokes[@]}"; do for tool in memcheck racecheck synccheck; do
                log="$out/sanitizer-${smoke%%.py*}-$tool.log"
                timeout "${SANITIZE_S:-120}" compute-sanitizer --tool $tool --report-api-errors no \
                  python3 bench/$smoke > "$log" 2>&1
                rc=$?; [ $rc = 0 ] || status=1
                echo "$tool $smoke rc=$rc: $(tail -1 "$log")"
              done; done ;;
    overhead) timeout "${OVERHEAD_S:-120}" python3 bench/launch_overhead.py \
                --out "$out/launch-overhead.md" > "$out/launch-overhead.log" 2>&1 || status=1
              tail -12 "$out/launch-overhead.log" ;;
    *)        echo "unknown step $step"; status=1 ;;
  esac
done
exit $status
