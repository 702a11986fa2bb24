"""Firefox ESR against swiftlet, for the namespaced interop tests
(Tests/InteropTests/FirefoxNamespaceTests.swift). Run inside the test's
network namespace (`ip netns exec`), with the dev server's HTTP on
127.0.0.1 there and its media on the namespace's veth address: Firefox
pairs no 127.0.0.1 candidate (FACTS.md). Prints one JSON line.

  whip: a Firefox tab publishes its fake camera and microphone over WHIP
        with `bundlePolicy: "max-bundle"` and three simulcast layers (so
        its video section is port 0 + a=bundle-only), and a second Firefox
        tab plays the room over WHEP, also max-bundle; the player's decoded
        width and height are reported.
  room: swiftlet's room page (`/`) in one Firefox tab and one Chromium tab,
        each must decode the other; then the Firefox tab's layer control
        (set-preference) asks for the low layer of the Chromium video and
        then the high one, and the decoded widths are reported.

  .venv/bin/python Scripts/interop/firefox_interop.py whip --base http://127.0.0.1:8080
"""
import argparse
import asyncio
import contextlib
import json
import tempfile
import time
import urllib.request

from chromium_page import open_tab as open_chromium_tab, page_url
from cdp import free_tcp_port, start_chromium, stop_chromium
from firefox_bidi import FirefoxSession, start_firefox, stop_firefox

WHO = "firefox_interop"

# The publisher: WHIP (RFC 9725) by hand from the page, max-bundle, three
# rid layers; resolves to the answer's status once ICE is connected.
WHIP_PUBLISH = """
(async () => {
  const token = (await (await fetch('/dev/token?room=%(room)s&identity=ff-whip')).json()).token;
  const stream = await navigator.mediaDevices.getUserMedia({audio: true, video: {width: 1280, height: 720}});
  const pc = new RTCPeerConnection({iceServers: [], bundlePolicy: 'max-bundle'});
  window.pc = pc;
  pc.addTransceiver(stream.getAudioTracks()[0], {direction: 'sendonly', streams: [stream]});
  pc.addTransceiver(stream.getVideoTracks()[0], {direction: 'sendonly', streams: [stream],
    sendEncodings: [{rid: 'q', scaleResolutionDownBy: 4, maxBitrate: 150000},
                    {rid: 'h', scaleResolutionDownBy: 2, maxBitrate: 500000},
                    {rid: 'f', maxBitrate: 1500000}]});
  await pc.setLocalDescription(await pc.createOffer());
  window.offer = pc.localDescription.sdp;
  const response = await fetch('/whip/%(room)s', {method: 'POST', body: pc.localDescription.sdp,
    headers: {'Content-Type': 'application/sdp', 'Authorization': 'Bearer ' + token}});
  const answer = await response.text();
  if (response.status !== 201) return {status: response.status, body: answer};
  await pc.setRemoteDescription({type: 'answer', sdp: answer});
  return {status: response.status, answer};
})()
"""

# Per-rid outbound video of the publisher.
WHIP_SENT = """
(async () => {
  const out = [];
  (await window.pc.getStats()).forEach(s => {
    if (s.type === 'outbound-rtp' && s.kind === 'video')
      out.push({rid: s.rid, framesEncoded: s.framesEncoded || 0, frameWidth: s.frameWidth || 0,
                bytesSent: s.bytesSent || 0});
  });
  return {ice: window.pc.iceConnectionState, layers: out};
})()
"""

