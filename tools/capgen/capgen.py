#!/usr/bin/env python3
"""capgen: deterministic generator of rowprobe's own test captures and their per-flow truth.

Writes, for every scenario, `<name>.pcap` (classic pcap, nanosecond timestamps, Ethernet) and
`<name>.truth.csv` (one row per expected biflow, the `expected_flows.csv` schema of the shared
test data). Python 3 standard library only; no scapy.

    python3 tools/capgen/capgen.py --out pcaps/            # all scenarios
    python3 tools/capgen/capgen.py --out /tmp/x mixed      # one scenario

Reproducible byte for byte: one fixed seed per scenario, a private PRNG (splitmix64, so the
output does not depend on the Python version's `random`), fixed timestamps, no wall clock.

How the truth is made: every emitted packet carries the metadata a flow exporter would extract
(key, IP length, TTL, TCP flags, ICMP type/code, MACs). A reference flow table replays the
packets in capture order with rowprobe's semantics (ipfixprobe's): biflow key = IP version,
protocol, addresses, ports, outermost VLAN; the source is the sender of the first packet;
bytes = IP total length; ICMP has ports 0; inactive timeout 30 s, active timeout 300 s, and a
SYN after FIN/RST in the same direction starts a new flow. Every scenario keeps a margin of
several seconds around both timeouts (checked here), so the truth does not depend on whether
an implementation compares with > or >=, in nanoseconds or whole seconds.

Truth CSV conventions (see pcaps/README.md): an empty field is not asserted; `extra` is JSON
with `vlan`, `ip_version`, `ttl`, `ttl_rev`, `icmp_type_code`, `icmp_type_code_rev`,
`src_mac`, `dst_mac`, `end_reason` ("a|b" = either is correct) and `optional` (the flow may be
absent or appear several times: malformed packets whose handling is implementation-defined).
"""

import argparse
import csv
import io
import ipaddress
import json
import os
import struct
import sys

M64 = (1 << 64) - 1
NS = 1_000_000_000
INACTIVE_NS = 30 * NS
ACTIVE_NS = 300 * NS
MARGIN_NS = 3 * NS  # no gap or flow age may come closer than this to a timeout

FIN, SYN, RST, PSH, ACK, URG = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20

ETH_IPV4, ETH_IPV6, ETH_ARP = 0x0800, 0x86DD, 0x0806
ETH_VLAN, ETH_QINQ, ETH_MPLS, ETH_PPPOE = 0x8100, 0x88A8, 0x8847, 0x8864
ETH_LLDP = 0x88CC

GATEWAY_MAC = "00:1b:21:0a:0b:01"


# ---------------------------------------------------------------------------------------------
# Deterministic randomness


