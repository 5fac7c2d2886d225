#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets of the dnssd, mqtt, netbios, ovpn, sip, smtp,
ssdp and wg parsers into tests/fuzz/corpus/<target>/: hand-built, valid messages (nothing taken
from third-party captures), so the fuzzer starts deep inside each parser.
Run from anywhere: python3 tests/fuzz/corpus/make_seeds_plugins.py"""
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


# ---- wg: handshake initiation, response, cookie reply, transport data -------------------------
def wg(t, size, a, b=0):
    m = bytes([t, 0, 0, 0]) + struct.pack("<I", a) + struct.pack("<I", b)
    return m + b"\x5a" * (size - len(m))


write("wg_fuzz", "initiation", wg(1, 148, 0x11223344))
write("wg_fuzz", "response", wg(2, 92, 0x55667788, 0x11223344))
write("wg_fuzz", "cookie_reply", wg(3, 64, 0x11223344))
write("wg_fuzz", "transport", wg(4, 96, 0x55667788))

# ---- ovpn: [len][bits] packets: UDP handshake to data -------------------------------------------
def ovpn_pkt(opcode, size, from_a, extra=b""):
    body = bytes([opcode << 3 | 1]) + extra
    body = body + b"\x33" * (size - len(body))
    return bytes([len(body), (1 if from_a else 0) | (2 << 2)]) + body


hello_c = b"\x33" * 13 + b"\x16\x03\x01\x00\x50\x01"
hello_s = b"\x33" * 25 + b"\x16\x03\x03\x00\x50\x02"
write("ovpn_fuzz", "udp_handshake",
      ovpn_pkt(7, 40, True) + ovpn_pkt(8, 40, False) + ovpn_pkt(5, 20, True)
      + ovpn_pkt(4, 100, True, hello_c) + ovpn_pkt(4, 120, False, hello_s)
      + ovpn_pkt(5, 20, True) + ovpn_pkt(9, 250, True) * 4)

# ---- ssdp: first byte = IPv6 flag, messages split at 0xFF ----------------------------------------
notify = (b"NOTIFY * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\n"
          b"LOCATION: http://192.168.1.20:2869/desc.xml\r\nNT: urn:schemas-upnp-org:device:MediaServer:1\r\n"
          b"NTS: ssdp:alive\r\nSERVER: Linux/5.10 UPnP/1.0 Test/1.0\r\n\r\n")
search = (b"M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nMAN: \"ssdp:discover\"\r\nMX: 1\r\n"
          b"ST: urn:dial-multiscreen-org:service:dial:1\r\nUSER-AGENT: Test Browser/1.0 Linux\r\n\r\n")
write("ssdp_fuzz", "notify_search_v4", b"\x00" + notify + b"\xff" + search)
write("ssdp_fuzz", "notify_v6", b"\x01" + notify.replace(b"192.168.1.20", b"[fe80::1]"))

# ---- netbios: NBNS name query --------------------------------------------------------------------
def nb_name(name16):
    out = bytes([32])
    for c in name16:
        out += bytes([ord("A") + (c >> 4), ord("A") + (c & 15)])
    return out + b"\x00"


write("netbios_fuzz", "query", u16(0x1234) + u16(0x0110) + u16(1) + u16(0) * 3
      + nb_name(b"WORKSTATION01  \x00") + u16(0x20) + u16(1))
write("netbios_fuzz", "msbrowse", u16(0x1) + u16(0x0110) + u16(1) + u16(0) * 3
      + nb_name(b"\x01\x02__MSBROWSE__\x02\x01") + u16(0x20) + u16(1))

# ---- smtp: commands and replies alternate, split at 0xFF ----------------------------------------
dialog = [b"EHLO client.example\r\n", b"220 mx.example ESMTP\r\n", b"MAIL FROM: <a@client.example>\r\n",
          b"250-mx.example\r\n250 SIZE 1000\r\n", b"RCPT TO:<b@mx.example>\r\n", b"250 ok\r\n",
          b"DATA\r\n", b"354 go ahead\r\n", b".\r\n", b"554 spam rejected\r\n", b"QUIT\r\n", b"221 bye\r\n"]
write("smtp_fuzz", "session", b"\xff".join(dialog))

# ---- mqtt: first byte = topic count ----------------------------------------------------------------
connect = b"\x10\x11" + u16(4) + b"MQTT" + b"\x04\xc2" + u16(60) + u16(5) + b"abcde"
connack = b"\x20\x02\x01\x00"
publish = lambda t, f=0: bytes([0x30 | f, 2 + len(t) + 2]) + u16(len(t)) + t + b"hi"
write("mqtt_fuzz", "connect", b"\x02" + connect)
write("mqtt_fuzz", "session", b"\x03" + connack + publish(b"a/b", 2) + publish(b"c") + b"\xe0\x00")

# ---- sip ------------------------------------------------------------------------------------------
write("sip_fuzz", "invite", b"INVITE sip:100@192.0.2.1 SIP/2.0\r\n"
      b"Via: SIP/2.0/UDP 192.0.2.9:5060;branch=z9hG4bK-1;rport\r\nMax-Forwards: 70\r\n"
      b"From: \"100\" <sip:100@192.0.2.9>;tag=3e8a\r\nTo: \"100\" <sip:100@192.0.2.1>\r\n"
      b"Call-ID: 5157460692771271\r\nCSeq: 1 INVITE\r\nUser-Agent: test-agent\r\nContent-Length: 0\r\n\r\n")
write("sip_fuzz", "response_compact", b"SIP/2.0 401 Unauthorized\r\nv: SIP/2.0/UDP 10.0.0.1:5060;branch=a\r\n"
      b"v: SIP/2.0/UDP 10.0.0.2:5060;branch=b\r\nf: <sips:alice@example.com>\r\nt: sip:bob@example.com;tag=x\r\n"
      b"i: abc@host\r\nCSeq: 2 REGISTER\r\n\r\n")

# ---- dnssd: first byte = framing/txt mode, messages split at FF FE ------------------------------
def name(n):
    out = b""
    for label in n.split(b"."):
        out += bytes([len(label)]) + label
    return out + b"\x00"


def rr(owner, t, rdata):
    return owner + u16(t) + u16(0x8001) + struct.pack(">I", 120) + u16(len(rdata)) + rdata


inst = name(b"Office Printer._ipp._tcp.local")
srv = u16(0) + u16(0) + u16(631) + name(b"printer.local")
txt = b"\x09txtvers=1\x08ty=Laser"
hinfo = b"\x03ARM\x05LINUX"
resp = u16(0) + u16(0x8400) + u16(0) + u16(3) + u16(0) + u16(1) + \
    rr(inst, 33, srv) + rr(b"\xc0\x0c", 16, txt) + rr(name(b"x.in-addr.arpa"), 12, b"\xc0\x0c") + \
    rr(name(b"printer.local"), 13, hinfo)
query = u16(0) + u16(0) + u16(2) + u16(0) + u16(1) + u16(0) + \
    name(b"_ipp._tcp.local") + u16(12) + u16(1) + b"\xc0\x0c" + u16(12) + u16(1) + rr(inst, 33, srv)
write("dnssd_fuzz", "query_probe_response_txt_all", b"\x02" + query + b"\xff\xfe" + resp)
write("dnssd_fuzz", "response_whitelist", b"\x04" + resp)
write("dnssd_fuzz", "response_tcp", b"\x01" + u16(len(resp)) + resp)
