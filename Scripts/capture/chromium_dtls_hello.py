"""Captures the first DTLS flight (the ClientHello datagrams) of a real
headless Chromium into Tests/DTLSTests/Fixtures/.

We play a minimal WebRTC answerer on one UDP socket on 127.0.0.1: ICE-lite
(RFC 8445 section 2.5: we only answer Binding requests) and DTLS passive
(`a=setup:passive`, RFC 5763 section 5), so Chromium is the ICE controlling
agent and the DTLS client. Once our Binding responses make the pair
writable, Chromium sends its ClientHello; we record every datagram whose
first byte is 20..63 (DTLS, RFC 7983), never answer it, and stop at the
first retransmission or after a quiet period. Everything is bounded in time
and talks only to 127.0.0.1.

    .venv/bin/python Scripts/capture/chromium_dtls_hello.py --out DIR
"""
import argparse
import asyncio
import datetime
import hashlib
import json
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import websockets
from aioice import stun
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from cdp import (chromium_version, evaluate, free_tcp_port, open_page, page_websocket, serve_blank_page, start_chromium,
                 stop_chromium)

WHO = "chromium_dtls_hello"
HOST = "127.0.0.1"
# The whole run, Chromium's start included, must end well within 60 s.
DEADLINE_S = 45.0
# After the last new DTLS datagram, how long to wait for more of the flight.
QUIET_S = 2.0

OFFER_JS = """
(async () => {
  const pc = new RTCPeerConnection({iceServers: []});
  window.capturePC = pc;
  pc.addTransceiver('audio', {direction: 'recvonly'});
  await pc.setLocalDescription(await pc.createOffer());
  return pc.localDescription.sdp;
})()
"""


def log(message: str) -> None:
    print(f"{WHO}: {message}", file=sys.stderr, flush=True)