# The player: WHEP, recvonly audio + video, max-bundle.
WHEP_PLAY = """
(async () => {
  const token = (await (await fetch('/dev/token?room=%(room)s&identity=ff-whep')).json()).token;
  const pc = new RTCPeerConnection({iceServers: [], bundlePolicy: 'max-bundle'});
  window.pc = pc;
  pc.addTransceiver('audio', {direction: 'recvonly'});
  pc.addTransceiver('video', {direction: 'recvonly'});
  const video = document.createElement('video');
  video.autoplay = true; video.muted = true; document.body.appendChild(video);
  window.video = video;
  pc.ontrack = e => { if (e.track.kind === 'video') video.srcObject = new MediaStream([e.track]); };
  await pc.setLocalDescription(await pc.createOffer());
  window.offer = pc.localDescription.sdp;
  const response = await fetch('/whep/%(room)s', {method: 'POST', body: pc.localDescription.sdp,
    headers: {'Content-Type': 'application/sdp', 'Authorization': 'Bearer ' + token}});
  const answer = await response.text();
  if (response.status !== 201) return {status: response.status, body: answer};
  await pc.setRemoteDescription({type: 'answer', sdp: answer});
  return {status: response.status, answer};
})()
"""

WHEP_RECEIVED = """
(async () => {
  let inbound = null;
  (await window.pc.getStats()).forEach(s => {
    if (s.type === 'inbound-rtp' && s.kind === 'video')
      inbound = {framesDecoded: s.framesDecoded || 0, frameWidth: s.frameWidth || 0, frameHeight: s.frameHeight || 0};
  });
  return {ice: window.pc.iceConnectionState, inbound,
          videoWidth: window.video.videoWidth, videoHeight: window.video.videoHeight};
})()
"""


