#!/usr/bin/env python3
"""Sums up a thread-pool trace (TVMJIT_POOL_TRACE=1, see runtime/thread_pool.h).

    TVMJIT_POOL_TRACE=1 build/tvmjit bench MODEL.rx ... --threads 2 2> trace.txt
    bench/pool_trace.py trace.txt [--skip-runs 1]

A model run calls the same parallel loops in the same order, so the lines repeat with
a period (found from the sequence of loop sizes). Per loop of a run, medians over runs:
its size n and chunk count, wall time, each thread's iterations and thread-CPU time,
the critical path (the busiest thread's CPU time: the loop's wall time on an idle
machine, whatever the load was) and the balance (critical path / the even share of the
summed CPU time; 1.00 is perfect). Thread-CPU time leaves out time the OS gave to other
processes, so these numbers stay meaningful on a loaded machine where wall times do not.
"""
import re
import statistics
import sys

LINE = re.compile(r"pool n=(\d+) chunks=(\d+) wall_us=([\d.]+)")
THREAD = re.compile(r"t(\d+) chunks=(\d+) iters=(\d+) wall_us=([\d.]+) cpu_us=([\d.]+) first_us=([\d.]+)")


def parse(path):
    jobs = []
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        threads = [(int(t[2]), float(t[4])) for t in THREAD.findall(line)]
        jobs.append((int(m.group(1)), int(m.group(2)), float(m.group(3)), threads))
    return jobs


def period(sizes):
    for p in range(1, len(sizes) // 2 + 1):
        if all(sizes[i] == sizes[i % p] for i in range(len(sizes))):
            return p
    return len(sizes)


def load_lines(sizes):
    """How many leading loops precede the runs: a load with bound weights packs them in a
    parallel loop (runtime/prepack_set.c) before the first run. The shortest prefix after
    which the rest repeats at least twice; 0 when nothing repeats."""
    for o in range(len(sizes)):
        rest = sizes[o:]
        if len(rest) // period(rest) >= 2:
            return o
    return 0


def main():
    args = sys.argv[1:]
    skip = 1
    if "--skip-runs" in args:
        i = args.index("--skip-runs")
        skip = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    jobs = parse(args[0])
    if not jobs:
        sys.exit("no 'pool' lines in " + args[0])
    jobs = jobs[load_lines([j[0] for j in jobs]):]
    p = period([j[0] for j in jobs])
    runs = len(jobs) // p
    skip = min(skip, runs - 1)
    med = statistics.median
    total_crit = total_sum = 0.0
    print(f"{p} parallel loops per run, {runs} runs ({skip} skipped); microseconds, medians")
    print(" loop      n chunks    wall   iters per thread     cpu per thread   critical  balance")
    for k in range(p):
        rs = [jobs[r * p + k] for r in range(skip, runs)]
        n, chunks = rs[0][0], rs[0][1]
        nt = len(rs[0][3])
        iters = [med(r[3][t][0] for r in rs) for t in range(nt)]
        cpus = [med(r[3][t][1] for r in rs) for t in range(nt)]
        crit = med(max(c for _, c in r[3]) for r in rs)
        summed = med(sum(c for _, c in r[3]) for r in rs)
        total_crit += crit
        total_sum += summed
        bal = crit / (summed / nt) if summed > 0 else 1.0
        print(f"{k:5d} {n:6d} {chunks:6d} {med(r[2] for r in rs):7.1f}   {'/'.join(f'{i:g}' for i in iters):>16s}"
              f"   {'/'.join(f'{c:.0f}' for c in cpus):>16s}   {crit:8.1f}  {bal:7.2f}")
    print(f"sum of critical paths {total_crit / 1e3:.3f} ms, of CPU time {total_sum / 1e3:.3f} ms")


if __name__ == "__main__":
    main()
