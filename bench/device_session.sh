#!/usr/bin/env bash
# One call on the GPU machine: GPU tests, the demo, GEMM config sweep, benchmarks, a profile.
#   bash bench/device_session.sh [steps...]
#   steps: tests demo sweep gemm twins hopper frontdoor norms streams sanitize overhead profile
#          source stalls compile attention attention-sanitize attention-profile banks
# Logs and results land in $OUT (or ./device-out). Assumes the .devbundle is unpacked and
# PYTHONPATH set (see ../shared/device/README.md). The GPU machine has no package registry:
# tilemlir's pure-Python dependencies travel in .devbundle/pylibs, made once here with
#   pip install --target .devbundle/pylibs filelock platformdirs
# and put on PYTHONPATH (PYTHONPATH=/tmp/site:$PWD:$PWD/.devbundle/pylibs).
set -uo pipefail
out=${OUT:-device-out}; mkdir -p "$out"
steps=${*:-tests demo sweep gemm twins profile}
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
for step in $steps; do
  echo "=== $step $(date -u +%H:%M:%S)"
  case $step in
    tests)   python3 -m pytest -q -rs -m gpu test/python 2>&1 | tee "$out/gpu_tests.log" | tail -15 ;;
    demo)    python3 -m tilemlir.tools.demo 2>&1 | tee "$out/demo.log" ;;
    sweep)   python3 bench/gemm.py --shapes 8192x8192x8192 --dtypes float16 --reps 20 --checks 1 --warmup-ms 300 \
               --kernels "${SWEEP:-mma_sync,mma_sync:BK=32,mma_sync:BK=32:STAGES=5,mma_sync:BM=256:BN=128:STAGES=3,mma_sync:BN=128:STAGES=3}" \
               --out "$out/sweep.md" 2>&1 | tail -8 ;;
    gemm)    python3 bench/gemm.py --kernels "${GEMM:-mma_sync}" --out "$out/gemm-mma-sync.md" 2>&1 | tail -12 ;;
    hopper)  python3 bench/gemm.py --kernels "${HOPPER:-hgemm_v6,hgemm_v5}" --reps 20 --warmup-ms 150 --checks 1 \
               --out "$out/gemm-hopper.md" 2>&1 | tail -24 ;;
    frontdoor) python3 bench/gemm.py --kernels hgemm --dtypes float16,bfloat16 --reps 20 --warmup-ms 150 \
               --checks 1 --out "$out/gemm-sweep-front-door.md" 2>&1 | tail -24 ;;
    norms)   python3 bench/norms.py ${NORMS:-} --out "$out/norms.md" 2>&1 | tail -24 ;;
    compile) python3 bench/compile_time.py --runs 3 --out "$out/compile-time.md" 2>&1 | tail -20 ;;
    source)  ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:gemm --section SourceCounters \
               --import-source yes --page source --print-source cuda,sass \
               python3 bench/profile_gemm.py "${PROFILE:-hgemm_v7}" 4096 > "$out/ncu-source.txt" 2>&1
             grep -c "hgemm_hopper.py" "$out/ncu-source.txt"; head -c 2000 "$out/ncu-source.txt" | tail -c 800 ;;
    attention) python3 bench/attention.py ${ATTENTION:-} --out "$out/attention-sweep.md" 2>&1 | grep "causal=" ;;
    attention-sanitize) for tool in memcheck racecheck synccheck; do
               compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_attention.py \
                 > "$out/sanitizer-attention-$tool.log" 2>&1; echo "$tool rc=$?"; tail -1 "$out/sanitizer-attention-$tool.log"; done ;;
    attention-profile) ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:flash_attention \
               --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy \
               python3 bench/profile_attention.py ${PROFILE_ATTENTION:-8 16 4096 64 causal} > "$out/ncu-attention.txt" 2>&1
             grep -E "Throughput|Issue Slots|Warp Cycles" "$out/ncu-attention.txt" ;;
    banks)   python3 bench/bank_conflicts.py --ncu --out "$out/bank-conflicts.md" 2>&1 | tail -16 ;;
    streams) python3 bench/stream_order.py --out "$out/stream-order.md" 2>&1 | tail -12 ;;
    sanitize) for tool in memcheck racecheck synccheck; do
               compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_hopper.py --small \
                 > "$out/sanitizer-$tool.log" 2>&1; echo "$tool rc=$?"; tail -1 "$out/sanitizer-$tool.log"; done ;;
    overhead) python3 bench/launch_overhead.py --out "$out/launch-overhead.md" 2>&1 | tail -8 ;;
    twins)   python3 bench/gemm.py --kernels hgemm_wgmma_v1@128x128x64,hgemm_wgmma_v2@128x128x4096,hgemm_wgmma_v3 \
               --shapes 4096x4096x4096 --out "$out/gemm-wgmma-twins.md" 2>&1 | tail -8 ;;
    profile) ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:gemm \
               --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
               --section WarpStateStats --section Occupancy --section LaunchStats \
               python3 bench/profile_gemm.py "${PROFILE:-mma_sync}" 8192 > "$out/ncu.txt" 2>&1; tail -5 "$out/ncu.txt" ;;
    stalls)  metrics=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
             for r in wait math_pipe_throttle selected long_scoreboard barrier not_selected \
                      short_scoreboard mio_throttle lg_throttle dispatch_stall drain; do
               metrics="$metrics,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
             ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:gemm --metrics "$metrics" \
               python3 bench/profile_gemm.py "${PROFILE:-mma_sync}" 8192 2>&1 | grep -E "stalled|hmma" \
               | tee "$out/ncu_stalls.txt" ;;
  esac
done
