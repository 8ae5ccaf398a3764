#!/usr/bin/env bash
# For the next session: where the norms still short of 90% of a copy spend their time, on the
# tree with softmax's 2-instruction exp. ncu (full set) of one launch each, bfloat16:
#   softmax and rms_norm at 524 x 128256 (one CTA an SM: 82% / 84% of a copy in runC),
#   layer_norm at 1336 x 50257 (shifted, two CTAs an SM: 67%) against 1336 x 50256 (aligned),
#   rms_norm at 1336 x 50257 (85%).
# Prints duration, DRAM throughput, issue slots busy, executed instructions (per element:
# x 32 / (M N)), occupancy and the top warp stalls; the detail pages go in one archive.
set -u
out=$(realpath -m "${OUT:-device-out}"); logs=$(mktemp -d); mkdir -p "$out"
export TILEMLIR_CACHE_DIR=/tmp/tilemlir-cache PYTHONUNBUFFERED=1
for case in "softmax 524x128256" "rms_norm 524x128256" "layer_norm 1336x50257" \
            "layer_norm 1336x50256" "rms_norm 1336x50257"; do
  set -- $case
  name=$1-${2#*x}
  python3 bench/norms.py --shapes $2 --ops $1 --dtypes bfloat16 --rep-ms 1 > /dev/null 2>&1  # compile
  timeout 120 ncu --set full --kernel-name "regex:^$1$" --launch-count 1 -o "$logs/$name" \
      python3 bench/norms.py --shapes $2 --ops $1 --dtypes bfloat16 --rep-ms 1 \
      > "$logs/ncu-$name.log" 2>&1
  timeout 60 ncu --import "$logs/$name.ncu-rep" --page details > "$logs/$name.txt" 2>&1
  timeout 60 ncu --import "$logs/$name.ncu-rep" --page raw --csv > "$logs/$name-raw.csv" 2>&1
  rm -f "$logs/$name.ncu-rep"
  echo "-- $name"
  grep -E "^\s+(Duration|DRAM Throughput|Issue Slots Busy|Executed Instructions  |Achieved Occupancy|Registers Per Thread|Warp Cycles Per Issued)" "$logs/$name.txt"
  python3 - "$logs/$name-raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, vals = rows[0], rows[-1]
pairs = []
for h, v in zip(head, vals):
    if "issue_stalled" in h and h.endswith("per_warp_active.pct"):
        try:
            pairs.append((float(v.replace(",", "")), h.split("stalled_")[1].split("_per")[0]))
        except ValueError:
            pass
print("   stalls (% of active warp cycles):",
      ", ".join(f"{h} {v:.0f}" for v, h in sorted(pairs, reverse=True)[:6]))
PY
done
tar -czf "$out/ncu-norms.tar.gz" -C "$logs" .
