#!/usr/bin/env bash
# Session 10, call D: why our attention kernel takes 8% more cycles than cuDNN's for the same
# instruction count (runB): the warp-stall breakdown (raw WarpStateStats metrics) and the SASS
# source page with stall samples, ours and cuDNN's, at the GQA case (2x32/4 x 4096 x 128 bf16)
# and at D 256 (8x16 x 4096 x 256 bf16, 0.85x cuDNN). Logs in one archive in $OUT.
set -u
out=${OUT:-device-out}; logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
for who in "gqa flash_attention 2 32 4096 128 hkv=4" "gqa-cudnn cudnn 2 32 4096 128 hkv=4:cudnn" \
           "d256 flash_attention 8 16 4096 256" "d256-cudnn cudnn 8 16 4096 256 cudnn"; do
  set -- $who
  name=$1 kern=$2; shift 2
  args="$1 $2 $3 $4 bfloat16 ${5/:/ }"
  python3 bench/profile_attention.py $args > /dev/null 2>&1     # compile
  timeout 100 ncu --section WarpStateStats --section SourceCounters --section SpeedOfLight \
      --kernel-name "regex:$kern" --launch-skip 1 --launch-count 1 -o "$logs/$name" \
      python3 bench/profile_attention.py $args > "$logs/ncu-$name.log" 2>&1
  echo "ncu $name rc=$?"
  timeout 60 ncu --import "$logs/$name.ncu-rep" --page raw --csv > "$logs/$name-raw.csv" 2>&1
  timeout 60 ncu --import "$logs/$name.ncu-rep" --page source --csv --print-source sass \
      > "$logs/$name-sass.csv" 2>&1
  python3 - "$logs/$name-raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, vals = rows[0], rows[-1]
pairs = [(h, v) for h, v in zip(head, vals) if "issue_stalled" in h and h.endswith("per_issue_active.ratio")]
pairs = sorted(((float(v.replace(",", "")), h) for h, v in pairs if v.replace(",", "").replace(".", "").isdigit()), reverse=True)
for v, h in pairs[:12]:
    print(f"  {h.split('stalled_')[1].split('_per')[0]:28s} {v:.3f}")
for h, v in zip(head, vals):
    if h in ("gpu__time_duration.sum", "smsp__inst_executed.sum", "sm__cycles_active.avg"):
        print(f"  {h} {v}")
PY
done
tar -czf "$out/ncu-stalls.tar.gz" -C "$logs" --exclude='*.ncu-rep' .
