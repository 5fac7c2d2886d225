#!/usr/bin/env python3
"""Replicates the UDP/TCP flows of a small capture N times as distinct flows, for benchmarks of
per-packet plugin costs on protocol samples (e.g. nDPI's QUIC captures): copy k shifts every
port that is not 53/80/443/853 by k (mod 64512, above 1024), zeroes the UDP checksum and moves
the copy's timestamps after the previous copy's. Ethernet + IPv4/IPv6 (no extension headers),
classic pcap only; other packets are copied unchanged.

  scripts/replicate-flows.py IN.pcap OUT.pcap N
"""
import struct
import sys

WELL_KNOWN = {53, 80, 443, 853}


def main():
    src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(src, "rb").read()
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    unit = 1_000_000_000 if nano else 1_000_000
    recs, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(endian + "IIII", data[off:off + 16])
        recs.append((sec * unit + frac, orig, bytearray(data[off + 16:off + 16 + incl])))
        off += 16 + incl
    if not recs:
        sys.exit("no packets")
    span = recs[-1][0] - recs[0][0] + unit
    with open(dst, "wb") as out:
        out.write(data[:24])
        for k in range(n):
            for t, orig, pkt in recs:
                p = bytearray(pkt)
                l4 = proto = None
                if len(p) >= 34 and p[12:14] == b"\x08\x00":
                    l4, proto = 14 + (p[14] & 15) * 4, p[23]
                elif len(p) >= 54 and p[12:14] == b"\x86\xdd":
                    l4, proto = 54, p[20]
                if l4 is not None and proto in (6, 17) and len(p) >= l4 + 8:
                    for at in (l4, l4 + 2):
                        port = struct.unpack(">H", p[at:at + 2])[0]
                        if port not in WELL_KNOWN:
                            port = 1025 + (port - 1025 + k) % 64510 if port > 1024 else port
                            p[at:at + 2] = struct.pack(">H", port)
                    if proto == 17:
                        p[l4 + 6:l4 + 8] = b"\x00\x00"
                ts = t + k * span
                out.write(struct.pack(endian + "IIII", ts // unit, ts % unit, len(p), orig))
                out.write(p)


if __name__ == "__main__":
    main()
