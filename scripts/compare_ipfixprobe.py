#!/usr/bin/env python3
"""The join and report of scripts/compare-ipfixprobe.sh.

Reads ipfixprobe's flows as NEMEA logger CSV (a line "type NAME,type NAME,..." gives the
columns; it may come first, as `logger -t` prints it, or last, as ipfixprobe's reference files
have it after sorting) and rowprobe's flows as JSON lines; maps UniRec names to rowprobe keys
(the basic fields below, each plugin's from `rowprobe -h NAME`); joins the flows on source,
destination, ports, protocol and start time (µs); and prints per plugin and field how many
joined flows agree and differ, how many flows exist on one side only, and the first differing
flows. Exit status 0 when everything agrees, 1 otherwise.
"""
import argparse
import csv
import ipaddress
import json
import os
import re
import sys
from collections import defaultdict
from datetime import datetime, timezone

# ipfixprobe's basic UniRec fields and rowprobe's keys for them (output/json/README.md).
BASIC = {
    "SRC_IP": "src_ip", "DST_IP": "dst_ip", "SRC_PORT": "src_port", "DST_PORT": "dst_port",
    "PROTOCOL": "proto", "TIME_FIRST": "time_first", "TIME_LAST": "time_last",
    "PACKETS": "packets", "PACKETS_REV": "packets_rev", "BYTES": "bytes",
    "BYTES_REV": "bytes_rev", "SRC_MAC": "src_mac", "DST_MAC": "dst_mac",
    "TCP_FLAGS": "tcp_flags", "TCP_FLAGS_REV": "tcp_flags_rev",
}
# Exporter constants, not flow properties.
SKIP = {"LINK_BIT_FIELD", "DIR_BIT_FIELD", "ODID"}
HEADER_CELL = re.compile(r"^[a-z0-9]+\*? [A-Z0-9_]+$")
FLOAT_TOLERANCE = 1e-4


def plugin_fields(path):
    """UniRec name -> (JSON key, UniRec type) from the Fields table of `rowprobe -h NAME`."""
    out = {}
    in_table = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("Fields ("):
                in_table = True
                continue
            if in_table:
                parts = line.split()
                if len(parts) < 4:
                    break
                key, utype, uname = parts[0], parts[1], parts[2]
                out[uname] = (key, utype)
    return out


def time_us(text):
    text = text.strip().rstrip("Z")
    if "." in text:
        whole, frac = text.split(".", 1)
    else:
        whole, frac = text, "0"
    base = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    micros = int((frac + "000000")[:6])
    return int(base.timestamp()) * 1_000_000 + micros


def canonical(utype, value):
    """A value in comparable text form; `utype` without '*'."""
    if value is None:
        return None
    if isinstance(value, bool):
        value = int(value)
    text = str(value)
    try:
        if utype == "time":
            return str(time_us(text))
        if utype == "ipaddr":
            a = ipaddress.ip_address(text)
            if a.version == 6 and a.ipv4_mapped is not None:
                a = a.ipv4_mapped
            return str(a)
        if utype in ("macaddr", "bytes"):
            return text.lower()
    except ValueError:
        return text
    return text


def floats_close(a, b):
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return abs(x - y) <= max(FLOAT_TOLERANCE * max(abs(x), abs(y)), 1e-6)


