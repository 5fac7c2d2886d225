#!/usr/bin/env python3
"""Writes the seed corpora of the process-parser fuzz targets (tls_fuzz, http_fuzz, dns_fuzz,
ntp_fuzz, mpls_fuzz, rtsp_fuzz)
into tests/fuzz/corpus/<target>/. The seeds are hand-built, valid messages, so the fuzzer starts
deep inside each parser. Run from anywhere: python3 tests/fuzz/corpus/make_seeds.py"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def u16(v):
    return struct.pack(">H", v)


# ---- TLS ----------------------------------------------------------------------------------------
def ext(t, data):
    return u16(t) + u16(len(data)) + data


def hello(kind, ciphers, exts, version=0x0303):
    body = u16(version) + b"\x11" * 32 + b"\x04" + b"\x22" * 4
    if kind == 1:
        body += u16(2 * len(ciphers)) + b"".join(u16(c) for c in ciphers) + b"\x01\x00"
    else:
        body += u16(ciphers[0]) + b"\x00"
    block = b"".join(exts)
    body += u16(len(block)) + block
    hs = bytes([kind]) + struct.pack(">I", len(body))[1:] + body
    return b"\x16\x03\x01" + u16(len(hs)) + hs


sni = lambda host: u16(len(host) + 3) + b"\x00" + u16(len(host)) + host
alpn_list = lambda *ps: (lambda l: u16(len(l)) + l)(b"".join(bytes([len(p)]) + p for p in ps))
chrome = hello(1, [0x4a4a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0x009c, 0x002f], [
    ext(0x7a7a, b""), ext(0, sni(b"www.example.com")), ext(23, b""), ext(65281, b"\x00"),
    ext(10, u16(8) + u16(0x6a6a) + u16(29) + u16(23) + u16(24)), ext(11, b"\x01\x00"),
    ext(16, alpn_list(b"h2", b"http/1.1")),
    ext(13, u16(8) + u16(0x0403) + u16(0x0804) + u16(0x0401) + u16(0x0503)),
    ext(43, b"\x06" + u16(0x2a2a) + u16(0x0304) + u16(0x0303)), ext(0x2a2a, b"\x00")])
write("tls_fuzz", "client_hello_chrome", chrome)
write("tls_fuzz", "client_hello_tls12_noext", hello(1, [0x002f, 0x0035], []))
write("tls_fuzz", "server_hello_tls13", hello(2, [0x1301], [
    ext(43, u16(0x0304)), ext(16, alpn_list(b"h2")), ext(51, b"\x00\x1d" + u16(32) + b"\x01" * 32)]))

# ---- QUIC (quic_fuzz: mode byte 1 = plaintext frames protected by the fuzzer) -----------------
def varint(v):
    return bytes([v]) if v < 64 else u16(0x4000 | v)


def crypto(off, data):
    return b"\x06" + u16(0x4000 | off) + u16(0x4000 | len(data)) + data


tp = varint(0x3129) + varint(12) + b"Chrome/120.0" + varint(4) + varint(4) + struct.pack(">I", 0x80100000)
quic_ch = hello(1, [0x1301, 0x1302, 0x1303], [
    ext(0, sni(b"www.example.com")), ext(16, alpn_list(b"h3")), ext(57, tp),
    ext(43, b"\x02" + u16(0x0304)), ext(10, u16(2) + u16(29))])[5:]  # no record header
half = len(quic_ch) // 2
chunk = lambda frames: u16(len(frames)) + frames
write("quic_fuzz", "client_hello_one_packet", b"\x01\x00" + chunk(crypto(0, quic_ch)))
write("quic_fuzz", "client_hello_split_reordered", b"\x01\x02" + chunk(crypto(half, quic_ch[half:]))
      + chunk(b"\x01\x00\x00" + crypto(0, quic_ch[:half])))
write("quic_fuzz", "client_hello_t051", b"\x01\x03" + chunk(b"\x08" + crypto(0, quic_ch)[1:]))
write("quic_fuzz", "ack_ping_padding", b"\x01\x01" + chunk(b"\x02\x00\x00\x00\x00\x01\x00\x00"))
write("quic_fuzz", "version_negotiation", b"\x00\x80\x00\x00\x00\x00\x04abcd\x00\x00\x00\x00\x01")
write("quic_fuzz", "retry", b"\x00\xf0\x00\x00\x00\x01\x04abcd\x08ABCDEFGH" + b"t" * 10 + b"\x00" * 16)


# Google QUIC: a CHLO (tag count, tag table of end offsets, values), in clear in a Q043 public
# header packet or a Q046 long header packet (mode 0: the datagram as it is), or protected as a
# Q050 Initial (version index 5); T050 (index 6) carries the TLS ClientHello.
def chlo(tags):
    table, values, end = b"", b"", 0
    for tag, value in tags:
        end += len(value)
        table += tag + struct.pack("<I", end)
        values += value
    return b"CHLO" + struct.pack("<H", len(tags)) + b"\x00\x00" + table + values


gquic_chlo = chlo([(b"SNI\x00", b"www.example.org"), (b"VER\x00", b"Q043"),
                   (b"UAID", b"Chrome/70.0.3538.110 Linux x86_64")])
cid = b"\x8a\x2b\x5b\xa4\x2c\x01\x02\x03"
stream1 = b"\xa0\x01" + u16(len(gquic_chlo)) + gquic_chlo
write("quic_fuzz", "gquic_q043_chlo", b"\x00" + b"\x0d" + cid + b"Q043\x01" + b"\x5a" * 12 + stream1)
write("quic_fuzz", "gquic_q046_chlo", b"\x00" + b"\xc3Q046\x50" + cid + b"\x00\x00\x00\x01"
      + b"\x5a" * 12 + b"\xa4\x01" + u16(1024) + u16(len(gquic_chlo)) + gquic_chlo)
write("quic_fuzz", "gquic_q030_chlo_le", b"\x00" + b"\x0d" + cid + b"Q030\x01" + b"\x5a" * 12
      + b"\x00" + b"\xa0\x01" + struct.pack("<H", len(gquic_chlo)) + gquic_chlo)
write("quic_fuzz", "gquic_q050_chlo", b"\x01\x05" + chunk(b"\x08" + crypto(0, gquic_chlo)[1:]))
write("quic_fuzz", "client_hello_t050", b"\x01\x06" + chunk(b"\x08" + crypto(0, quic_ch)[1:]))
write("quic_fuzz", "client_hello_forced_vn", b"\x01\x07" + chunk(crypto(0, quic_ch)))

# ---- HTTP ---------------------------------------------------------------------------------------
write("http_fuzz", "request_get", b"GET /index.html HTTP/1.1\r\nHost: www.example.com\r\n"
      b"User-Agent: curl/8.0\r\nReferer: http://example.com/\r\nAccept: */*\r\n\r\n")
write("http_fuzz", "request_propfind", b"PROPFIND /dav/ HTTP/1.1\r\nHost: dav\r\n\r\n")
write("http_fuzz", "response_cookies", b"HTTP/1.1 200 OK\r\nServer: nginx\r\n"
      b"Content-Type: text/html\r\nSet-Cookie: a=1; Path=/\r\nSet-Cookie: b=2\r\n\r\nbody")


# ---- DNS ----------------------------------------------------------------------------------------
def name(n):
    return b"".join(bytes([len(l)]) + l for l in n.split(b".") if l) + b"\x00"


def rr(owner, t, ttl, rdata):
    return owner + u16(t) + u16(1) + struct.pack(">I", ttl) + u16(len(rdata)) + rdata


def msg(flags, questions, answers, additional=()):
    h = u16(0x1234) + u16(flags) + u16(len(questions)) + u16(len(answers)) + u16(0) + u16(len(additional))
    return h + b"".join(questions) + b"".join(answers) + b"".join(additional)


q = name(b"www.example.com") + u16(1) + u16(1)
ptr = b"\xc0\x0c"
opt = b"\x00" + u16(41) + u16(4096) + struct.pack(">I", 0x8000) + u16(0)
udp = lambda m: b"\x00" + m  # first byte: framing (even = UDP)
tcp = lambda m: b"\x01" + u16(len(m)) + m
write("dns_fuzz", "query_edns", udp(msg(0x0100, [q], [], [opt])))
write("dns_fuzz", "response_a_cname", udp(msg(0x8180, [q], [
    rr(ptr, 5, 300, name(b"edge.example.net")), rr(ptr, 1, 60, bytes([192, 0, 2, 1]))])))
write("dns_fuzz", "response_ptr_tcp", tcp(msg(0x8180, [name(b"1.2.0.192.in-addr.arpa") + u16(12) + u16(1)], [
    rr(ptr, 12, 3600, name(b"host.example.com"))])))
write("dns_fuzz", "response_mx_txt_soa", udp(msg(0x8180, [q], [
    rr(ptr, 15, 300, u16(10) + name(b"mail.example.com")),
    rr(ptr, 16, 300, b"\x0bv=spf1 -all"),
    rr(ptr, 6, 300, name(b"ns1.example.com") + name(b"admin.example.com") + b"\x00" * 20)])))
write("dns_fuzz", "name_pointer_loop", udp(msg(0x0100, [b"\xc0\x0c" + u16(1) + u16(1)], [])))


# ---- NTP, MPLS label stack, RTSP ---------------------------------------------------------------
def ntp(first, stratum, poll, refid, stamps):
    return (bytes([first, stratum, poll, 0xEC]) + struct.pack(">II", 0x123, 0x456) + refid
            + b"".join(struct.pack(">Q", s) for s in stamps))


write("ntp_fuzz", "server_v4", ntp(0x24, 2, 6, bytes([195, 113, 144, 238]),
                                   [0xDAB52BE80500000A, 0, 0xDAB52BE8FFFFFFFF, 0xDAB52BE81F27D8E1]))
write("ntp_fuzz", "client_kiss_init", ntp(0xE3, 0, 6, b"INIT", [0, 0, 0, 0xDAB51FE51F27D8E1]))
eth = lambda t: b"\x00" * 12 + u16(t)
label = lambda l, s, ttl: struct.pack(">I", l << 12 | s << 8 | ttl)
write("mpls_fuzz", "ethernet_two_labels", eth(0x8847) + label(1000, 0, 64) + label(17, 1, 63))
write("mpls_fuzz", "vlan_then_label", eth(0x8100) + u16(42) + u16(0x8847) + label(16, 1, 1))
write("mpls_fuzz", "sll_label", b"\x00" * 14 + u16(0x8847) + label(20, 1, 5))
write("rtsp_fuzz", "describe", b"DESCRIBE rtsp://example.com/media RTSP/1.0\r\nCSeq: 2\r\n"
      b"User-Agent: LibVLC/3.0\r\nAccept: application/sdp\r\n\r\n")
write("rtsp_fuzz", "reply", b"RTSP/1.0 200 OK\r\nCSeq: 2\r\nContent-Type: application/sdp\r\n"
      b"Server: GStreamer RTSP server\r\n\r\nv=0\r\n")
write("rtsp_fuzz", "setup_lf", b"SETUP rtsp://h/s/track1 RTSP/1.0\nTransport: RTP/AVP;unicast\n\n")
