#!/usr/bin/env bash
# For the next session: where our attention's consumers wait longer than cuDNN's (runD: the
# same instruction count, 8% more cycles; more fixed-latency and short-scoreboard stalls). For
# the GQA case (2x32/4 x 4096 x 128) and D 256 (8x16 x 4096 x 256, 0.85x cuDNN), bf16, ours and
# cuDNN's: the warp-stall breakdown (raw WarpStateStats metrics) and the SASS source page with
# stall samples per instruction, in one archive in $OUT.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
for case in "gqa 2 32 4096 128 hkv=4" "d256 8 16 4096 256"; do
  set -- $case
  name=$1 shape="$2 $3 $4 $5 bfloat16 ${6:-}"
  for who in ours cudnn; do
    kern=flash_attention extra=""
    [ $who = cudnn ] && kern=cudnn extra=cudnn
    python3 bench/profile_attention.py $shape $extra > /dev/null 2>&1      # compile
    timeout 100 ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight \
        --kernel-name "regex:$kern" --launch-skip 1 --launch-count 1 -o "$logs/$name-$who" \
        python3 bench/profile_attention.py $shape $extra > "$logs/ncu-$name-$who.log" 2>&1
    echo "ncu $name $who rc=$?"
    timeout 60 ncu --import "$logs/$name-$who.ncu-rep" --page raw --csv \
        > "$logs/$name-$who-raw.csv" 2>&1
    timeout 60 ncu --import "$logs/$name-$who.ncu-rep" --page source --csv --print-source sass \
        > "$logs/$name-$who-sass.csv" 2>&1
    python3 - "$logs/$name-$who-raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, vals = rows[0], rows[-1]
pairs = []
for h, v in zip(head, vals):
    if "issue_stalled" in h and h.endswith("per_issue_active.ratio"):
        try:
            pairs.append((float(v.replace(",", "")), h.split("stalled_")[1].split("_per")[0]))
        except ValueError:
            pass
for v, h in sorted(pairs, reverse=True)[:12]:
    print(f"  {h:28s} {v:.3f}")
for h, v in zip(head, vals):
    if h in ("gpu__time_duration.sum", "smsp__inst_executed.sum", "sm__cycles_active.avg"):
        print(f"  {h} {v}")
PY
  done
done
tar -czf "$out/ncu-stalls.tar.gz" -C "$logs" --exclude='*.ncu-rep' .
