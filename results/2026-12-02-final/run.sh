#!/usr/bin/env bash
# The session's last H200 call (2026-12-02): GPU tests of everything new in four groups side by
# side, compute-sanitizer on the smoke scripts side by side, then the timings alone on the GPU.
# Run from the project root with the .devbundle unpacked and PYTHONPATH set, `old/` holding the
# tree at 13bb44b (git archive 13bb44b tilemlir bench | tar -x -C old), logs in $OUT.
set -u
out=${OUT:-device-out}; mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
T=test/python
echo "=== tests $(date -u +%T)"
run() { timeout "$1" "${@:3}" > "$out/$2" 2>&1; echo "$2 rc=$?: $(grep -E '(passed|failed|error)' "$out/$2" | tail -1)"; }
run 160 tests-0.log python3 -m pytest -q -rfE -m gpu -p no:cacheprovider $T/test_run_time_dims_gpu.py \
    $T/test_driver_path_gpu.py $T/test_cuda_graph_gpu.py $T/test_do_bench.py $T/test_gemm_decode.py \
    $T/test_gemm_splitk_gpu.py -k "front_door or run_time or driver or graph or spin or decode or stream or tensor or cupy" &
run 160 tests-1.log python3 -m pytest -q -rfE -m gpu -p no:cacheprovider $T/test_norms_gpu.py &
run 160 tests-2.log python3 -m pytest -q -rfE -m gpu -p no:cacheprovider $T/test_attention_gpu.py \
    -k "sweep or run_time or recompiles or front_door" &
run 160 tests-3.log python3 -m pytest -q -rfE -m gpu -p no:cacheprovider $T/test_gemm_epilogue_gpu.py \
    $T/test_fp8_gemm_gpu.py &
wait
echo "=== sanitizers $(date -u +%T)"
for tool in memcheck racecheck synccheck; do
  for smoke in smoke_shapes.py smoke_norms.py; do
    run 65 "sanitizer-${smoke%.py}-$tool.log" compute-sanitizer --tool $tool --report-api-errors no \
        python3 bench/$smoke &
  done
done
run 65 sanitizer-smoke_attention-memcheck.log compute-sanitizer --tool memcheck --report-api-errors no \
    python3 bench/smoke_attention.py &
for tool in memcheck racecheck; do
  run 65 sanitizer-smoke_fp8-$tool.log compute-sanitizer --tool $tool --report-api-errors no python3 bench/smoke_fp8.py &
done
wait
for f in "$out"/sanitizer-*.log; do echo "$(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1)"; done
echo "=== timings $(date -u +%T)"
run 40 overhead-new.log python3 bench/launch_overhead.py --calls 10000 --out "$out/launch-overhead.md"
run 30 overhead-old.log python3 old/bench/launch_overhead.py --calls 10000 --out "$out/launch-overhead-13bb44b.md"
run 45 fp8.log python3 bench/fp8_gemm.py --shapes 8192x8192x8192,4096x4096x4096 --scalings tensor,block \
    --accum promoted --out "$out/fp8-gemm.md"
G="--kernels hgemm --dtypes float16 --reps 20 --warmup-ms 300 --settle-s 2 --checks 1"
S="--shapes 8192x8192x8192,4096x4096x4096,2048x2048x2048,4096x4096x512,4096x28672x4096,3000x5120x2056"
run 60 gemm-sweep-new.log python3 bench/gemm.py $G $S --out "$out/gemm-sweep.md"
run 60 gemm-sweep-old.log python3 old/bench/gemm.py $G $S --out "$out/gemm-sweep-13bb44b.md"
run 55 gemm-shapes.log python3 bench/gemm.py $G --settle-s 0 --out "$out/gemm-unaligned-decode.md" \
    --shapes 3333x4444x5552,2999x8193x769,1785x4444x4095,1000x3000x1001,1x4096x4096,16x4096x4096,64x4096x4096,1x14336x4096,1x128256x4096
run 35 attention.log python3 bench/attention.py --fixed-shapes --seq 4096 --head-dim 64,128 --dtype float16 \
    --causal both --out "$out/attention-fixed-vs-run-time.md"
echo "=== done $(date -u +%T)"
