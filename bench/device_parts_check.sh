#!/usr/bin/env bash
# The GPU check of the kernels built from the shared parts (tilemlir/kernels/parts, issue 20):
# hgemm_v6, v7, v8, hgemm_fused and flash attention, on the H200.
#   bash bench/device_parts_check.sh [steps...]        steps: hashes tests sanitize (default all)
# Logs land in $OUT (or ./device-out). Set up as for bench/device_session.sh: the .devbundle
# unpacked and PYTHONPATH set (../shared/device/README.md), e.g. with the run tool:
#   for f in .devbundle/*.tar.xz; do tar -xJf $f -C /tmp; done;
#   export PYTHONPATH=/tmp/site:$PWD:$PWD/.devbundle/pylibs PYTHONUNBUFFERED=1;
#   bash bench/device_parts_check.sh                  (carry: [".devbundle"])
# hashes:   their PTX against the baseline the rebuild kept byte-identical (the tests below then
#           run the code that was measured before; a "changed" line means they do not)
# tests:    the GPU tests of those kernels against torch (numerics, ragged shapes, split-K,
#           clusters, the fused epilogue, attention causal and not)
# sanitize: compute-sanitizer memcheck / racecheck / synccheck on the Hopper GEMM and attention
#           smoke runs (the barriers and hand-offs the parts now name)
set -uo pipefail
out=${OUT:-device-out}; mkdir -p "$out"
steps=${*:-hashes tests sanitize}
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
status=0
for step in $steps; do
  echo "=== $step $(date -u +%H:%M:%S)"
  case $step in
    hashes) python3 bench/ptx_hashes.py -k 'hgemm_v[678]\(|hgemm_fused|flash_attention' -j 8 \
              --compare results/2026-12-01-parity/ptx-hashes-main.txt > "$out/ptx-hashes-parts.txt" 2>&1 \
              || status=1
            tail -3 "$out/ptx-hashes-parts.txt" ;;
    tests)  python3 -m pytest -q -rs -m gpu test/python/test_hgemm_hopper_gpu.py \
              test/python/test_gemm_splitk_gpu.py test/python/test_gemm_epilogue_gpu.py \
              test/python/test_attention_gpu.py > "$out/gpu-tests-parts.log" 2>&1 || status=1
            tail -15 "$out/gpu-tests-parts.log" ;;
    sanitize) for tool in memcheck racecheck synccheck; do
              for smoke in "smoke_hopper.py --small" smoke_attention.py; do
                log="$out/sanitizer-${smoke%%.py*}-$tool.log"
                compute-sanitizer --tool $tool --report-api-errors no python3 bench/$smoke > "$log" 2>&1
                rc=$?; [ $rc = 0 ] || status=1
                echo "$tool $smoke rc=$rc: $(tail -1 "$log")"
              done; done ;;
    *)      echo "unknown step $step"; status=1 ;;
  esac
done
exit $status
