#!/usr/bin/env python3
"""Targets table from a bench CSV (graph mode): ours (best algorithm at registry defaults) vs
NCCL's best (plain or symmetric), per op and size; optionally the best LL row of a tune CSV.
    scripts/gpu/targets.py bench_h200x4.csv [tune_h200x4.csv]"""
import csv, sys, collections
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['graph'] == '1']
tune = collections.defaultdict(lambda: None)
if len(sys.argv) > 2:
    for r in csv.DictReader(open(sys.argv[2])):
        if r['graph'] == '1' and '_ll' in r['algo']:
            k = (r['op'], int(r['bytes']))
            if tune[k] is None or float(r['time_us_median']) < float(tune[k]['time_us_median']):
                tune[k] = r
best = {}
for r in rows:
    side = 'nccl' if r['algo'].startswith('nccl') else 'ours'
    k = (r['op'], int(r['bytes']), side)
    if k not in best or float(r['time_us_median']) < float(best[k]['time_us_median']):
        best[k] = r
def fmt(n):
    return f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"
print("| op | bytes | ours (algo, blocks) | us | busbw | NCCL best | us | busbw | speed-up | best LL in tune (blocks) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for op in ('all_reduce', 'reduce_scatter', 'all_gather'):
    for b in sorted({int(r['bytes']) for r in rows if r['op'] == op}):
        o, n = best.get((op, b, 'ours')), best.get((op, b, 'nccl'))
        if not o or not n:
            continue
        to, tn = float(o['time_us_median']), float(n['time_us_median'])
        t = tune[(op, b)]
        tt = f"{float(t['time_us_median']):.2f} ({t['blocks']})" if t else ""
        print(f"| {op} | {fmt(b)} | {o['algo'].split('.')[-1]} ({o['blocks']}) | {to:.2f} | {float(o['busbw_GBps']):.0f} | "
              f"{n['algo']} | {tn:.2f} | {float(n['busbw_GBps']):.0f} | {tn / to:.2f}x | {tt} |")
