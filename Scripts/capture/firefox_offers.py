"""Drives headless Firefox ESR over WebDriver BiDi (Scripts/interop/
firefox_bidi.py) and writes the SDP offers it generates, after ICE
gathering, to fixture files: a WHIP-style publish offer (audio, video
with three simulcast rids) under both bundle policies, and a WHEP-style
recvonly offer under max-bundle, where Firefox sends every m-section after
the first with port 0 and a=bundle-only (RFC 8843 section 6)."""
import argparse
import asyncio
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from cdp import free_tcp_port, serve_blank_page  # noqa: E402
from firefox_bidi import FirefoxSession, start_firefox, stop_firefox  # noqa: E402

WHO = "firefox_offers"

# Each snippet is one expression (FirefoxTab.evaluate awaits it): an async
# function called at once.
WAIT_GATHERING = """
  const waitGathering = async pc => {
    if (pc.iceGatheringState === 'complete') return;
    await new Promise(resolve => {
      const t = setTimeout(resolve, 5000);
      pc.addEventListener('icegatheringstatechange', () => {
        if (pc.iceGatheringState === 'complete') { clearTimeout(t); resolve(); }
      });
    });
  };
"""

PUBLISH = """
(async () => {""" + WAIT_GATHERING + """
  const stream = await navigator.mediaDevices.getUserMedia(
      {audio: true, video: {width: 1280, height: 720}});
  const pc = new RTCPeerConnection({iceServers: [], bundlePolicy: '%s'});
  pc.addTransceiver(stream.getAudioTracks()[0], {direction: 'sendonly', streams: [stream]});
  pc.addTransceiver(stream.getVideoTracks()[0], {direction: 'sendonly', streams: [stream],
    sendEncodings: [
      {rid: 'q', scaleResolutionDownBy: 4},
      {rid: 'h', scaleResolutionDownBy: 2},
      {rid: 'f', scaleResolutionDownBy: 1}]});
  await pc.setLocalDescription(await pc.createOffer());
  await waitGathering(pc);
  return pc.localDescription.sdp;
})()
"""

OFFERS = {
    "firefox-publish-simulcast-balanced.sdp": PUBLISH % "balanced",
    "firefox-publish-simulcast-max-bundle.sdp": PUBLISH % "max-bundle",
    "firefox-recvonly-max-bundle.sdp": """
(async () => {""" + WAIT_GATHERING + """
  const pc = new RTCPeerConnection({iceServers: [], bundlePolicy: 'max-bundle'});
  pc.addTransceiver('audio', {direction: 'recvonly'});
  pc.addTransceiver('video', {direction: 'recvonly'});
  await pc.setLocalDescription(await pc.createOffer());
  await waitGathering(pc);
  return pc.localDescription.sdp;
})()
""",
}


async def capture(out: str) -> None:
    page = serve_blank_page()
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        firefox = start_firefox(port, profile)
        try:
            async with FirefoxSession(port, WHO) as session:
                tab = await session.open_tab(page, first=True)
                for name, script in OFFERS.items():
                    sdp = await tab.evaluate(script)
                    pathlib.Path(out, name).write_bytes(sdp.encode())
                    print(f"{WHO}: {name}: {len(sdp)} bytes")
        finally:
            stop_firefox(firefox)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    asyncio.run(asyncio.wait_for(capture(args.out), 90))


main()
