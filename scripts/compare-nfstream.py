#!/usr/bin/env python3
"""Compare rowprobe's `flowstats` plugin with NFStream 6.6, flow by flow, feature by feature.

For each capture: NFStream runs (NFStreamer with statistical_analysis=True, splt_analysis=N,
the given timeouts and accounting mode, n_dissections=0, decode_tunnels=False) in the Python
that has it (this one, --nfstream-python, $ROWPROBE_NFSTREAM_PYTHON or
~/.cache/rowprobe-venv/bin/python, the venv scripts/setup.sh makes); rowprobe runs
`-p 'flowstats;splt=N;accounting=MODE;basic'` with the same timeouts (--tunnel outer, JSON
output), so NFStream's basic columns (protocol, vlan_id, first/last seen, duration, packets,
bytes) are compared with the statistics. The benchmark (--bench) runs without `basic`.
Flows are joined on (source, destination, ports for TCP/UDP, protocol, VLAN, first packet's
time in ms). Integers must be equal, floats within --rel (1e-6) relative; SPLT arrays entry by
entry. Printed: per capture the flows of each side, joined, excluded by rule, and per feature
the agreeing and differing flows.

Excluded by rule, never by flow (named in process/flowstats/README.md):
  boundary   a 5-tuple whose flows the two tools cut differently (rowprobe ends a TCP flow when
             a SYN follows a FIN or RST in the same direction; NFStream 6.6 has no TCP
             expiry): all flows of that 5-tuple
  packets    joined flows whose packet counts differ (packets one parser takes and the other
             refuses: frames shorter than NFStream's 28-byte minimum, IPv6 extension chains,
             fragments that rowprobe's fragment cache keys differently, link types)

Exit: 0 every compared feature agrees and at least --min-joined of NFStream's flows were
compared; 1 otherwise; 77 NFStream is not installed (the reason printed); 2 usage.

  scripts/compare-nfstream.py --rowprobe build/release/core/rowprobe [--splt 10]
      [--accounting link|ip|transport|payload] [--idle S] [--active S] [--time-box S]
      [--show K] CAPTURE...
  scripts/compare-nfstream.py --bench --rowprobe ... CAPTURE   (timing only, see
      scripts/bench-nfstream.sh)
"""
import argparse
import ipaddress
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

MODES = ["link", "ip", "transport", "payload"]
SERIES = ["bidirectional", "src2dst", "dst2src"]
STATS = ["min_ps", "mean_ps", "stddev_ps", "max_ps", "min_piat_ms", "mean_piat_ms",
         "stddev_piat_ms", "max_piat_ms"]
FLAGS = ["syn", "cwr", "ece", "urg", "ack", "psh", "rst", "fin"]
FEATURES = ([f"{s}_{x}" for s in SERIES for x in STATS] +
            [f"{s}_{f}_packets" for s in SERIES for f in FLAGS])
SPLT = ["splt_direction", "splt_ps", "splt_piat_ms"]
# flowstats' `basic` columns (NFStream's basic columns under its names)
BASIC = (["protocol", "vlan_id"] +
         [f"{s}_{x}" for s in SERIES
          for x in ["first_seen_ms", "last_seen_ms", "duration_ms", "packets", "bytes"]])
KEYS = ["src_ip", "dst_ip", "src_port", "dst_port", "protocol", "vlan_id",
        "bidirectional_first_seen_ms", "bidirectional_packets"]

# One Python process for all captures (its start and NFStream's import cost about a second):
# runs NFStream on each job in turn, stops starting jobs after the time box, prints one JSON
# line per finished job.
WORKER = r"""
import json, sys, time
from nfstream import NFStreamer
import nfstream
args = json.loads(sys.argv[1])
start = time.monotonic()
for job in args["jobs"]:
    if args["box"] and time.monotonic() - start > args["box"]:
        break
    t0 = time.monotonic()
    packets = 0
    out = open(job["out"], "w")
    streamer = NFStreamer(source=job["pcap"], statistical_analysis=True,
                          splt_analysis=args["splt"], idle_timeout=args["idle"],
                          active_timeout=args["active"], accounting_mode=args["mode"],
                          n_dissections=0, decode_tunnels=False, n_meters=1)
    cols = args["cols"]
    if args["csv"]:  # NFStream's own writer; it does not count packets
        out.close()
        streamer.to_csv(path=job["out"])
        packets = None
    else:
        for f in streamer:
            packets += f.bidirectional_packets
            if args["write"]:
                out.write(json.dumps({c: getattr(f, c, None) for c in cols}) + "\n")
        out.close()
    print(json.dumps({"pcap": job["pcap"], "version": nfstream.__version__,
                      "seconds": time.monotonic() - t0, "packets": packets}), flush=True)
"""