class Rng:
    """splitmix64: tiny, fast, identical on every Python version."""

    def __init__(self, seed):
        self.state = seed & M64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n

    def between(self, lo, hi):
        """Uniform integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def chance(self, percent):
        return self.below(100) < percent

    def bytes(self, n):
        out = bytearray()
        while len(out) < n:
            out += struct.pack("<Q", self.next())
        return bytes(out[:n])


# ---------------------------------------------------------------------------------------------
# Header builders (checksums are computed so that Wireshark shows clean captures)


def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def mac_for(ip):
    """A stable locally administered MAC for a host address."""
    raw = ipaddress.ip_address(ip).packed[-4:]
    return "02:00:" + ":".join(f"{b:02x}" for b in raw)


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def pseudo_header(src, dst, proto, length):
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    if s.version == 4:
        return s.packed + d.packed + struct.pack("!BBH", 0, proto, length)
    return s.packed + d.packed + struct.pack("!IxxxB", length, proto)


def tcp_segment(src, dst, sport, dport, seq, ack, flags, payload=b"", window=64240, options=b""):
    off = (20 + len(options)) // 4
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, off << 4, flags,
                      window, 0, 0) + options
    csum = checksum(pseudo_header(src, dst, 6, len(hdr) + len(payload)) + hdr + payload)
    return hdr[:16] + struct.pack("!H", csum) + hdr[18:] + payload


def udp_datagram(src, dst, sport, dport, payload):
    length = 8 + len(payload)
    hdr = struct.pack("!HHHH", sport, dport, length, 0)
    csum = checksum(pseudo_header(src, dst, 17, length) + hdr + payload) or 0xFFFF
    return struct.pack("!HHHH", sport, dport, length, csum) + payload


def icmp_message(itype, code, ident, seq, payload, v6=False, src=None, dst=None):
    body = struct.pack("!BBHHH", itype, code, 0, ident, seq) + payload
    pre = pseudo_header(src, dst, 58, len(body)) if v6 else b""
    csum = checksum(pre + body)
    return body[:2] + struct.pack("!H", csum) + body[4:]


def ipv4_packet(src, dst, proto, payload, ttl=64, ident=0, df=True, mf=False, frag_off=0, tos=0,
                options=b"", total_len=None):
    ihl = (20 + len(options)) // 4
    flags = (0x4000 if df else 0) | (0x2000 if mf else 0) | frag_off
    length = total_len if total_len is not None else 20 + len(options) + len(payload)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, length, ident, flags, ttl, proto, 0,
                      ipaddress.ip_address(src).packed, ipaddress.ip_address(dst).packed) + options
    csum = checksum(hdr)
    return hdr[:10] + struct.pack("!H", csum) + hdr[12:] + payload


def ipv6_packet(src, dst, next_header, payload, hlim=64, tclass=0, flow_label=0, payload_len=None):
    plen = payload_len if payload_len is not None else len(payload)
    first = (6 << 28) | (tclass << 20) | flow_label
    return struct.pack("!IHBB16s16s", first, plen, next_header, hlim, ipaddress.ip_address(src).packed,
                       ipaddress.ip_address(dst).packed) + payload


def ipv6_ext(next_header, body_len=6):
    """A Hop-by-Hop or Destination Options header of 8 * k bytes padded with PadN."""
    total = 2 + body_len
    assert total % 8 == 0
    pad = bytes([1, body_len - 2]) + bytes(body_len - 2)
    return struct.pack("!BB", next_header, total // 8 - 1) + pad


def ipv6_frag_header(next_header, offset_units, more, ident):
    return struct.pack("!BBHI", next_header, 0, (offset_units << 3) | (1 if more else 0), ident)


# ---------------------------------------------------------------------------------------------
# Application payloads (so that process plugins and Wireshark see something real)


def dns_name(name):
    out = b""
    for label in name.split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def dns_query(txid, name, qtype=1):
    return struct.pack("!HHHHHH", txid, 0x0100, 1, 0, 0, 0) + dns_name(name) + struct.pack("!HH", qtype, 1)


def dns_response(txid, name, qtype, answers):
    msg = struct.pack("!HHHHHH", txid, 0x8180, 1, len(answers), 0, 0) + dns_name(name) + struct.pack("!HH", qtype, 1)
    for addr in answers:
        rdata = ipaddress.ip_address(addr).packed
        msg += struct.pack("!HHHIH", 0xC00C, qtype, 1, 300, len(rdata)) + rdata
    return msg


def tls_client_hello(rng, sni):
    name = sni.encode()
    sni_ext = struct.pack("!HHHBH", 0, len(name) + 5, len(name) + 3, 0, len(name)) + name
    groups = struct.pack("!HHH", 10, 6, 4) + struct.pack("!HH", 0x001D, 0x0017)
    sigalgs = struct.pack("!HHH", 13, 6, 4) + struct.pack("!HH", 0x0403, 0x0804)
    versions = struct.pack("!HHB", 43, 5, 4) + struct.pack("!HH", 0x0304, 0x0303)
    alpn_list = b"\x02h2\x08http/1.1"
    alpn = struct.pack("!HHH", 16, len(alpn_list) + 2, len(alpn_list)) + alpn_list
    exts = sni_ext + groups + sigalgs + versions + alpn
    suites = struct.pack("!HHHH", 0x1301, 0x1302, 0xC02B, 0xC02F)
    body = (struct.pack("!H", 0x0303) + rng.bytes(32) + b"\x20" + rng.bytes(32) + struct.pack("!H", len(suites))
            + suites + b"\x01\x00" + struct.pack("!H", len(exts)) + exts)
    hs = b"\x01" + struct.pack("!I", len(body))[1:] + body
    return b"\x16\x03\x01" + struct.pack("!H", len(hs)) + hs


def tls_server_hello(rng):
    exts = struct.pack("!HHH", 43, 2, 0x0304)
    body = (struct.pack("!H", 0x0303) + rng.bytes(32) + b"\x20" + rng.bytes(32) + struct.pack("!HB", 0x1301, 0)
            + struct.pack("!H", len(exts)) + exts)
    hs = b"\x02" + struct.pack("!I", len(body))[1:] + body
    return b"\x16\x03\x03" + struct.pack("!H", len(hs)) + hs


def tls_app_data(rng, n):
    n = max(n, 6)
    return b"\x17\x03\x03" + struct.pack("!H", n - 5) + rng.bytes(n - 5)


def http_request(host, path):
    return (f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: capgen/1.0\r\nAccept: */*\r\n\r\n").encode()


def http_response(rng, body_len):
    head = (f"HTTP/1.1 200 OK\r\nServer: capgen\r\nContent-Type: text/html\r\n"
            f"Content-Length: {body_len}\r\n\r\n").encode()
    return head + b"x" * body_len


# ---------------------------------------------------------------------------------------------
# Packets with flow metadata, the capture, and the reference flow table


class Meta:
    """What a flow exporter extracts from one packet (None = the packet never reaches a flow)."""

    __slots__ = ("ipver", "proto", "src", "dst", "sport", "dport", "vlan", "ip_len", "ttl", "flags",
                 "icmp", "smac", "dmac", "label", "optional")

    def __init__(self, **kw):
        self.vlan, self.flags, self.icmp, self.optional = 0, 0, 0, False
        for k, v in kw.items():
            setattr(self, k, v)


class Capture:
    def __init__(self, name, snaplen=65535, linktype=1):
        self.name = name
        self.snaplen = snaplen
        self.linktype = linktype  # pcap LINKTYPE_* of every record
        self.records = []  # (ts_ns, seq, frame, wire_len, meta)
        self.optional_pairs = []  # address pairs between which any flow is allowed, none required

    def add(self, ts_ns, frame, meta=None, caplen=None):
        wire = len(frame)
        if caplen is not None:
            frame = frame[:caplen]
        self.records.append((ts_ns, len(self.records), frame, wire, meta))

    def sorted_records(self):
        return sorted(self.records, key=lambda r: (r[0], r[1]))

    def pcap_bytes(self):
        out = io.BytesIO()
        out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, self.snaplen, self.linktype))
        for ts, _, frame, wire, _ in self.sorted_records():
            out.write(struct.pack("<IIII", ts // NS, ts % NS, len(frame), wire))
            out.write(frame)
        return out.getvalue()


class Flow:
    def __init__(self, m, ts, index):
        self.index = index
        self.ipver, self.proto, self.vlan = m.ipver, m.proto, m.vlan
        self.src, self.dst, self.sport, self.dport = m.src, m.dst, m.sport, m.dport
        self.smac, self.dmac = m.smac, m.dmac
        self.first = self.last = ts
        self.packets, self.bytes, self.flags = [0, 0], [0, 0], [0, 0]
        self.ttl, self.icmp = [None, None], [None, None]
        self.label = m.label
        self.optional = m.optional
        self.end = None

    def add(self, m, ts, d):
        self.last = ts
        self.packets[d] += 1
        self.bytes[d] += m.ip_len
        self.flags[d] |= m.flags
        if self.ttl[d] is None:
            self.ttl[d] = m.ttl
        if self.icmp[d] is None and m.proto in (1, 58):
            self.icmp[d] = m.icmp


def flow_key(m):
    a = (ipaddress.ip_address(m.src).packed, m.sport)
    b = (ipaddress.ip_address(m.dst).packed, m.dport)
    return (m.ipver, m.proto, m.vlan) + (a + b if a <= b else b + a)


def reference_flows(capture):
    """Replays the capture through rowprobe's flow semantics; returns flows in creation order."""
    live, done, count = {}, [], 0
    records = capture.sorted_records()
    file_end = records[-1][0] if records else 0
    for ts, _, _, _, m in records:
        if m is None:
            continue
        key = flow_key(m)
        f = live.get(key)
        if f is not None:
            d = 0 if (m.src, m.sport) == (f.src, f.sport) else 1
            gap, age = ts - f.last, ts - f.first
            if abs(gap - INACTIVE_NS) < MARGIN_NS or abs(age - ACTIVE_NS) < MARGIN_NS:
                raise SystemExit(f"{capture.name}: {m.label}: packet at {ts} too close to a timeout")
            reason = None
            if gap > INACTIVE_NS:
                reason = "inactive"
            elif (m.flags & SYN) and (f.flags[d] & (FIN | RST)):
                reason = "end"
            elif age > ACTIVE_NS:
                reason = "active"
            if reason:
                f.end = reason
                done.append(f)
                f = None
        if f is None:
            f = Flow(m, ts, count)
            count += 1
            live[key] = f
        f.add(m, ts, 0 if (m.src, m.sport) == (f.src, f.sport) else 1)
    for f in live.values():
        if f.flags[0] & (FIN | RST) or f.flags[1] & (FIN | RST):
            f.end = "end|forced"
        elif file_end - f.last > INACTIVE_NS - MARGIN_NS:
            f.end = "inactive|forced"  # a sweep may or may not have reached it before the end
        else:
            f.end = "forced"
        done.append(f)
    return sorted(done, key=lambda f: f.index)


def fmt_ts(ts):
    return f"{ts // NS}.{ts % NS:09d}"


TRUTH_HEADER = ["source", "case", "pcap", "src_ip", "src_port", "dst_ip", "dst_port", "proto", "packets",
                "packets_rev", "bytes", "bytes_rev", "bytes_unit", "first_ts", "last_ts", "duration_s",
                "tcp_flags", "tcp_flags_rev", "label", "extra"]


def truth_csv(capture, flows):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(TRUTH_HEADER)
    for f in flows:
        extra = {"vlan": f.vlan, "ip_version": f.ipver, "ttl": f.ttl[0] or 0, "ttl_rev": f.ttl[1] or 0,
                 "icmp_type_code": f.icmp[0] or 0, "icmp_type_code_rev": f.icmp[1] or 0,
                 "src_mac": f.smac, "dst_mac": f.dmac, "end_reason": f.end}
        if f.optional:
            # Implementation-defined: only the addresses are asserted, the flow may be absent.
            w.writerow(["capgen", capture.name, f"{capture.name}.pcap", f.src, "", f.dst, "", "", "", "", "", "",
                        "ip", "", "", "", "", "", f.label, json.dumps({"optional": True}, sort_keys=True)])
            continue
        w.writerow(["capgen", capture.name, f"{capture.name}.pcap", f.src, f.sport, f.dst, f.dport, f.proto,
                    f.packets[0], f.packets[1], f.bytes[0], f.bytes[1], "ip", fmt_ts(f.first), fmt_ts(f.last),
                    fmt_ts(f.last - f.first), f.flags[0], f.flags[1], f.label, json.dumps(extra, sort_keys=True)])
    return out.getvalue()