def certificate_fingerprint() -> str:
    """A fresh self-signed ECDSA P-256 certificate's SHA-256 fingerprint as
    SDP writes it (RFC 8122 section 5). Its key is never used: we never
    answer the ClientHello."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "capture")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder()
                   .subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .sign(key, hashes.SHA256()))
    digest = hashlib.sha256(certificate.public_bytes(serialization.Encoding.DER)).hexdigest().upper()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def sdp_value(sdp: str, prefix: str) -> str:
    for line in sdp.splitlines():
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    raise SystemExit(f"{WHO}: offer has no {prefix!r} line")


def answer_sdp(offer: str, port: int, ufrag: str, pwd: str, fingerprint: str) -> str:
    """An ICE-lite, DTLS-passive answer for the offer's one audio section,
    reusing its mid and first codec."""
    mid = sdp_value(offer, "a=mid:")
    m_line = sdp_value(offer, "m=audio ").split()
    payload_type = m_line[2]
    rtpmap = sdp_value(offer, f"a=rtpmap:{payload_type} ")
    lines = [
        "v=0",
        f"o=- {secrets.randbelow(1 << 62)} 1 IN IP4 {HOST}",
        "s=-",
        "t=0 0",
        f"a=group:BUNDLE {mid}",
        "a=ice-lite",
        f"m=audio {port} UDP/TLS/RTP/SAVPF {payload_type}",
        f"c=IN IP4 {HOST}",
        f"a=ice-ufrag:{ufrag}",
        f"a=ice-pwd:{pwd}",
        f"a=fingerprint:sha-256 {fingerprint}",
        "a=setup:passive",
        f"a=mid:{mid}",
        "a=sendonly",
        "a=rtcp-mux",
        f"a=rtpmap:{payload_type} {rtpmap}",
        f"a=candidate:1 1 udp 2130706431 {HOST} {port} typ host",
        "a=end-of-candidates",
    ]
    return "\r\n".join(lines) + "\r\n"


def handshake_fragments(datagram: bytes, with_length: bool = False):
    """(message_seq, fragment_offset[, fragment_length]) of each plaintext
    handshake record in a datagram (RFC 6347 sections 4.1 and 4.2.2),
    bounds-checked."""
    at = 0
    while at + 13 <= len(datagram):
        content_type = datagram[at]
        epoch = int.from_bytes(datagram[at + 3:at + 5], "big")
        length = int.from_bytes(datagram[at + 11:at + 13], "big")
        body = datagram[at + 13:at + 13 + length]
        if content_type == 22 and epoch == 0 and len(body) >= 12:
            fragment = (int.from_bytes(body[4:6], "big"), int.from_bytes(body[6:9], "big"))
            yield fragment + (int.from_bytes(body[9:12], "big"),) if with_length else fragment
        at += 13 + length


class Answerer(asyncio.DatagramProtocol):
    """Answers STUN Binding requests (RFC 8489 section 6.3.1, RFC 8445
    section 7.3) and records DTLS datagrams until the first flight is in."""

    def __init__(self, local_ufrag: str, local_pwd: str):
        self.local_ufrag = local_ufrag
        self.local_pwd = local_pwd.encode()
        self.remote_ufrag = None
        self.transport = None
        self.dtls = []
        self.fragments_seen = set()
        self.last_dtls_at = None
        self.retransmitted = False
        self.binding_requests = 0
        self.done = asyncio.Event()

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data: bytes, addr):
        if addr[0] != HOST or not data:
            return
        if data[0] < 4:
            self.stun_received(data, addr)
        elif 20 <= data[0] <= 63 and not self.done.is_set():
            self.dtls_received(data)

    def stun_received(self, data: bytes, addr):
        try:
            request = stun.parse_message(data)
        except ValueError:
            return
        if request.message_method != stun.Method.BINDING or request.message_class != stun.Class.REQUEST:
            return
        username = request.attributes.get("USERNAME", "")
        if self.remote_ufrag is None or username != f"{self.local_ufrag}:{self.remote_ufrag}":
            return
        if not request.check_message_integrity(self.local_pwd):
            log("Binding request with bad MESSAGE-INTEGRITY ignored")
            return
        response = stun.Message(message_method=stun.Method.BINDING,
                                message_class=stun.Class.RESPONSE,
                                transaction_id=request.transaction_id)
        response.attributes["XOR-MAPPED-ADDRESS"] = addr
        response.add_message_integrity(self.local_pwd)
        response.add_fingerprint()
        self.transport.sendto(bytes(response), addr)
        self.binding_requests += 1

    def dtls_received(self, data: bytes):
        fragments = set(handshake_fragments(data))
        if fragments and fragments <= self.fragments_seen:
            # Every fragment here came before: a retransmission (RFC 6347
            # section 4.2.4), so the first flight is complete.
            self.retransmitted = True
            self.done.set()
            return
        self.fragments_seen |= fragments
        self.dtls.append(data)
        self.last_dtls_at = time.monotonic()


async def capture(devtools_port: int) -> tuple[list[bytes], bool, str]:
    loop = asyncio.get_running_loop()
    local_ufrag = secrets.token_hex(4)
    local_pwd = secrets.token_hex(12)  # 24 characters, ICE wants >= 22
    answerer = Answerer(local_ufrag, local_pwd)
    transport, _ = await loop.create_datagram_endpoint(lambda: answerer, local_addr=(HOST, 0))
    udp_port = transport.get_extra_info("sockname")[1]
    try:
        url = await asyncio.to_thread(page_websocket, devtools_port, WHO, 50)
        page = serve_blank_page()
        async with websockets.connect(url, max_size=None) as ws:
            await open_page(ws, page, who=WHO)
            offer = await evaluate(ws, 1, OFFER_JS, WHO)
            answerer.remote_ufrag = sdp_value(offer, "a=ice-ufrag:")
            answer = answer_sdp(offer, udp_port, local_ufrag, local_pwd, certificate_fingerprint())
            await evaluate(ws, 2, "capturePC.setRemoteDescription({type: 'answer', sdp: %s})"
                           % json.dumps(answer), WHO)
            log(f"answer set; waiting for DTLS on udp {HOST}:{udp_port}")
            while not answerer.done.is_set():
                quiet = answerer.last_dtls_at is not None and time.monotonic() - answerer.last_dtls_at >= QUIET_S
                if quiet:
                    answerer.done.set()
                    break
                try:
                    await asyncio.wait_for(answerer.done.wait(), 0.1)
                except asyncio.TimeoutError:
                    pass
            state = await evaluate(ws, 3, "capturePC.iceConnectionState", WHO)
            log(f"{answerer.binding_requests} Binding requests answered; ICE {state}")
            await evaluate(ws, 4, "capturePC.close()", WHO)
    finally:
        transport.close()
    return answerer.dtls, answerer.retransmitted, offer


def annotate(first: bytes) -> str:
    """Field-by-field notes on the first record and handshake headers."""
    if len(first) < 25:
        return "(first datagram shorter than a record and handshake header)\n"

    def hexof(a: int, b: int) -> str:
        return first[a:b].hex(" ")

    def num(a: int, b: int) -> int:
        return int.from_bytes(first[a:b], "big")

    rows = [
        ("0", hexof(0, 1), "content type", f"{first[0]} (handshake)" if first[0] == 22 else str(first[0])),
        ("1-2", hexof(1, 3), "version", f"0x{num(1, 3):04X}"),
        ("3-4", hexof(3, 5), "epoch", str(num(3, 5))),
        ("5-10", hexof(5, 11), "sequence number", str(num(5, 11))),
        ("11-12", hexof(11, 13), "record length", str(num(11, 13))),
        ("13", hexof(13, 14), "handshake type", f"{first[13]} (ClientHello)" if first[13] == 1 else str(first[13])),
        ("14-16", hexof(14, 17), "handshake length", str(num(14, 17))),
        ("17-18", hexof(17, 19), "message_seq", str(num(17, 19))),
        ("19-21", hexof(19, 22), "fragment_offset", str(num(19, 22))),
        ("22-24", hexof(22, 25), "fragment_length", str(num(22, 25))),
    ]
    out = ["| Offset | Bytes | Field | Value |", "|--------|-------|-------|-------|"]
    out += [f"| {a} | `{b}` | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(out) + "\n"


def write_fixtures(out: pathlib.Path, datagrams: list[bytes], retransmitted: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("chromium-client-hello-*.bin"):
        old.unlink()
    sizes = []
    rows = []
    for i, datagram in enumerate(datagrams, start=1):
        (out / f"chromium-client-hello-{i}.bin").write_bytes(datagram)
        sizes.append(len(datagram))
        fragments = ", ".join(f"seq {s}, offset {o}, length {n}"
                              for s, o, n in handshake_fragments(datagram, with_length=True))
        rows.append(f"| chromium-client-hello-{i}.bin | {len(datagram)} | {fragments} |")
    table = "\n".join(rows)
    message_length = (int.from_bytes(datagrams[0][14:17], "big")
                      if datagrams and len(datagrams[0]) >= 17 and datagrams[0][13] == 1 else None)
    ended = "its first retransmission arrived" if retransmitted else f"{QUIET_S:g} s without a new DTLS datagram"
    (out / "README.md").write_text(f"""# DTLS fixtures

