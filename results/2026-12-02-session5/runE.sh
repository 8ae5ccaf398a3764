#!/usr/bin/env bash
# Session 5, fifth call (session 3's next-run-c.sh): which fp8_gemm knobs move FP8 speed (0.74-0.79x
# torch._scaled_mm so far), at 8192^3 and 4096^3 with a tensor scale, fast and promoted
# accumulation, each configuration against torch in its own run. One table line per run.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
i=0
for config in "" "BM=128:BN=256:CLUSTER=0" "BM=128:BN=256:GROUP_M=8" \
              "BM=128:BN=256:OVERLAP_EPILOGUE=0" "BM=128:BN=256:SMS=128" \
              "BM=128:BN=128:CLUSTER=1" "BM=128:BN=128:CLUSTER=0"; do
  i=$((i + 1))
  accum=fast; case "$config" in *BN=128*|"") accum=fast,promoted;; esac
  timeout 120 python3 bench/fp8_gemm.py --shapes 8192x8192x8192,4096x4096x4096 \
      --scalings tensor --accum $accum --rep-ms 40 ${config:+--config $config} \
      --out "$logs/fp8-$i.md" > "$logs/fp8-$i.log" 2>&1
  echo "== ${config:-heuristic} rc=$?"; grep -E "^\| [0-9]" "$logs/fp8-$i.md" | cut -c1-160
done
tar -czf "$out/logs.tar.gz" -C "$logs" .
