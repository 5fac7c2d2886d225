#!/usr/bin/env python3
"""Seeds of ndpi_record_fuzz: short conversations (each packet a 2-byte big-endian length and an
IPv4 packet) that nDPI 4.2 labels: HTTP with a user agent, DNS, SSH banners, a DHCP request,
a BitTorrent handshake and a second connection between its ports that nDPI labels from its
BitTorrent cache, ending in segments whose TCP header is cut (the fuzz target's module lives for
the whole run, so the first seed fills the cache the second one hits). Run from this folder: ./make_seeds_ndpi.py"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ndpi_record_fuzz")


def ipv4(src, dst, proto, l4):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0, 64, proto, 0,
                      bytes(src), bytes(dst))
    return hdr + l4


def tcp(src, dst, sport, dport, seq, ack, flags, payload=b""):
    l4 = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 0x50, flags, 65535, 0, 0) + payload
    return ipv4(src, dst, 6, l4)


def udp(src, dst, sport, dport, payload):
    return ipv4(src, dst, 17, struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload)


def seed(name, packets):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "wb") as f:
        for p in packets:
            f.write(struct.pack("!H", len(p)) + p)


C, S = (192, 168, 1, 2), (192, 168, 1, 1)
req = b"GET / HTTP/1.1\r\nHost: www.example.org\r\nUser-Agent: seed/1.0\r\n\r\n"
seed("http", [tcp(C, S, 40000, 80, 1, 0, 0x02), tcp(S, C, 80, 40000, 9, 2, 0x12),
              tcp(C, S, 40000, 80, 2, 10, 0x10), tcp(C, S, 40000, 80, 2, 10, 0x18, req),
              tcp(S, C, 80, 40000, 10, 2 + len(req), 0x18, b"HTTP/1.1 200 OK\r\n\r\n")])
query = struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\x03www\x07example\x03org\x00" + \
    struct.pack("!HH", 1, 1)
seed("dns", [udp(C, S, 5353, 53, query)])
seed("ssh", [tcp(C, S, 40001, 22, 1, 0, 0x02), tcp(S, C, 22, 40001, 9, 2, 0x12),
             tcp(S, C, 22, 40001, 10, 2, 0x18, b"SSH-2.0-OpenSSH_8.9\r\n"),
             tcp(C, S, 40001, 22, 2, 31, 0x18, b"SSH-2.0-OpenSSH_7.4\r\n")])
dhcp = bytes([1, 1, 6, 0]) + b"\x00" * 232 + b"\x63\x82\x53\x63" + bytes([53, 1, 3]) + \
    bytes([55, 4, 1, 3, 6, 15]) + bytes([60, 8]) + b"MSFT 5.0" + bytes([255])
seed("dhcp", [udp((0, 0, 0, 0), (255, 255, 255, 255), 68, 67, dhcp)])
handshake = b"\x13BitTorrent protocol" + b"\x00" * 8
seed("bittorrent", [tcp(C, S, 40002, 6881, 1, 0, 0x02), tcp(S, C, 6881, 40002, 1, 2, 0x12),
                    tcp(C, S, 40002, 6881, 2, 2, 0x18, handshake)])
again = [tcp(C, S, 40002, 6881, 99, 0, 0x02), tcp(S, C, 6881, 40002, 0, 100, 0x12)]
again += [tcp(C, S, 40002, 6881, 100 + 8 * i, 1, 0x18, b"\x01\x02\x03\x04zzzz") for i in range(9)]
cut = bytearray(tcp(C, S, 40002, 6881, 172, 1, 0x18))
cut[32] = 0xF0  # a 60-byte TCP header in 20 bytes
again += [bytes(cut)] * 3
seed("bittorrent-again", again)
