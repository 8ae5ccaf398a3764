#!/usr/bin/env bash
# Session 5, second call (session 4's next-run-c.sh, second half): long rows' one-pass LayerNorm
# (the GPU random sweep, and speed beside RMSNorm), and ncu of LayerNorm's long rows at an odd
# width beside an aligned one.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 \
    test/python/test_norms_gpu.py::test_random_shapes > "$logs/norms-tests.log" 2>&1
tail -1 "$logs/norms-tests.log"
timeout 120 python3 bench/norms.py --lengths 32000,50257,128256 --ops layer_norm,rms_norm \
    --rep-ms 40 --out "$logs/norms-layer.md" > "$logs/norms-layer.log" 2>&1
grep -E "GB/s" "$logs/norms-layer.log"
for N in 50257 50256; do
  timeout 60 ncu --set full --kernel-name regex:layer_norm --launch-count 1 -o "$logs/norm-$N" \
      python3 bench/norms.py --shapes 1336x$N --ops layer_norm --dtypes bfloat16 --rep-ms 1 \
      > "$logs/ncu-norm-$N.log" 2>&1
  timeout 60 ncu --import "$logs/norm-$N.ncu-rep" --page details > "$logs/norm-$N.txt" 2>&1
  echo "ncu norm $N: $(grep -c . "$logs/norm-$N.txt") lines"
done
tar -czf "$out/logs.tar.gz" -C "$logs" --exclude='*.ncu-rep' .