# ---------------------------------------------------------------------------------------------
# Link layer encapsulations


class Encap:
    """Layer-2 wrapping: VLAN tags (outermost first), an MPLS label stack, or a PPPoE session."""

    def __init__(self, tags=(), mpls=(), pppoe=None):
        self.tags, self.mpls, self.pppoe = list(tags), list(mpls), pppoe

    @property
    def vlan(self):
        return self.tags[0][1] if self.tags else 0

    def frame(self, dmac, smac, ipver, ip):
        ethertype = ETH_IPV4 if ipver == 4 else ETH_IPV6
        inner = ip
        if self.pppoe is not None:
            ppp = struct.pack("!H", 0x0021 if ipver == 4 else 0x0057) + ip
            inner = struct.pack("!BBHH", 0x11, 0, self.pppoe, len(ppp)) + ppp
            ethertype = ETH_PPPOE
        if self.mpls:
            stack = b""
            for i, label in enumerate(self.mpls):
                bos = 1 if i == len(self.mpls) - 1 else 0
                stack += struct.pack("!I", (label << 12) | (bos << 8) | 64)
            inner = stack + inner
            ethertype = ETH_MPLS
        # Each tag is TPID (where the previous ethertype was) + TCI; the last one names the payload.
        chain = b""
        for i, (tpid, vid) in enumerate(self.tags):
            nxt = self.tags[i + 1][0] if i + 1 < len(self.tags) else ethertype
            chain += struct.pack("!HH", vid, nxt)
        first_type = self.tags[0][0] if self.tags else ethertype
        return mac_bytes(dmac) + mac_bytes(smac) + struct.pack("!H", first_type) + chain + inner


PLAIN = Encap()


