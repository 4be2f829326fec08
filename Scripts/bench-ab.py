#!/usr/bin/env python3
"""Interleaved A/B of two builds of groupstore-bench, for a noisy machine.

Runs one writer (2,000 single-row commits, 1 ms apart) and READERS members on
tmpfs, alternating the builds ROUNDS times, and prints per build the median of
the per-run median latencies and the CPU per save (user + system, from wait4)
of the members and of the writer. CPU is the robust figure when wall-clock
latency moves 2-4x between runs.

    python3 Scripts/bench-ab.py [sync]     # BEFORE=/path/to/old/groupstore-bench
    READERS=7 ROUNDS=2 python3 Scripts/bench-ab.py
"""
import subprocess, os, sys, time, statistics, shutil, collections
def run(binary, n=2000, extra=[], interval=1000, readers=1):
    d="/dev/shm/abc-%d"%os.getpid(); shutil.rmtree(d, ignore_errors=True); os.mkdir(d)
    ms=[subprocess.Popen([binary,"member","--group",d,"--member","r%d"%i,"--expect",str(n),"--print-each"]+extra, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for i in range(readers)]
    time.sleep(1.5)
    w=subprocess.Popen([binary,"writer","--group",d,"--count",str(n),"--interval-us",str(interval)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _,_,wru=os.wait4(w.pid,0)
    lat=[]; cpu=[]
    for m in ms:
        out=m.stdout.read(); _,_,ru=os.wait4(m.pid,0)
        lat+= [float(l.split()[2])-float(l.split()[3]) for l in out.splitlines() if l.startswith("R ")]
        cpu.append((ru.ru_utime+ru.ru_stime)/n*1e6)
    shutil.rmtree(d, ignore_errors=True)
    return statistics.median(lat), statistics.mean(cpu), (wru.ru_utime+wru.ru_stime)/n*1e6
res=collections.defaultdict(list)
variants=[("before",os.environ.get("BEFORE", "/tmp/bench-before/groupstore-bench"),[]),("after",os.environ.get("AFTER", ".build/release/groupstore-bench"),[])]+([("after-sync",os.environ.get("AFTER", ".build/release/groupstore-bench"),["--synchronous"])] if "sync" in sys.argv else [])
readers=int(os.environ.get("READERS","1")); interval=int(os.environ.get("INTERVAL","1000"))
for i in range(int(os.environ.get("ROUNDS","4"))):
    for name,b,extra in variants:
        res[name].append(run(b, extra=extra, readers=readers, interval=interval))
for name,v in res.items():
    print("%-11s latency median-of-medians %5.0f µs | member CPU/save %5.0f µs | writer CPU/commit %5.0f µs (runs: %s)" % (name, statistics.median(x[0] for x in v), statistics.median(x[1] for x in v), statistics.median(x[2] for x in v), " ".join("%.0f"%x[0] for x in v)))