Captured from a real browser by `Scripts/capture-dtls-fixture` on
{datetime.date.today().isoformat()}; do not edit by hand (rerun the script instead).

- Browser: {chromium_version()} (Debian, `--headless=new`)
- Setup: one `recvonly` audio transceiver; the script answered as an
  ICE-lite, `a=setup:passive` peer on 127.0.0.1, so Chromium is the DTLS
  client. It answered Chromium's STUN Binding requests and recorded every
  datagram starting with a byte in 20..63 (RFC 7983) until {ended}.
  The ClientHello was never answered.

The datagrams of Chromium's first flight, in the order they arrived:
{len(sizes)} datagrams, {sum(sizes)} bytes in all (UDP payloads), carrying one
ClientHello of {message_length} bytes (handshake body length) in fragments.

| File | Bytes | Handshake fragments (message_seq, fragment_offset, fragment_length) |
|------|-------|------|
{table}

First record and handshake header of `chromium-client-hello-1.bin`
(RFC 6347 sections 4.1 and 4.2.2):

{annotate(datagrams[0]) if datagrams else "(none)"}""")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if shutil.which("chromium") is None:
        raise SystemExit(f"{WHO}: chromium missing; run Scripts/setup")
    devtools_port = free_tcp_port()
    profile = tempfile.mkdtemp(prefix="dtls-hello-")
    chromium = start_chromium(devtools_port, profile)
    try:
        datagrams, retransmitted, _ = await asyncio.wait_for(capture(devtools_port), DEADLINE_S)
    except asyncio.TimeoutError:
        raise SystemExit(f"{WHO}: gave up after {DEADLINE_S:g} s")
    finally:
        stop_chromium(chromium)
        shutil.rmtree(profile, ignore_errors=True)
    if not datagrams:
        raise SystemExit(f"{WHO}: Chromium sent no DTLS datagram")
    write_fixtures(pathlib.Path(args.out), datagrams, retransmitted)
    log(f"{len(datagrams)} datagrams, sizes {[len(d) for d in datagrams]}, "
        f"{sum(len(d) for d in datagrams)} bytes; retransmission seen: {retransmitted}")


asyncio.run(main())