class Session:
    """One conversation between a client and a server; emits packets and their metadata."""

    def __init__(self, cap, label, client, server, proto, cport=0, sport=0, encap=PLAIN, cttl=64, sttl=57,
                 cmac=None, smac=None, rng=None):
        self.cap, self.label, self.proto = cap, label, proto
        self.client, self.server, self.cport, self.sport = client, server, cport, sport
        self.ipver = ipaddress.ip_address(client).version
        self.encap, self.cttl, self.sttl = encap, cttl, sttl
        self.cmac = cmac or mac_for(client)
        self.smac = smac or (mac_for(server) if ipaddress.ip_address(server).is_private else GATEWAY_MAC)
        self.seq = [1000 + (cport * 7919) % 100000, 50000 + (sport * 104729) % 100000]
        self.ident = [(cport * 31 + 7) & 0xFFFF, (sport * 17 + 3) & 0xFFFF]
        self.rng = rng

    def endpoints(self, from_client):
        if from_client:
            return self.client, self.server, self.cport, self.sport, self.cttl, self.cmac, self.smac
        return self.server, self.client, self.sport, self.cport, self.sttl, self.smac, self.cmac

    def emit(self, ts, from_client, l4, l4proto=None, flags=0, icmp=0, ext=b"", ext_nh=None, caplen=None,
             frag=None, meta_ports=True):
        src, dst, sp, dp, ttl, smac, dmac = self.endpoints(from_client)
        proto = l4proto if l4proto is not None else self.proto
        d = 0 if from_client else 1
        self.ident[d] = (self.ident[d] + 1) & 0xFFFF
        if self.ipver == 4:
            if frag:
                ip = ipv4_packet(src, dst, proto, l4, ttl=ttl, ident=frag["ident"], df=False, mf=frag["mf"],
                                 frag_off=frag["off"])
            else:
                ip = ipv4_packet(src, dst, proto, l4, ttl=ttl, ident=self.ident[d])
        else:
            ip = ipv6_packet(src, dst, ext_nh if ext else proto, ext + l4, hlim=ttl)
        meta = Meta(ipver=self.ipver, proto=self.proto, src=src, dst=dst, sport=sp if meta_ports else 0,
                    dport=dp if meta_ports else 0, vlan=self.encap.vlan, ip_len=len(ip), ttl=ttl, flags=flags,
                    icmp=icmp, smac=smac, dmac=dmac, label=self.label)
        self.cap.add(ts, self.encap.frame(dmac, smac, self.ipver, ip), meta, caplen)
        return meta

    def tcp(self, ts, from_client, flags, payload=b"", ext=b"", ext_nh=None, caplen=None, window=64240):
        src, dst, sp, dp = self.endpoints(from_client)[:4]
        d = 0 if from_client else 1
        ack = self.seq[1 - d] if flags & ACK else 0
        opts = b"\x02\x04\x05\xb4\x01\x03\x03\x07" if flags & SYN else b""
        seg = tcp_segment(src, dst, sp, dp, self.seq[d], ack, flags, payload, window, opts)
        self.seq[d] += len(payload) + (1 if flags & (SYN | FIN) else 0)
        return self.emit(ts, from_client, seg, flags=flags, ext=ext, ext_nh=ext_nh, caplen=caplen)

    def udp(self, ts, from_client, payload, caplen=None):
        src, dst, sp, dp = self.endpoints(from_client)[:4]
        return self.emit(ts, from_client, udp_datagram(src, dst, sp, dp, payload), caplen=caplen)

    def icmp(self, ts, from_client, itype, code, ident, seq, payload=b""):
        src, dst = self.endpoints(from_client)[:2]
        v6 = self.ipver == 6
        msg = icmp_message(itype, code, ident, seq, payload, v6, src, dst)
        return self.emit(ts, from_client, msg, icmp=(itype << 8) | code)

    def handshake(self, t, rtt):
        self.tcp(t, True, SYN)
        self.tcp(t + rtt, False, SYN | ACK)
        self.tcp(t + rtt + rtt // 20 + 1000, True, ACK)
        return t + rtt + rtt // 20 + 1000

    def close(self, t, rtt, client_first=True):
        self.tcp(t, client_first, FIN | ACK)
        self.tcp(t + rtt, not client_first, FIN | ACK)
        self.tcp(t + rtt + rtt // 20 + 1000, client_first, ACK)
        return t + rtt + rtt // 20 + 1000


def ms(x):
    return int(x * 1_000_000)


def sec(x):
    return int(x * NS)


# ---------------------------------------------------------------------------------------------
# Scenario: mixed — one flow per encapsulation / protocol feature


def scenario_mixed():
    cap = Capture("mixed")
    rng = Rng(0x6D69786564)
    t0 = 1_700_000_000 * NS
    lan = "192.168.1.10"

    s = Session(cap, "tcp-handshake-data-fin", lan, "93.184.216.34", 6, 50000, 80, cttl=64, sttl=52, rng=rng)
    t = s.handshake(t0 + ms(1.25), ms(20))
    s.tcp(t + ms(0.2), True, PSH | ACK, http_request("example.com", "/index.html"))
    s.tcp(t + ms(20.5), False, ACK)
    s.tcp(t + ms(22.1), False, PSH | ACK, http_response(rng, 820))
    s.tcp(t + ms(22.3), True, ACK)
    s.close(t + ms(40), ms(19))

    s = Session(cap, "tcp-rst", lan, "93.184.216.34", 6, 50001, 8080, cttl=64, sttl=52)
    s.tcp(t0 + ms(5.5), True, SYN)
    s.tcp(t0 + ms(25.7), False, RST | ACK)

    s = Session(cap, "udp-dns", lan, "192.168.1.1", 17, 53000, 53, cttl=64, sttl=64)
    s.udp(t0 + ms(7.3), True, dns_query(0x1234, "example.com"))
    s.udp(t0 + ms(9.9), False, dns_response(0x1234, "example.com", 1, ["93.184.216.34"]))

    s = Session(cap, "icmp-echo", lan, "8.8.8.8", 1, cttl=64, sttl=117)
    for i in range(3):
        s.icmp(t0 + ms(100 + 1000 * i), True, 8, 0, 0x4242, i + 1, rng.bytes(56))
        s.icmp(t0 + ms(112 + 1000 * i), False, 0, 0, 0x4242, i + 1, rng.bytes(56))

    s = Session(cap, "icmpv6-echo", "2001:db8:1::10", "2001:db8:ffff::1", 58, cttl=64, sttl=55)
    for i in range(2):
        s.icmp(t0 + ms(150 + 1000 * i), True, 128, 0, 0x77, i + 1, rng.bytes(32))
        s.icmp(t0 + ms(171 + 1000 * i), False, 129, 0, 0x77, i + 1, rng.bytes(32))

    # IPv6 TCP whose client packets carry Hop-by-Hop + Destination Options headers.
    s = Session(cap, "ipv6-tcp-extension-headers", "2001:db8:1::10", "2001:db8:ffff::80", 6, 40000, 443,
                cttl=64, sttl=50)
    ext = ipv6_ext(60, 6) + ipv6_ext(6, 14)  # HBH (8 bytes) -> DstOpts (16 bytes) -> TCP
    t = t0 + ms(200)
    s.tcp(t, True, SYN, ext=ext, ext_nh=0)
    s.tcp(t + ms(30), False, SYN | ACK)
    s.tcp(t + ms(31), True, ACK, ext=ext, ext_nh=0)
    s.tcp(t + ms(32), True, PSH | ACK, tls_client_hello(rng, "v6.example.net"), ext=ext, ext_nh=0)
    s.tcp(t + ms(62), False, PSH | ACK, tls_server_hello(rng))
    s.tcp(t + ms(63), True, ACK, ext=ext, ext_nh=0)

    # 802.1Q: the same 5-tuple on two VLANs is two flows.
    s = Session(cap, "vlan-8021q", "10.1.0.5", "10.1.0.9", 17, 33333, 5001, encap=Encap([(ETH_VLAN, 100)]))
    for i in range(3):
        s.udp(t0 + ms(300 + 10 * i), True, rng.bytes(100 + 10 * i))
    for i in range(2):
        s.udp(t0 + ms(305 + 10 * i), False, rng.bytes(40))
    s = Session(cap, "vlan-8021q-other-vlan", "10.1.0.5", "10.1.0.9", 17, 33333, 5001,
                encap=Encap([(ETH_VLAN, 101)]))
    s.udp(t0 + ms(301), True, rng.bytes(64))

    # QinQ: 802.1ad outer tag 200, 802.1Q inner tag 300; the outer id is the flow's VLAN.
    s = Session(cap, "qinq", "10.2.0.5", "10.2.0.9", 6, 40001, 22, encap=Encap([(ETH_QINQ, 200), (ETH_VLAN, 300)]))
    t = s.handshake(t0 + ms(400), ms(2))
    s.tcp(t + ms(1), False, PSH | ACK, b"SSH-2.0-OpenSSH_9.2\r\n")
    s.tcp(t + ms(2), True, PSH | ACK, b"SSH-2.0-capgen\r\n")

    s = Session(cap, "mpls", "10.3.0.5", "10.3.0.9", 17, 4000, 4001, encap=Encap(mpls=[16, 17]))
    s.udp(t0 + ms(500), True, rng.bytes(200))
    s.udp(t0 + ms(501), True, rng.bytes(300))
    s.udp(t0 + ms(502), False, rng.bytes(20))

    s = Session(cap, "pppoe", "100.64.0.5", "93.184.216.34", 6, 50500, 443, encap=Encap(pppoe=0x0101))
    t = s.handshake(t0 + ms(600), ms(15))
    s.tcp(t + ms(1), True, PSH | ACK, tls_client_hello(rng, "pppoe.example.com"))
    s.tcp(t + ms(16), False, PSH | ACK, tls_server_hello(rng))
    s = Session(cap, "pppoe-ipv6", "2001:db8:2::5", "2001:db8:ffff::53", 17, 5353, 53, encap=Encap(pppoe=0x0101))
    s.udp(t0 + ms(650), True, dns_query(0x99, "example.org", 28))
    s.udp(t0 + ms(660), False, dns_response(0x99, "example.org", 28, ["2001:db8::1"]))

    # IPv4 fragments: a 3000-byte UDP datagram in three fragments (first + two non-first), one
    # unfragmented reply. Every fragment counts as a packet of the flow.
    s = Session(cap, "ipv4-fragments", "192.168.1.20", "192.168.1.30", 17, 40000, 9999)
    dgram = udp_datagram("192.168.1.20", "192.168.1.30", 40000, 9999, rng.bytes(3000))
    pieces = [dgram[0:1480], dgram[1480:2960], dgram[2960:]]
    off = 0
    for i, piece in enumerate(pieces):
        s.emit(t0 + ms(700 + i * 0.01), True, piece, frag={"ident": 0xBEEF, "mf": i < 2, "off": off // 8})
        off += len(piece)
    s.udp(t0 + ms(701), False, rng.bytes(100))

    # IPv6 fragments: a 2000-byte UDP datagram in two fragments behind a Fragment header.
    s = Session(cap, "ipv6-fragments", "2001:db8:1::20", "2001:db8:1::30", 17, 40001, 9999)
    dgram = udp_datagram("2001:db8:1::20", "2001:db8:1::30", 40001, 9999, rng.bytes(2000))
    first, rest = dgram[:1240], dgram[1240:]
    s.emit(t0 + ms(750), True, first, ext=ipv6_frag_header(17, 0, True, 0xCAFE), ext_nh=44)
    s.emit(t0 + ms(750.01), True, rest, ext=ipv6_frag_header(17, 1240 // 8, False, 0xCAFE), ext_nh=44)
    s.udp(t0 + ms(751), False, rng.bytes(48))

    # Snap length: a full-size data packet captured with only 128 bytes; bytes = IP total length.
    s = Session(cap, "snaplen-truncated-capture", lan, "151.101.1.69", 6, 50002, 443, cttl=64, sttl=58)
    t = s.handshake(t0 + ms(800), ms(10))
    s.tcp(t + ms(1), True, PSH | ACK, tls_client_hello(rng, "snap.example.com"))
    s.tcp(t + ms(11), False, ACK, rng.bytes(1448), caplen=128)
    s.tcp(t + ms(12), False, PSH | ACK, rng.bytes(1448), caplen=128)
    s.tcp(t + ms(13), True, ACK)

    # IPv4 header with options (IHL 6: Router Alert): the transport header starts at 24.
    s = Session(cap, "ipv4-options", lan, "192.168.1.40", 17, 5000, 5001, cttl=1, sttl=64)
    udp = udp_datagram(lan, "192.168.1.40", 5000, 5001, rng.bytes(30))
    ip = ipv4_packet(lan, "192.168.1.40", 17, udp, ttl=1, ident=7, options=b"\x94\x04\x00\x00")
    cap.add(t0 + ms(900), PLAIN.frame(s.smac, s.cmac, 4, ip),
            Meta(ipver=4, proto=17, src=lan, dst="192.168.1.40", sport=5000, dport=5001, ip_len=len(ip), ttl=1,
                 smac=s.cmac, dmac=s.smac, label=s.label))

    # ARP request and reply: not IP, never a flow.
    arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + mac_bytes(mac_for(lan)) + ipaddress.ip_address(lan).packed \
        + bytes(6) + ipaddress.ip_address("192.168.1.1").packed
    cap.add(t0 + ms(950), mac_bytes("ff:ff:ff:ff:ff:ff") + mac_bytes(mac_for(lan)) + struct.pack("!H", ETH_ARP)
            + arp + bytes(18))
    return cap


# ---------------------------------------------------------------------------------------------
# Scenario: timeouts — inactive, active, and SYN-after-FIN/RST splits


def scenario_timeouts():
    cap = Capture("timeouts")
    rng = Rng(0x74696D656F7574)
    t0 = 1_700_003_600 * NS

    # Idle 45 s, then the server speaks first: two flows, the second oriented server -> client.
    s = Session(cap, "idle-resume-udp", "10.9.0.1", "10.9.0.2", 17, 7000, 7001)
    for i in range(3):
        s.udp(t0 + sec(i), True, rng.bytes(50))
        s.udp(t0 + sec(i) + ms(3), False, rng.bytes(70))
    s.udp(t0 + sec(47), False, rng.bytes(80))
    s.udp(t0 + sec(48), True, rng.bytes(60))

    # An established TCP connection idle 60 s: the resumed part is a new flow without a SYN.
    s = Session(cap, "idle-resume-tcp", "10.9.0.7", "10.9.0.8", 6, 47000, 8443)
    t = s.handshake(t0 + sec(5), ms(1))
    s.tcp(t + ms(1), True, PSH | ACK, rng.bytes(300))
    s.tcp(t + ms(2), False, ACK)
    s.tcp(t + sec(60), True, PSH | ACK, rng.bytes(200))
    s.tcp(t + sec(60) + ms(1), False, PSH | ACK, rng.bytes(900))
    s.tcp(t + sec(60) + ms(2), True, ACK)

    # Gaps of 25 s (under the inactive timeout): one flow.
    s = Session(cap, "gaps-under-inactive", "10.9.0.9", "10.9.0.10", 17, 7100, 7101)
    for i in range(4):
        s.udp(t0 + sec(3 + 25 * i), True, rng.bytes(20))

    # A stream every 9 s for 700 s: split by the active timeout at 306 s and 612 s.
    s = Session(cap, "active-split", "10.9.0.3", "10.9.0.4", 17, 8000, 8001)
    for k in range(78):
        s.udp(t0 + sec(9 * k) + ms(500), True, rng.bytes(100))
        if k % 2 == 0:
            s.udp(t0 + sec(9 * k) + ms(550), False, rng.bytes(40))

    # FIN exchange, then a SYN on the same 5-tuple 2 s later: a new flow.
    s = Session(cap, "syn-after-fin", "10.9.0.5", "10.9.0.6", 6, 45000, 80)
    t = s.handshake(t0 + sec(20), ms(1))
    s.tcp(t + ms(1), True, PSH | ACK, http_request("10.9.0.6", "/a"))
    s.tcp(t + ms(3), False, PSH | ACK, http_response(rng, 200))
    t = s.close(t + ms(5), ms(1))
    s2 = Session(cap, "syn-after-fin", "10.9.0.5", "10.9.0.6", 6, 45000, 80)
    t = s2.handshake(t + sec(2), ms(1))
    s2.tcp(t + ms(1), True, PSH | ACK, http_request("10.9.0.6", "/b"))
    s2.tcp(t + ms(2), False, RST | ACK)

    # RST ends a connection, a new SYN 1 s later starts the next flow.
    s = Session(cap, "syn-after-rst", "10.9.0.11", "10.9.0.12", 6, 46000, 25)
    t = s.handshake(t0 + sec(30), ms(1))
    s.tcp(t + ms(1), True, RST | ACK)
    s2 = Session(cap, "syn-after-rst", "10.9.0.11", "10.9.0.12", 6, 46000, 25)
    t = s2.handshake(t + sec(1), ms(1))
    s2.tcp(t + ms(1), True, PSH | ACK, b"EHLO capgen\r\n")
    s2.tcp(t + ms(2), False, PSH | ACK, b"250 ok\r\n")
    return cap


# ---------------------------------------------------------------------------------------------
# Scenario: malformed — truncated at every layer, broken headers, non-IP frames


def scenario_malformed():
    cap = Capture("malformed")
    rng = Rng(0x6D616C666F726D)
    t0 = 1_700_007_200 * NS
    gw, host = GATEWAY_MAC, mac_for("10.66.0.1")
    eth = lambda et: mac_bytes(gw) + mac_bytes(host) + struct.pack("!H", et)  # noqa: E731
    step = [0]

    def t():
        step[0] += 1
        return t0 + ms(10 * step[0])

    # A valid flow before, between and after the garbage: parsing must carry on.
    good = Session(cap, "valid-udp", "10.66.0.1", "10.66.0.2", 17, 1111, 2222)
    good.udp(t(), True, rng.bytes(40))

    v4 = lambda src, proto, l4, **kw: ipv4_packet(src, "10.66.9.9", proto, l4, **kw)  # noqa: E731
    tcp_ok = tcp_segment("10.66.1.1", "10.66.9.9", 1, 2, 0, 0, SYN)

    cap.add(t(), mac_bytes(gw)[:6] + mac_bytes(host)[:4])                            # 10 bytes: no ethertype
    cap.add(t(), eth(ETH_VLAN) + b"\x00")                                              # VLAN tag cut
    cap.add(t(), eth(ETH_VLAN) + struct.pack("!HH", 5, ETH_VLAN) * 12 + struct.pack("!HH", 5, ETH_IPV4)
            + v4("10.66.1.2", 17, udp_datagram("10.66.1.2", "10.66.9.9", 1, 2, b"x")))  # 13 VLAN tags
    cap.add(t(), eth(ETH_MPLS) + struct.pack("!I", (16 << 12) | 64) * 3)              # MPLS without bottom
    cap.add(t(), eth(ETH_PPPOE) + struct.pack("!BBH", 0x11, 0, 1))                     # PPPoE header cut
    cap.add(t(), eth(ETH_IPV4) + v4("10.66.1.3", 6, tcp_ok)[:12])                     # IPv4 header cut
    bad_ihl = bytearray(v4("10.66.1.4", 6, tcp_ok))
    bad_ihl[0] = 0x43
    cap.add(t(), eth(ETH_IPV4) + bytes(bad_ihl))                                        # IHL 3
    big_ihl = bytearray(v4("10.66.1.5", 6, b""))
    big_ihl[0] = 0x4F
    cap.add(t(), eth(ETH_IPV4) + bytes(big_ihl))                                        # IHL 15, 20 bytes
    cap.add(t(), eth(ETH_IPV4) + v4("10.66.1.6", 6, tcp_ok, total_len=12))            # total length < IHL
    bad_ver = bytearray(v4("10.66.1.7", 6, tcp_ok))
    bad_ver[0] = 0x75
    cap.add(t(), eth(ETH_IPV4) + bytes(bad_ver))                                        # version 7
    cap.add(t(), eth(ETH_IPV6) + ipv6_packet("2001:db8:bad::1", "2001:db8:bad::9", 6, tcp_ok)[:30])  # IPv6 cut
    # IPv6 Hop-by-Hop header whose length runs past the end of the packet.
    bogus = struct.pack("!BB", 6, 200) + bytes(6)
    cap.add(t(), eth(ETH_IPV6) + ipv6_packet("2001:db8:bad::2", "2001:db8:bad::9", 0, bogus))
    # IPv6 with 40 chained Destination Options headers.
    chain = b"".join(ipv6_ext(60) for _ in range(39)) + ipv6_ext(17)
    udp6 = udp_datagram("2001:db8:bad::3", "2001:db8:bad::9", 1, 2, b"x")
    cap.add(t(), eth(ETH_IPV6) + ipv6_packet("2001:db8:bad::3", "2001:db8:bad::9", 60, chain + udp6))
    # IPv6 payload length larger than the packet (not a snap length: the frame is complete).
    udp6 = udp_datagram("2001:db8:bad::4", "2001:db8:bad::9", 1, 2, b"")
    cap.add(t(), eth(ETH_IPV6) + ipv6_packet("2001:db8:bad::4", "2001:db8:bad::9", 17, udp6, payload_len=1000))

    # Transport headers cut: the flow is kept without ports (SDK contract, Anomaly::TruncatedL4).
    for src, proto, l4 in (("10.66.2.1", 6, tcp_ok[:10]), ("10.66.2.2", 17, b"\x00\x01\x00"),
                           ("10.66.2.3", 1, b"\x00")):
        ip = v4(src, proto, l4, ttl=33)
        cap.add(t(), eth(ETH_IPV4) + ip, Meta(ipver=4, proto=proto, src=src, dst="10.66.9.9", sport=0, dport=0,
                                              ip_len=len(ip), ttl=33, smac=host, dmac=gw,
                                              label=f"truncated-l4-proto{proto}"))

    # A non-first fragment whose first fragment never came: implementation-defined flow.
    frag = v4("10.66.3.1", 17, rng.bytes(64), df=False, mf=False, frag_off=100)
    cap.add(t(), eth(ETH_IPV4) + frag, Meta(ipver=4, proto=17, src="10.66.3.1", dst="10.66.9.9", sport=0, dport=0,
                                            ip_len=len(frag), ttl=64, smac=host, dmac=gw,
                                            label="orphan-fragment", optional=True))

    # Non-IP frames: ARP, LLDP, and an empty record.
    arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 2) + mac_bytes(host) + bytes(4) + mac_bytes(gw) + bytes(4)
    cap.add(t(), eth(ETH_ARP) + arp)
    cap.add(t(), mac_bytes("01:80:c2:00:00:0e") + mac_bytes(host) + struct.pack("!H", ETH_LLDP) + rng.bytes(40))
    cap.add(t(), b"")

    good.udp(t(), False, rng.bytes(60))
    good.udp(t(), True, rng.bytes(20))

    # Ambiguous garbage may legitimately be "processed up to the last valid layer": any flow
    # between these addresses is allowed but not required.
    cap.optional_pairs = [("2001:db8:bad::2", "2001:db8:bad::9"), ("2001:db8:bad::3", "2001:db8:bad::9"),
                          ("2001:db8:bad::4", "2001:db8:bad::9"), ("10.66.1.2", "10.66.9.9")]
    return cap


# ---------------------------------------------------------------------------------------------
# Scenario: demo — a few hundred flows of mixed, realistic-looking traffic for the README


DEMO_SITES = ["www.example.com", "api.example.net", "cdn.example.org", "mail.example.com", "news.example.net",
              "static.example.org", "video.example.com", "docs.example.net", "shop.example.org", "id.example.com"]


def scenario_demo():
    cap = Capture("demo")
    rng = Rng(0x64656D6F)
    t0 = 1_700_010_800 * NS
    clients4 = [f"192.168.10.{i}" for i in range(10, 40)]
    clients6 = [f"2001:db8:10::{i:x}" for i in range(0x10, 0x20)]
    servers4 = {name: f"203.0.113.{10 + i * 7}" for i, name in enumerate(DEMO_SITES)}
    servers6 = {name: f"2001:db8:200::{10 + i * 7:x}" for i, name in enumerate(DEMO_SITES)}
    resolver, resolver6 = "192.168.10.1", "2001:db8:10::1"
    used_ports = set()

    def port(client):
        while True:
            p = rng.between(32768, 60999)
            if (client, p) not in used_ports:
                used_ports.add((client, p))
                return p

    def dns(t, client, name, v6=False):
        server = resolver6 if v6 else resolver
        s = Session(cap, "dns", client, server, 17, port(client), 53, sttl=64)
        txid = rng.below(65536)
        qtype = 28 if v6 else 1
        answer = servers6[name] if v6 else servers4[name]
        s.udp(t, True, dns_query(txid, name, qtype))
        s.udp(t + ms(rng.between(2, 40)), False, dns_response(txid, name, qtype, [answer]))
        return t + ms(45)

    def https(t, client, name, v6=False):
        server = servers6[name] if v6 else servers4[name]
        rtt = ms(rng.between(8, 60))
        s = Session(cap, "https", client, server, 6, port(client), 443, sttl=rng.between(40, 60), rng=rng)
        t = s.handshake(t, rtt)
        s.tcp(t + ms(1), True, PSH | ACK, tls_client_hello(rng, name))
        t += rtt + ms(1)
        s.tcp(t, False, PSH | ACK, tls_server_hello(rng))
        s.tcp(t + ms(1), True, ACK)
        for _ in range(rng.between(1, 3)):
            t += ms(rng.between(5, 900))
            s.tcp(t, True, PSH | ACK, tls_app_data(rng, rng.between(80, 600)))
            segments = rng.between(1, 2)
            for k in range(segments):
                size = 1448 if k < segments - 1 else rng.between(100, 900)
                s.tcp(t + rtt + ms(k * 0.2), False, (PSH | ACK) if k == segments - 1 else ACK, tls_app_data(rng, size))
            s.tcp(t + rtt + ms(segments * 0.2 + 0.5), True, ACK)
            t += rtt + ms(2)
        s.close(t + ms(rng.between(50, 2000)), rtt, client_first=rng.chance(70))

    def http(t, client, name):
        rtt = ms(rng.between(8, 60))
        s = Session(cap, "http", client, servers4[name], 6, port(client), 80, sttl=rng.between(40, 60))
        t = s.handshake(t, rtt)
        s.tcp(t + ms(1), True, PSH | ACK, http_request(name, f"/page{rng.below(100)}.html"))
        body = http_response(rng, rng.between(200, 1300))
        s.tcp(t + rtt + ms(1), False, PSH | ACK, body)
        s.tcp(t + rtt + ms(2), True, ACK)
        s.close(t + rtt + ms(rng.between(10, 500)), rtt, client_first=False)

    def ping(t, client):
        target = rng.choice(["8.8.8.8", "1.1.1.1", "9.9.9.9"])
        s = Session(cap, "icmp-echo", client, target, 1, sttl=rng.between(50, 120))
        ident = rng.below(65536)
        for i in range(rng.between(1, 4)):
            s.icmp(t + sec(i), True, 8, 0, ident, i + 1, rng.bytes(56))
            s.icmp(t + sec(i) + ms(rng.between(5, 30)), False, 0, 0, ident, i + 1, rng.bytes(56))

    def ntp(t, client):
        s = Session(cap, "ntp", client, rng.choice(["198.51.100.123", "198.51.100.124"]), 17, port(client), 123)
        s.udp(t, True, b"\x23" + bytes(47))
        s.udp(t + ms(rng.between(10, 50)), False, b"\x24\x02" + rng.bytes(46))

    def quic(t, client, name):
        s = Session(cap, "quic", client, servers4[name], 17, port(client), 443, sttl=55)
        s.udp(t, True, b"\xc3\x00\x00\x00\x01" + rng.bytes(1195))  # QUIC Initials are padded to 1200
        for i in range(rng.between(1, 3)):
            s.udp(t + ms(20 + i), False, b"\x40" + rng.bytes(rng.between(200, 1200)))
        s.udp(t + ms(30), True, b"\x40" + rng.bytes(60))

    def ssh(t, client):
        s = Session(cap, "ssh", client, "192.168.10.200", 6, port(client), 22, sttl=64)
        t = s.handshake(t, ms(1))
        s.tcp(t + ms(1), False, PSH | ACK, b"SSH-2.0-OpenSSH_9.2\r\n")
        s.tcp(t + ms(2), True, PSH | ACK, b"SSH-2.0-OpenSSH_9.2\r\n")
        for i in range(rng.between(5, 15)):
            t += ms(rng.between(50, 1500))
            s.tcp(t, True, PSH | ACK, rng.bytes(36))
            s.tcp(t + ms(1), False, PSH | ACK, rng.bytes(rng.between(36, 200)))
            s.tcp(t + ms(40), True, ACK)

    t = t0
    for _ in range(200):
        t += ms(rng.between(5, 400))
        kind = rng.below(100)
        v6 = rng.chance(20)
        client = rng.choice(clients6 if v6 else clients4)
        name = rng.choice(DEMO_SITES)
        if kind < 55:
            start = dns(t, client, name, v6)
            if kind < 40:
                https(start, client, name, v6)
            elif kind < 48 and not v6:
                http(start, client, name)
            elif not v6:
                quic(start, client, name)
        elif kind < 75:
            https(t, client, name, v6)
        elif kind < 85:
            ping(t, rng.choice(clients4))
        elif kind < 95:
            ntp(t, rng.choice(clients4))
        else:
            ssh(t, rng.choice(clients4))
    return cap


# ---------------------------------------------------------------------------------------------
# Tunnels (issue 12): every encapsulation rowprobe decapsulates, one inner TCP flow each


def vxlan_header(vni):
    return struct.pack("!BxxxI", 0x08, vni << 8)


def gre_header(flags, proto, *words):
    return struct.pack("!HH", flags, proto) + b"".join(struct.pack("!I", w) for w in words)


class TunnelEncap:
    """Wraps a session's IP packets in a tunnel between two outer endpoints.

    `kind` names the encapsulation; the inner packet travels from the session's client to its
    server through outer_a -> outer_b, and back through outer_b -> outer_a. The outer Ethernet
    header and any inner Ethernet header use the session's MACs, so the flow's MACs are the same
    whether or not the tunnel carries Ethernet."""

    vlan = 0

    def __init__(self, kind, client, outer_a, outer_b, tid=0):
        self.kind, self.client, self.outer_a, self.outer_b, self.tid = kind, client, outer_a, outer_b, tid
        self.outer_v6 = ipaddress.ip_address(outer_a).version == 6

    def frame(self, dmac, smac, ipver, ip):
        src = ipaddress.ip_address(ip[12:16] if ipver == 4 else ip[8:24])
        forward = src == ipaddress.ip_address(self.client)
        osrc, odst = (self.outer_a, self.outer_b) if forward else (self.outer_b, self.outer_a)
        sport, dport = (40000 + self.tid % 1000, 0) if forward else (0, 40000 + self.tid % 1000)
        inner_eth = mac_bytes(dmac) + mac_bytes(smac) + struct.pack("!H", ETH_IPV4 if ipver == 4 else ETH_IPV6)
        k = self.kind

        def udp(port, payload):
            # Both tunnel ends send to the well-known port (rowprobe, like Suricata and Zeek, opens
            # a UDP tunnel on the destination port only); Teredo's server answers from 3544.
            if k == "teredo":
                sp, dp = (sport, port) if forward else (port, dport)
            else:
                sp, dp = port, port
            return 17, udp_datagram(osrc, odst, sp, dp, payload)

        if k == "vxlan":
            proto, l4 = udp(4789, vxlan_header(self.tid) + inner_eth + ip)
        elif k == "geneve":
            opts = struct.pack("!HBBI", 0x0103, 0x80, 1, 0xCAFE)  # one 8-byte option
            proto, l4 = udp(6081, struct.pack("!BBHI", len(opts) // 4, 0, 0x6558, self.tid << 8) + opts +
                            inner_eth + ip)
        elif k == "gtpu":
            proto, l4 = udp(2152, struct.pack("!BBHI", 0x30, 0xFF, len(ip), self.tid) + ip)
        elif k == "teredo":
            origin = struct.pack("!HH4s", 0, 0x1234 ^ 0xFFFF, bytes(b ^ 0xFF for b in (203, 0, 113, 9)))
            proto, l4 = udp(3544, (b"" if forward else origin) + ip)
        elif k == "ayiya":
            hdr = struct.pack("!BBBBI", 0x41, 0x50, 0x11, 41 if ipver == 6 else 4, 0) + bytes(16 + 20)
            proto, l4 = udp(5072, hdr + ip)
        elif k == "capwap":
            proto, l4 = udp(5247, struct.pack("!II", 0x00100200, 0) + inner_eth + ip)
        elif k == "mpls-udp":
            proto, l4 = udp(6635, struct.pack("!I", (self.tid << 12) | 0x100 | 64) + ip)
        elif k == "gre-key":
            proto, l4 = 47, gre_header(0x3000, ETH_IPV4 if ipver == 4 else ETH_IPV6, self.tid, 1) + ip
        elif k == "gre-teb":
            proto, l4 = 47, gre_header(0x2000, 0x6558, self.tid) + inner_eth + ip
        elif k == "gre-mpls":
            proto, l4 = 47, gre_header(0, ETH_MPLS) + struct.pack("!I", (16 << 12) | 0x100 | 64) + ip
        elif k == "erspan2":
            hdr = struct.pack("!II", 0x10000000 | self.tid, 0)
            proto, l4 = 47, gre_header(0x1000, 0x88BE, 1) + hdr + inner_eth + ip
        elif k == "erspan3":
            hdr = struct.pack("!III", 0x20000000 | self.tid, 0, 0)
            proto, l4 = 47, gre_header(0x1000, 0x22EB, 1) + hdr + inner_eth + ip
        elif k == "ipip":
            proto, l4 = (4 if ipver == 4 else 41), ip
        else:
            raise ValueError(k)
        if self.outer_v6:
            outer = ipv6_packet(osrc, odst, proto, l4)
            etype = ETH_IPV6
        else:
            outer = ipv4_packet(osrc, odst, proto, l4)
            etype = ETH_IPV4
        return mac_bytes(dmac) + mac_bytes(smac) + struct.pack("!H", etype) + outer


# (kind, tunnel id as rowprobe exports it, outer IPv6?, inner IPv6?)
TUNNEL_KINDS = [
    ("vxlan", 0x00ABCD, False, False),
    ("geneve", 0x000777, False, False),
    ("gtpu", 0x1A2B3C4D, False, False),
    ("teredo", 0, False, True),
    ("ayiya", 0, False, True),
    ("capwap", 0, False, False),
    ("mpls-udp", 0, False, False),
    ("gre-key", 0x00C0FFEE, False, False),
    ("gre-teb", 0x00000042, False, False),
    ("gre-mpls", 0, False, False),
    ("erspan2", 0x0155, False, False),
    ("erspan3", 0x0233, False, False),
    ("ipip", 0, False, False),   # 4in4
    ("ipip", 0, False, True),    # 6in4
    ("ipip", 0, True, False),    # 4in6
    ("ipip", 0, True, True),     # 6in6
]


def scenario_tunnels():
    """One inner TCP connection (handshake, one data segment each way, FIN) per tunnel kind.

    The truth holds the inner flows (`--tunnel inner`); each inner flow has its own client port
    (41000 + index) so that flows of different tunnels never merge."""
    cap = Capture("tunnels")
    rng = Rng(0x74756E6E656C73)
    t = 1_700_100_000 * NS
    for i, (kind, tid, outer6, inner6) in enumerate(TUNNEL_KINDS):
        client = "2001:0:4136:e378:8000:63bf:3fff:fdd2" if kind == "teredo" else (
            "fd00:10::5" if inner6 else "10.200.0.5")
        server = "2001:db8:80::80" if inner6 else "172.16.80.80"
        outer_a, outer_b = ("2001:db8:ff::1", "2001:db8:ff::2") if outer6 else ("198.51.100.1", "198.51.100.2")
        encap = TunnelEncap(kind, client, outer_a, outer_b, tid)
        s = Session(cap, f"tunnel-{kind}-{'6' if outer6 else '4'}in{'6' if inner6 else '4'}", client, server, 6,
                    41000 + i, 443, encap=encap, cttl=64, sttl=60, cmac="02:00:00:00:10:01",
                    smac="02:00:00:00:10:02", rng=rng)
        u = s.handshake(t, ms(10))
        s.tcp(u + ms(1), True, PSH | ACK, rng.bytes(100 + i))
        s.tcp(u + ms(12), False, PSH | ACK, rng.bytes(300 + i))
        s.close(u + ms(20), ms(10))
        t += ms(500)
    return cap


# ---------------------------------------------------------------------------------------------
# Link types (issue 12): one capture per pcap link type, one TCP connection each


def l2_header(kind, dmac, smac, ipver):
    etype = ETH_IPV4 if ipver == 4 else ETH_IPV6
    if kind == "sll2":
        return struct.pack("!HHIHBB8s", etype, 0, 2, 1, 0, 6, mac_bytes(smac) + b"\0\0")
    if kind == "ppp":
        return struct.pack("!BBH", 0xFF, 0x03, 0x0021 if ipver == 4 else 0x0057)
    if kind == "ppp-hdlc":
        return struct.pack("!BBH", 0xFF, 0x03, 0x0021 if ipver == 4 else 0x0057)
    if kind == "chdlc":
        return struct.pack("!BBH", 0x0F, 0x00, etype)
    if kind == "loop":
        return struct.pack("!I", 2 if ipver == 4 else 24)
    wifi = (struct.pack("<BBH", 0x88, 0x01, 0) + mac_bytes(GATEWAY_MAC) + mac_bytes(smac) + mac_bytes(dmac) +
            struct.pack("<HH", 0, 0) + b"\xaa\xaa\x03\x00\x00\x00" + struct.pack("!H", etype))
    if kind == "ieee80211":
        return wifi
    if kind == "radiotap":
        return struct.pack("<BBHI", 0, 0, 8, 0) + wifi
    # Ethernet with an L2 header rowprobe walks: 802.1ah PBB, VN-Tag, E-Tag, Cisco FabricPath
    eth = mac_bytes(dmac) + mac_bytes(smac)
    if kind == "pbb":
        return (eth + struct.pack("!HHHI", ETH_QINQ, 10, 0x88E7, 0x00012345) + mac_bytes(dmac) + mac_bytes(smac) +
                struct.pack("!H", etype))
    if kind == "vntag":
        return eth + struct.pack("!HIH", 0x8926, 0x80010002, etype)
    if kind == "etag":
        return eth + struct.pack("!HHIH", 0x893F, 0, 0x00050000, etype)
    if kind == "fabricpath":
        return (mac_bytes("02:fa:b0:00:00:01") + mac_bytes("02:fa:b0:00:00:02") + struct.pack("!HH", 0x8903, 0x0041)
                + eth + struct.pack("!H", etype))
    raise ValueError(kind)


class LinkEncap:
    vlan = 0

    def __init__(self, kind):
        self.kind = kind

    def frame(self, dmac, smac, ipver, ip):
        return l2_header(self.kind, dmac, smac, ipver) + ip


# kind -> (pcap LINKTYPE, do the flow's MACs come from the frame?)
LINK_KINDS = {"sll2": (276, False), "ppp": (9, False), "ppp-hdlc": (50, False), "chdlc": (104, False),
              "loop": (108, False), "ieee80211": (105, True), "radiotap": (127, True), "pbb": (1, True),
              "vntag": (1, True), "etag": (1, True), "fabricpath": (1, True)}


def scenario_link(kind):
    linktype, macs = LINK_KINDS[kind]
    cap = Capture("link-" + kind, linktype=linktype)
    rng = Rng(0x6C696E6B ^ linktype)
    client, server = "10.99.0.7", "10.99.0.80"
    s = Session(cap, "link-" + kind, client, server, 6, 42000 + linktype, 80, encap=LinkEncap(kind), cttl=64, sttl=63,
                cmac="02:00:00:00:99:07", smac="02:00:00:00:99:80", rng=rng)
    t = 1_700_200_000 * NS
    u = s.handshake(t, ms(5))
    s.tcp(u + ms(1), True, PSH | ACK, rng.bytes(64))
    s.tcp(u + ms(6), False, PSH | ACK, rng.bytes(200))
    s.close(u + ms(10), ms(5))
    if not macs:  # the link carries no (or only the sender's) MACs: the flow's MACs are zero
        for r in cap.records:
            r[4].smac = r[4].dmac = "00:00:00:00:00:00"
    return cap


# ---------------------------------------------------------------------------------------------


SCENARIOS = {"mixed": scenario_mixed, "timeouts": scenario_timeouts, "malformed": scenario_malformed,
             "demo": scenario_demo, "tunnels": scenario_tunnels}
SCENARIOS.update({"link-" + k: (lambda k=k: scenario_link(k)) for k in LINK_KINDS})


def build(name):
    cap = SCENARIOS[name]()
    flows = reference_flows(cap)
    for src, dst in cap.optional_pairs:
        m = Meta(ipver=ipaddress.ip_address(src).version, proto=0, src=src, dst=dst, sport=0, dport=0,
                 smac="", dmac="", label="ambiguous-malformed", optional=True)
        f = Flow(m, 0, len(flows))
        flows.append(f)
    return cap.pcap_bytes(), truth_csv(cap, flows).encode()


def write_if_changed(path, data):
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except FileNotFoundError:
        pass
    with open(path, "wb") as f:
        f.write(data)
    return True


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output directory (created if missing)")
    ap.add_argument("scenarios", nargs="*", help=f"any of {', '.join(SCENARIOS)} (default: all)")
    args = ap.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenario {unknown[0]!r}; choose from {', '.join(SCENARIOS)}")
    os.makedirs(args.out, exist_ok=True)
    for name in args.scenarios or list(SCENARIOS):
        pcap, truth = build(name)
        for suffix, data in ((".pcap", pcap), (".truth.csv", truth)):
            path = os.path.join(args.out, name + suffix)
            changed = write_if_changed(path, data)
            print(f"{path}: {len(data)} bytes{'' if changed else ' (unchanged)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