def find_nfstream_python(explicit):
    candidates = [explicit, os.environ.get("ROWPROBE_NFSTREAM_PYTHON"), sys.executable,
                  os.path.expanduser("~/.cache/rowprobe-venv/bin/python")]
    for py in candidates:
        if not py or not os.path.exists(py):
            continue
        r = subprocess.run([py, "-c", "import nfstream; print(nfstream.__version__)"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return py, r.stdout.strip()
    return None, None


def run_nfstream(py, jobs, splt, idle, active, mode, write=True, box=0, csv=False):
    """NFStream on each (pcap, output path) of `jobs`; the infos of the jobs it finished.
    `csv`: every flow written by NFStream's to_csv (all its columns) instead of iterated."""
    cols = list(dict.fromkeys(KEYS + BASIC + FEATURES + (SPLT if splt else [])))
    arg = json.dumps({"jobs": [{"pcap": p, "out": o} for p, o in jobs], "splt": splt,
                      "idle": idle, "active": active, "mode": MODES.index(mode), "cols": cols,
                      "write": write, "box": box, "csv": csv})
    r = subprocess.run([py, "-c", WORKER, arg], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"NFStream failed: {r.stderr.strip()[-400:]}")
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def rowprobe_cmd(rowprobe, pcap, splt, idle, active, mode, out, basic=False):
    plugin = f"flowstats;splt={splt};accounting={mode}" + (";basic" if basic else "")
    return [rowprobe, "-i", f"pcap;file={pcap}",
            "-s", f"cache;size=20;active={active};inactive={idle}",
            "--tunnel", "outer", "-p", plugin, "-o", f"json;file={out}"]


def norm_ip(s):
    try:
        return str(ipaddress.ip_address(s))
    except ValueError:
        return s


def iso_ms(t):
    # "2019-03-14T19:03:54.892296000Z" -> ms since the epoch, truncated (NFStream's unit)
    import calendar
    date, frac = t.rstrip("Z").split(".")
    secs = calendar.timegm(time.strptime(date, "%Y-%m-%dT%H:%M:%S"))
    return secs * 1000 + int(frac.ljust(9, "0")[:3])


def tuple_of(src, dst, sport, dport, proto, vlan):
    if proto not in (6, 17):
        sport = dport = 0
    return (norm_ip(src), norm_ip(dst), sport, dport, proto, vlan)


def load_rowprobe(path):
    flows = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if "bidirectional_min_ps" not in r:
                continue
            r["_tuple"] = tuple_of(r["src_ip"], r["dst_ip"], r["src_port"], r["dst_port"],
                                   r["proto"], r.get("vlan", 0))
            r["_first"] = iso_ms(r["time_first"])
            r["_packets"] = r["packets"] + r["packets_rev"]
            flows.append(r)
    return flows


def load_nfstream(path):
    flows = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            r["_tuple"] = tuple_of(r["src_ip"], r["dst_ip"], r["src_port"], r["dst_port"],
                                   r["protocol"], r["vlan_id"] or 0)
            r["_first"] = r["bidirectional_first_seen_ms"]
            r["_packets"] = r["bidirectional_packets"]
            flows.append(r)
    return flows


def reverse(t):
    return (t[1], t[0], t[3], t[2], t[4], t[5])


def same(a, b, rel):
    if a is None or b is None:
        return a is b
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and
                all(same(x, y, rel) for x, y in zip(a, b)))
    if isinstance(a, float) or isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return False
        return abs(a - b) <= rel * max(abs(a), abs(b)) or abs(a - b) <= 1e-9
    return a == b


def compare_capture(args, info, nfs_out, tmp):
    pcap = info["pcap"]
    name = os.path.join(os.path.basename(os.path.dirname(pcap)), os.path.basename(pcap))
    rp_out = os.path.join(tmp, "rowprobe.jsonl")
    cmd = rowprobe_cmd(args.rowprobe, pcap, args.splt, args.idle, args.active,
                       args.rowprobe_accounting or args.accounting, rp_out, basic=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"rowprobe failed on {pcap}: {r.stderr.strip()[-400:]}")
    nfs = load_nfstream(nfs_out)
    rp = load_rowprobe(rp_out)

    # Rule "boundary": 5-tuples (either orientation) cut into a different number of flows.
    def per_tuple(flows):
        d = {}
        for f in flows:
            t = f["_tuple"]
            k = min(t, reverse(t))
            d.setdefault(k, []).append(f)
        return d
    nt, rt = per_tuple(nfs), per_tuple(rp)
    boundary = {k for k in set(nt) | set(rt) if len(nt.get(k, [])) != len(rt.get(k, []))}

    index = {}
    for f in rp:
        index[(f["_tuple"], f["_first"])] = f
    features = BASIC + FEATURES + (SPLT if args.splt else [])
    agree = {c: 0 for c in features}
    differ = {c: 0 for c in features}
    examples = []
    joined = excluded_boundary = excluded_packets = unmatched = compared = 0
    for f in nfs:
        k = min(f["_tuple"], reverse(f["_tuple"]))
        if k in boundary:
            excluded_boundary += 1
            continue
        g = index.get((f["_tuple"], f["_first"]))
        if g is None:
            unmatched += 1
            if len(examples) < args.show:
                examples.append(f"  unmatched NFStream flow {f['_tuple']} first {f['_first']}")
            continue
        joined += 1
        if g["_packets"] != f["_packets"]:
            excluded_packets += 1
            continue
        compared += 1
        for c in features:
            if same(g.get(c), f.get(c), args.rel):
                agree[c] += 1
            else:
                differ[c] += 1
                if len(examples) < args.show:
                    examples.append(f"  {c}: rowprobe {g.get(c)} NFStream {f.get(c)} "
                                    f"flow {f['_tuple']} first {f['_first']}")
    print(f"capture {name}: NFStream {len(nfs)} flows (nfstream {info['version']}), rowprobe "
          f"{len(rp)}; boundary rule {excluded_boundary}; unmatched {unmatched}; joined {joined}"
          f"; packets rule {excluded_packets}; compared {compared}")
    bad = [c for c in features if differ[c]]
    for c in features:
        if differ[c] or args.verbose:
            print(f"  {c:32s} agree {agree[c]:6d} differ {differ[c]:6d}")
    if not bad and compared:
        print(f"  all {len(features)} features agree on {compared} flows")
    for e in examples:
        print(e)
    return len(nfs), compared, sum(differ.values())


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


# The benchmark's PEN for flowstats' IPFIX elements: RFC 5612's example number (nothing
# decodes them).
BENCH_PEN = 32473


def bench(args, py):
    """NFStream and rowprobe on the same capture, interleaved, args.runs times: medians of the
    wall time and of the CPU time of each whole process tree (NFStream's meter processes and
    rowprobe's threads included; on a loaded machine the CPU time is the steadier figure)."""
    pcap = args.captures[0]
    cmd = rowprobe_cmd(args.rowprobe, pcap, args.splt, args.idle, args.active, args.accounting,
                       "/dev/null")
    if args.rowprobe_output == "ipfix":
        # An IPFIX file of every flowstats field: the PEN puts them in the templates (without
        # one they are left out of IPFIX); SPLT goes as basicLists.
        cmd[cmd.index("-p") + 1] += f";pen={BENCH_PEN}"
        cmd[cmd.index("-o") + 1] = "ipfix;file=/dev/null"
    nfs, nfs_cpu, rp, rp_cpu, version, packets = [], [], [], [], "", 0
    for _ in range(args.runs):
        time.sleep(args.settle)
        c0, t0 = children_cpu(), time.monotonic()
        info = run_nfstream(py, [(pcap, os.devnull)], args.splt, args.idle, args.active,
                            args.accounting, write=False, csv=args.nfstream_csv)[0]
        nfs.append(time.monotonic() - t0)
        nfs_cpu.append(children_cpu() - c0)
        version, packets = info["version"], info["packets"] or 0
        time.sleep(args.settle)
        c0, t0 = children_cpu(), time.monotonic()
        subprocess.run(cmd, check=True, capture_output=True)
        rp.append(time.monotonic() - t0)
        rp_cpu.append(children_cpu() - c0)

    def med(v):
        return sorted(v)[len(v) // 2]
    def rate(t):
        return f", {packets / t:,.0f} packets/s" if packets else ""
    counted = f"{packets} packets (as NFStream counts them)" if packets else "(packets not counted)"
    print(f"capture {pcap}: {counted}, {args.runs} "
          f"interleaved runs, medians, whole processes (start-up included), each run "
          f"{args.settle:g} s after the previous one ended")
    what = "every flow written by to_csv to /dev/null" if args.nfstream_csv else "flows iterated"
    print(f"  NFStream {version} (n_meters=1, statistical_analysis, splt_analysis={args.splt}, "
          f"n_dissections=0, {what}): {med(nfs):.3f} s wall, {med(nfs_cpu):.3f} s CPU"
          f"{rate(med(nfs))}")
    print(f"  rowprobe -p 'flowstats;splt={args.splt}' -o {args.rowprobe_output}: "
          f"{med(rp):.3f} s wall, "
          f"{med(rp_cpu):.3f} s CPU{rate(med(rp))}")
    print(f"  rowprobe is {med(nfs) / med(rp):.1f}x faster in wall time, "
          f"{med(nfs_cpu) / med(rp_cpu):.1f}x in CPU time")
    # Every run, in order: on a noisy host the spread says more than one median.
    print("  each run, NFStream / rowprobe wall s (ratio): " + ", ".join(
        f"{n:.3f} / {r:.3f} ({n / r:.1f}x)" for n, r in zip(nfs, rp)))
    print("  rowprobe command: " + " ".join(f"'{c}'" if ";" in c else c for c in cmd))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rowprobe", required=True)
    ap.add_argument("--nfstream-python")
    ap.add_argument("--splt", type=int, default=10)
    ap.add_argument("--accounting", choices=MODES, default="link")
    ap.add_argument("--idle", type=int, default=31536000, help="seconds (default: a year)")
    ap.add_argument("--active", type=int, default=31536000, help="seconds (default: a year)")
    ap.add_argument("--rowprobe-accounting", choices=MODES,
                    help="run rowprobe in another mode than NFStream (the test's negative check)")
    ap.add_argument("--rel", type=float, default=1e-6)
    ap.add_argument("--min-joined", type=float, default=0.8,
                    help="least share of NFStream's flows compared (default 0.8)")
    ap.add_argument("--time-box", type=float, default=0,
                    help="stop starting captures after this many seconds (0 = none)")
    ap.add_argument("--show", type=int, default=5, help="differences printed per capture")
    ap.add_argument("--verbose", action="store_true", help="print agreeing features too")
    ap.add_argument("--bench", action="store_true",
                    help="time NFStream and rowprobe on the first capture instead")
    ap.add_argument("--runs", type=int, default=3, help="--bench: interleaved runs")
    ap.add_argument("--nfstream-csv", action="store_true",
                    help="--bench: NFStream writes every flow with its to_csv (to /dev/null), "
                         "as rowprobe writes JSON, instead of only iterating the flows")
    ap.add_argument("--settle", type=float, default=10,
                    help="--bench: seconds of idle before each run (default 10), so that no run "
                         "pays for the previous process's exit: on a VM that returns freed "
                         "memory to its host, rowprobe's runs right after NFStream's (4.5 GB "
                         "resident) took ~0.5 s longer, with steal time")
    ap.add_argument("--rowprobe-output", choices=["json", "ipfix"], default="json",
                    help="--bench: rowprobe writes JSON lines (default) or an IPFIX file with "
                         "every flowstats field (under an example PEN), both to /dev/null")
    ap.add_argument("captures", nargs="+")
    args = ap.parse_args()
    py, version = find_nfstream_python(args.nfstream_python)
    if py is None:
        print("skipped: NFStream is not installed (pip install nfstream==6.6.0 into "
              "~/.cache/rowprobe-venv, as scripts/setup.sh does, or set "
              "ROWPROBE_NFSTREAM_PYTHON)")
        return 77
    if args.bench:
        return bench(args, py)
    print(f"NFStream {version} ({py}); splt={args.splt} accounting={args.accounting} "
          f"idle={args.idle}s active={args.active}s")
    total = compared = differ = 0
    done = 0
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [(pcap, os.path.join(tmp, f"{i}.nfstream.jsonl"))
                for i, pcap in enumerate(args.captures)]
        infos = run_nfstream(py, jobs, args.splt, args.idle, args.active, args.accounting,
                             box=args.time_box)
        for info, (_, out) in zip(infos, jobs):
            n, c, d = compare_capture(args, info, out, tmp)
            total, compared, differ = total + n, compared + c, differ + d
            done += 1
        if done < len(jobs):
            print(f"time box of {args.time_box:.0f} s reached: {len(jobs) - done} captures "
                  f"not run")
    share = compared / total if total else 0
    print(f"total: {done} captures, NFStream {total} flows, compared {compared} "
          f"({100 * share:.1f} %), differing feature values {differ}")
    if differ == 0 and share >= args.min_joined:
        print("result: every compared feature agrees")
        return 0
    print("result: FAIL" + ("" if differ else f" (compared share below {args.min_joined})"))
    return 1


if __name__ == "__main__":
    sys.exit(main())