def wait_http(base: str, seconds: float) -> None:
    """The dev server answers /healthz (it starts beside this script)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


async def poll(tab, expression, predicate, seconds, what):
    value = None
    for _ in range(int(seconds * 5)):
        value = await tab.evaluate(expression)
        if predicate(value):
            return value
        await asyncio.sleep(0.2)
    raise TimeoutError(f"{what}: last {json.dumps(value)[:1500]}")


def sdp_sections(sdp: str) -> list[dict]:
    """Port and bundle-only of each m-section, for the result."""
    sections = []
    for line in sdp.splitlines():
        if line.startswith("m="):
            sections.append({"kind": line[2:].split()[0], "port": int(line.split()[1]), "bundleOnly": False})
        elif line == "a=bundle-only" and sections:
            sections[-1]["bundleOnly"] = True
        elif line.startswith("a=simulcast:") and sections:
            sections[-1]["simulcast"] = line[len("a=simulcast:"):]
    return sections


async def whip(base: str, room: str, seconds: float) -> dict:
    start = time.monotonic()
    marks = {}
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        firefox = start_firefox(port, profile)
        try:
            async with FirefoxSession(port, WHO) as session:
                publisher = await session.open_tab(f"{base}/healthz", first=True)
                published = await publisher.evaluate(WHIP_PUBLISH % {"room": room})
                if published.get("status") != 201:
                    return {"errors": [f"WHIP answered {published}"]}
                marks["published"] = round(time.monotonic() - start, 1)
                offer = await publisher.evaluate("window.offer")
                player = await session.open_tab(f"{base}/healthz")
                played = await player.evaluate(WHEP_PLAY % {"room": room})
                if played.get("status") != 201:
                    return {"errors": [f"WHEP answered {played}"]}
                player_offer = await player.evaluate("window.offer")
                received = await poll(
                    player, WHEP_RECEIVED,
                    lambda r: r["inbound"] and r["inbound"]["framesDecoded"] > 10 and r["videoWidth"] > 0,
                    seconds, "WHEP video decoded")
                marks["decoding"] = round(time.monotonic() - start, 1)
                # Firefox turns its top layer on only once its bandwidth
                # estimate allows (seconds on a loaded machine): two
                # layers encoded shows simulcast through the bundle-only
                # section; the three rids are checked in the answer.
                sent = await poll(
                    publisher, WHIP_SENT,
                    lambda s: len([x for x in s["layers"] if x["framesEncoded"] > 0]) >= 2, 10,
                    "two layers encoded")
                # A little longer: the player's width settles on the layer
                # the server forwards.
                await asyncio.sleep(2)
                received = await player.evaluate(WHEP_RECEIVED)
                sent = await publisher.evaluate(WHIP_SENT)
                return {
                    "seconds": marks,
                    "publishOffer": sdp_sections(offer), "publishAnswer": sdp_sections(published["answer"]),
                    "playOffer": sdp_sections(player_offer), "playAnswer": sdp_sections(played["answer"]),
                    "sent": sent, "received": received, "consoleErrors": session.console_errors(),
                }
        finally:
            stop_firefox(firefox)


def decoding(tiles) -> bool:
    return len(tiles or []) == 1 and tiles[0].get("framesDecoded", 0) > 0 and tiles[0].get("frameWidth", 0) > 0


async def room(base: str, room_name: str, seconds: float) -> dict:
    start = time.monotonic()
    marks = {}
    ff_port, cr_port = free_tcp_port(), free_tcp_port()
    with tempfile.TemporaryDirectory() as ff_profile, tempfile.TemporaryDirectory() as cr_profile:
        firefox = start_firefox(ff_port, ff_profile)
        chromium = start_chromium(cr_port, cr_profile)
        try:
            async with FirefoxSession(ff_port, WHO) as session, contextlib.AsyncExitStack() as stack:
                ff = await session.open_tab(page_url(base, "/", "fox", None, room_name), first=True)
                cr = await open_chromium_tab(cr_port, page_url(base, "/", "chrome", None, room_name), WHO, stack,
                                             first=True)
                marks["pagesOpen"] = round(time.monotonic() - start, 1)
                for tab in (ff, cr):
                    await tab.wait_for("state()", lambda s: s == "joined", 20, "joined")
                marks["joined"] = round(time.monotonic() - start, 1)
                ids = {"firefox": await ff.hook("participantId()"), "chromium": await cr.hook("participantId()")}
                tiles = {}
                for name, tab in (("firefox", ff), ("chromium", cr)):
                    tiles[name] = await tab.wait_for("tiles()", decoding, seconds, "the other's video decoding")
                marks["decoding"] = round(time.monotonic() - start, 1)
                # The layer control on the Firefox subscriber: low, then high.
                switch = {}
                await ff.hook(f"setPreference({json.dumps(ids['chromium'])}, 'low')")
                low = await ff.wait_for("tiles()", lambda t: decoding(t) and t[0]["frameWidth"] <= 320
                                        and t[0].get("layer") == 0, 15, "the low layer")
                switch["low"] = {k: low[0].get(k) for k in ("frameWidth", "layer", "preference")}
                await ff.hook(f"setPreference({json.dumps(ids['chromium'])}, 'high')")
                high = await ff.wait_for("tiles()", lambda t: decoding(t) and t[0]["frameWidth"] > 320, 15,
                                         "a wider layer")
                switch["high"] = {k: high[0].get(k) for k in ("frameWidth", "layer", "preference")}
                marks["switched"] = round(time.monotonic() - start, 1)
                return {
                    "seconds": marks,
                    "ids": ids,
                    "tiles": {name: [{k: t.get(k) for k in ("participantId", "framesDecoded", "frameWidth",
                                                             "layer", "bitrateKbps")} for t in ts]
                              for name, ts in tiles.items()},
                    "switch": switch,
                    "media": {"firefox": await ff.hook("media()"), "chromium": await cr.hook("media()")},
                    "consoleErrors": {"firefox": session.console_errors(), "chromium": cr.console_errors()},
                }
        finally:
            stop_firefox(firefox)
            stop_chromium(chromium)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["whip", "room"])
    parser.add_argument("--base", default="http://127.0.0.1:8080")
    parser.add_argument("--room", default="ff-room")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--limit", type=float, default=50.0)
    args = parser.parse_args()
    try:
        wait_http(args.base, 20)
        run = whip if args.case == "whip" else room
        result = asyncio.run(asyncio.wait_for(run(args.base, args.room, args.seconds), args.limit))
    except BaseException as error:  # report, never hang
        result = {"errors": [repr(error)]}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
