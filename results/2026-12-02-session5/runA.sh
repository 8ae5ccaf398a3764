#!/usr/bin/env bash
# Session 5, first call (session 4's next-run-c.sh, first half): the attention GPU tests, and
# causal attention with its items dealt (DEALT=1, the default since session 4: the CTAs' most
# work 1.07-1.10x the mean in the model, not 1.2-1.5x) against every SMS-th item (DEALT=0).
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 test/python/test_attention_gpu.py \
    > "$logs/attention-tests.log" 2>&1; tail -1 "$logs/attention-tests.log"
for dealt in 1 0; do
  timeout 120 python3 bench/attention.py --suite general --config DEALT=$dealt \
      --out "$logs/attention-dealt$dealt.md" > "$logs/attention-dealt$dealt.log" 2>&1
  echo "DEALT=$dealt: $(tail -1 "$logs/attention-dealt$dealt.log")"
done
tar -czf "$out/logs.tar.gz" -C "$logs" .
