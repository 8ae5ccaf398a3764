"""Executed warp instructions and stall samples by SASS opcode from two ncu source pages
(--page source --csv --print-source sass): python instruction_mix.py ours.csv theirs.csv"""
import csv, sys, collections
def mix(path):
    rows = list(csv.reader(open(path)))
    hdr = rows[1]; i_exec = hdr.index("Instructions Executed"); i_src = hdr.index("Source"); i_s = hdr.index("Warp Stall Sampling (All Samples)")
    c = collections.Counter(); s = collections.Counter()
    for r in rows[2:]:
        if len(r) <= i_exec: continue
        try: n = int(r[i_exec])
        except ValueError: continue
        op = r[i_src].split()[0] if r[i_src].split() else "?"
        if op.startswith("@"): op = r[i_src].split()[1]
        op = op.split(".")[0]
        c[op] += n; s[op] += int(r[i_s] or 0)
    return c, s
a, sa = mix(sys.argv[1]); b, sb = mix(sys.argv[2])
ops = sorted(set(a) | set(b), key=lambda o: -(a[o] + b[o]))
print(f"{'op':10s} {'ours':>12s} {'cudnn':>12s} {'ours-stall':>10s} {'cudnn-stall':>10s}")
for o in ops[:35]:
    print(f"{o:10s} {a[o]:12d} {b[o]:12d} {sa[o]:10d} {sb[o]:10d}")
print("total", sum(a.values()), sum(b.values()), sum(sa.values()), sum(sb.values()))
