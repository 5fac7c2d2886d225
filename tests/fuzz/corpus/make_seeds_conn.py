#!/usr/bin/env python3
"""Writes the seed corpus of conn_fuzz into tests/fuzz/corpus/conn_fuzz/: hand-built TCP and
UDP exchanges in conn_fuzz's 16-byte packet format (direction/ports bits, TCP flags, seq, ack,
window, payload length), so the fuzzer starts from Zeek's usual histories.
Run from anywhere: python3 tests/fuzz/corpus/make_seeds_conn.py"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10


def pkt(orig, flags, seq, ack, length, window=65535, server_port=True):
    bits = (1 if orig else 0) | (8 if server_port else 0)
    return struct.pack(">BBIIHI", bits, flags, seq, ack, window, length)


def write(name, proto_byte, packets):
    d = os.path.join(HERE, "conn_fuzz")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes([proto_byte]) + b"".join(packets))


C, S = 1000, 5000
write("sf", 0, [pkt(True, SYN, C, 0, 0), pkt(False, SYN | ACK, S, C + 1, 0),
                pkt(True, ACK, C + 1, S + 1, 0), pkt(True, ACK, C + 1, S + 1, 100),
                pkt(False, ACK, S + 1, C + 101, 200), pkt(True, FIN | ACK, C + 101, S + 201, 0),
                pkt(False, FIN | ACK, S + 201, C + 102, 0), pkt(True, ACK, C + 102, S + 202, 0)])
write("rej", 0, [pkt(True, SYN, C, 0, 0), pkt(False, RST | ACK, 0, C + 1, 0)])
write("s0", 0, [pkt(True, SYN, C, 0, 0), pkt(True, SYN, C, 0, 0)])
write("midstream", 0, [pkt(False, ACK, S, C, 100), pkt(True, ACK, C, S + 100, 0, 0),
                       pkt(False, ACK, S + 300, C, 100)])
write("wrap", 0, [pkt(True, SYN, 0xFFFFFF00, 0, 0), pkt(False, SYN | ACK, S, 0xFFFFFF01, 0),
                  pkt(True, ACK, 0xFFFFFF01, S + 1, 1000), pkt(False, RST, S + 1, 0, 0)])
write("udp", 3, [pkt(True, 0, 0, 0, 40), pkt(False, 0, 0, 0, 80)])
