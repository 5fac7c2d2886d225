#!/usr/bin/env python3
"""Writes the seed corpus of tcpperf_fuzz into tests/fuzz/corpus/tcpperf_fuzz/: hand-built
connections in the target's input format (tcpperf_fuzz.cpp): a handshake with data and ACKs, a
loss with duplicate ACKs and a fast retransmission, a zero-window episode, a wrap at 2^32.
Run from anywhere: python3 tests/fuzz/corpus/make_seeds_tcpperf.py"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OPTIONS = bytes([2, 4, 0x05, 0xB4, 1, 3, 3, 7])  # MSS 1460, NOP, window scale 7
SYN, ACK, PSH, FIN = 0x02, 0x10, 0x08, 0x01


def seg(direction, flags, value, length=0, window=1000, step=1, seq_mode=0, ack_mode=0):
    """seq_mode 0: value is the sequence number; 1: next sequence + signed 16-bit value.
    ack_mode 1: ack = peer's next sequence (value bits 16-23 subtracted)."""
    b0 = direction | seq_mode << 1 | ack_mode << 3
    return struct.pack(">BBIHHh", b0, flags, value, length, window, step)


def write(name, segments):
    d = os.path.join(HERE, "tcpperf_fuzz")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes([len(OPTIONS)]) + OPTIONS + b"".join(segments))


HANDSHAKE = [seg(0, SYN, 100), seg(1, SYN | ACK, 5000, step=300, ack_mode=1),
             seg(0, ACK, 0, step=5, seq_mode=1, ack_mode=1)]

write("request_response", HANDSHAKE + [
    seg(0, PSH | ACK, 0, 200, seq_mode=1, ack_mode=1),
    seg(1, ACK, 0, step=300, seq_mode=1, ack_mode=1),
    seg(1, PSH | ACK, 0, 1400, seq_mode=1, ack_mode=1),
    seg(0, ACK, 0, step=2, seq_mode=1, ack_mode=1),
    seg(0, FIN | ACK, 0, seq_mode=1, ack_mode=1),
    seg(1, FIN | ACK, 0, step=300, seq_mode=1, ack_mode=1)])

write("loss_fast_retransmit", HANDSHAKE + [
    seg(1, PSH | ACK, 0, 1000, seq_mode=1, ack_mode=1),
    seg(1, PSH | ACK, 1000, 1000, seq_mode=1, ack_mode=1),  # a hole of 1000
    seg(0, ACK, 0, step=300, seq_mode=1),  # ACK number: the value 0 (arbitrary)
    seg(0, ACK, 0, seq_mode=1), seg(0, ACK, 0, seq_mode=1),
    seg(1, PSH | ACK, 0xFFFFF830, 1000, seq_mode=1, ack_mode=1)])  # -2000

write("zero_window", HANDSHAKE + [
    seg(1, PSH | ACK, 0, 1000, seq_mode=1, ack_mode=1),
    seg(0, ACK, 0, window=0, step=300, seq_mode=1, ack_mode=1),
    seg(1, PSH | ACK, 0, 1, step=3000, seq_mode=1, ack_mode=1),
    seg(0, ACK, 0, window=0, step=300, seq_mode=1, ack_mode=1),
    seg(0, ACK, 0, window=500, step=10000, seq_mode=1, ack_mode=1)])

write("wrap", [seg(0, SYN, 0xFFFFFF00), seg(1, SYN | ACK, 77, step=300, ack_mode=1)] + [
    seg(0, PSH | ACK, 0, 100, seq_mode=1, ack_mode=1) for _ in range(4)] + [
    seg(1, ACK, 0, step=300, seq_mode=1, ack_mode=1)])
