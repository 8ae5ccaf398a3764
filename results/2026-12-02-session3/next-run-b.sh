#!/usr/bin/env bash
# For the next session's second H200 call (not run yet): decode GEMMs timed with the L2 flushed
# by overwriting (as so far) and by reading (no dirty lines written back inside the timed call:
# the ~9-12 us that both cuBLAS and ours lose at N = K = 4096), the pads_k rule on the unaligned
# and random suites, every mid-size candidate's time (to fit the model), attention's GQA and
# ragged cases against cuDNN; ncu on the decode kernel and cuBLAS's at 1x4096x4096.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
G="python3 bench/gemm_shapes.py --workers 15 --case-timeout 60"
summary() { grep -A4 "^## Summary" "$1" | grep "^-"; }
timeout 90 $G --suite decode --flush write --out "$logs/decode-write.md" > "$logs/decode-write.log" 2>&1; summary "$logs/decode-write.md"
timeout 90 $G --suite decode --flush read --out "$logs/decode-read.md" > "$logs/decode-read.log" 2>&1; summary "$logs/decode-read.md"
timeout 100 $G --suite unaligned --out "$logs/unaligned.md" > "$logs/unaligned.log" 2>&1; summary "$logs/unaligned.md"
timeout 150 $G --suite random --count 150 --random-reps 6 --compile-first --out "$logs/random.md" > "$logs/random.log" 2>&1; summary "$logs/random.md"
timeout 120 python3 bench/attention.py --suite general --out "$logs/attention-general.md" > "$logs/attention.log" 2>&1; tail -3 "$logs/attention.log"
# what the decode kernel waits on at N = K = 4096 (47% of a copy), beside cuBLAS's kernel
for who in hgemm cublas; do
  timeout 90 ncu --set full --launch-skip 2 --launch-count 1 -o "$logs/decode-$who" \
      python3 bench/profile_gemm.py $who 1x4096x4096 > "$logs/ncu-$who.log" 2>&1
  echo "ncu $who rc=$?"
done
tar -czf "$out/logs.tar.gz" -C "$logs" .