def read_ipfixprobe(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        rows = [r for r in csv.reader(f) if r]
    header = None
    records = []
    for r in rows:
        if all(HEADER_CELL.match(c) for c in r):
            header = [(c.split(" ", 1)[0], c.split(" ", 1)[1]) for c in r]
        else:
            records.append(r)
    if header is None:
        sys.exit("compare-ipfixprobe: no UniRec header line in ipfixprobe's output")
    out = []
    for r in records:
        rec = {}
        for (utype, name), value in zip(header, r):
            if name in SKIP:
                continue
            if utype.endswith("*"):
                inner = value.strip()[1:-1] if value.startswith("[") else value
                rec[name] = "|".join(canonical(utype[:-1], v) for v in inner.split("|")) if inner else ""
            else:
                rec[name] = canonical(utype, value)
        out.append(rec)
    return header, out


def our_value(obj, key, utype):
    if key not in obj:
        return None
    v = obj[key]
    base = utype.rstrip("*")
    if isinstance(v, list):
        return "|".join(canonical(base, x) for x in v)
    if base == "bytes" and isinstance(v, str) and not re.fullmatch(r"[0-9a-fA-F]*", v):
        return v.encode("utf-8", "surrogateescape").hex()  # a text-shown binary field
    if v is None:
        return "nan"
    return canonical(base, v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--fields-dir", required=True)
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("plugins", nargs="*")
    a = ap.parse_args()

    header, theirs = read_ipfixprobe(a.csv)
    columns = {name: utype for utype, name in header if name not in SKIP}
    group_of = {}  # UniRec name -> (group, our key)
    for name, key in BASIC.items():
        if name in columns:
            group_of[name] = ("basic", key)
    plugin_keys = []
    for p in a.plugins:
        for uname, (key, _utype) in plugin_fields(os.path.join(a.fields_dir, f"fields.{p}.txt")).items():
            plugin_keys.append(key)
            if uname in columns:
                group_of[uname] = (p, key)
    unmapped = [n for n in columns if n not in group_of]

    ours = []
    with open(a.json, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            # ipfixprobe sends a flow only when it carries a plugin's data
            if a.plugins and not any(k in obj for k in plugin_keys):
                continue
            rec = {name: our_value(obj, key, columns[name]) for name, (_g, key) in group_of.items()}
            ours.append(rec)

    def join_key(r):
        return tuple(r.get(n) for n in ("SRC_IP", "DST_IP", "SRC_PORT", "DST_PORT", "PROTOCOL", "TIME_FIRST"))

    def same(name, x, y):
        if x == y:
            return True
        if x is None or y is None:
            return False
        return columns.get(name) == "float" and floats_close(x, y)

    by_key = defaultdict(list)
    for r in ours:
        by_key[join_key(r)].append(r)
    stats = defaultdict(lambda: [0, 0, 0])  # (group, name) -> agree, differ, absent in ours
    only_theirs, pairs = [], []
    for t in theirs:
        cands = by_key.get(join_key(t))
        if not cands:
            only_theirs.append(t)
            continue
        # several instances per flow (one per DNS answer, NetBIOS packet): the closest one
        best = max(range(len(cands)), key=lambda i: sum(same(n, t.get(n), cands[i].get(n)) for n in group_of))
        pairs.append((t, cands.pop(best)))
    only_ours = [r for rs in by_key.values() for r in rs]
    differing = []
    for t, o in pairs:
        diffs = []
        for name, (group, _key) in group_of.items():
            s = stats[(group, name)]
            if same(name, t.get(name), o.get(name)):
                s[0] += 1
            elif o.get(name) is None:
                s[2] += 1
                diffs.append(name)
            else:
                s[1] += 1
                diffs.append(name)
        if diffs:
            differing.append((t, o, diffs))

    print(f"flows: ipfixprobe {len(theirs)}, rowprobe {len(ours)}, joined {len(pairs)}, "
          f"only ipfixprobe {len(only_theirs)}, only rowprobe {len(only_ours)}")
    print(f"{'plugin':<12} {'field':<32} {'rowprobe key':<28} {'agree':>7} {'differ':>7} {'absent':>7}")
    for name, (group, key) in sorted(group_of.items(), key=lambda kv: (kv[1][0] != "basic", kv[1][0], kv[0])):
        s = stats[(group, name)]
        print(f"{group:<12} {name:<32} {key:<28} {s[0]:>7} {s[1]:>7} {s[2]:>7}")
    for n in unmapped:
        print(f"{'?':<12} {n:<32} {'(no rowprobe field)':<28}")
    for title, recs in (("only in ipfixprobe", only_theirs), ("only in rowprobe", only_ours)):
        for r in recs[: a.show]:
            print(f"{title}: {r.get('SRC_IP')}:{r.get('SRC_PORT')} > {r.get('DST_IP')}:{r.get('DST_PORT')} "
                  f"proto {r.get('PROTOCOL')} first {r.get('TIME_FIRST')}")
    for t, o, diffs in differing[: a.show]:
        print(f"differs: {t.get('SRC_IP')}:{t.get('SRC_PORT')} > {t.get('DST_IP')}:{t.get('DST_PORT')} "
              f"proto {t.get('PROTOCOL')} first {t.get('TIME_FIRST')}")
        for n in diffs:
            print(f"    {n}: ipfixprobe {t.get(n)!r} rowprobe {o.get(n)!r}")
    ok = not differing and not only_theirs and not only_ours and not unmapped
    print("result: " + ("every field agrees" if ok else
                        f"{len(differing)} joined flows differ, {len(only_theirs) + len(only_ours)} "
                        f"on one side only, {len(unmapped)} columns without a rowprobe field"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
