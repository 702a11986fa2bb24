"""Drives headless Chromium over the DevTools protocol and writes the SDP
offers it generates (after ICE gathering) to fixture files."""
import argparse
import asyncio
import pathlib

import websockets

from cdp import evaluate, open_page, page_websocket, serve_blank_page

WHO = "chromium_offers"

# Each snippet evaluates to a Promise of the offer SDP text.
WAIT_GATHERING = """
async function waitGathering(pc) {
  if (pc.iceGatheringState === 'complete') return;
  await new Promise(resolve => {
    const t = setTimeout(resolve, 5000);
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') { clearTimeout(t); resolve(); }
    });
  });
}
"""

OFFERS = {
    "chromium-publish-simulcast.sdp": WAIT_GATHERING + """
(async () => {
  const stream = await navigator.mediaDevices.getUserMedia(
      {audio: true, video: {width: 1280, height: 720}});
  const pc = new RTCPeerConnection({iceServers: []});
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
""",
    # What the room page sends with ?codec=h264 (preferVideoCodec in
    # swiftlet-client.js): H.264 mode 1 constrained baseline first.
    "chromium-publish-h264-simulcast.sdp": WAIT_GATHERING + """
(async () => {
  const stream = await navigator.mediaDevices.getUserMedia(
      {audio: true, video: {width: 1280, height: 720}});
  const pc = new RTCPeerConnection({iceServers: []});
  pc.addTransceiver(stream.getAudioTracks()[0], {direction: 'sendonly', streams: [stream]});
  const video = pc.addTransceiver(stream.getVideoTracks()[0], {direction: 'sendonly', streams: [stream],
    sendEncodings: [
      {rid: 'q', scaleResolutionDownBy: 4},
      {rid: 'h', scaleResolutionDownBy: 2},
      {rid: 'f', scaleResolutionDownBy: 1}]});
  const rank = (c) => c.mimeType !== 'video/H264' ? 3
      : !/packetization-mode=1/.test(c.sdpFmtpLine) ? 2 : /profile-level-id=42e0/.test(c.sdpFmtpLine) ? 0 : 1;
  const codecs = RTCRtpSender.getCapabilities('video').codecs;
  video.setCodecPreferences(codecs.map((c, i) => [rank(c), i, c])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((e) => e[2]));
  await pc.setLocalDescription(await pc.createOffer());
  await waitGathering(pc);
  return pc.localDescription.sdp;
})()
""",
    "chromium-recvonly.sdp": WAIT_GATHERING + """
(async () => {
  const pc = new RTCPeerConnection({iceServers: []});
  pc.addTransceiver('audio', {direction: 'recvonly'});
  pc.addTransceiver('video', {direction: 'recvonly'});
  await pc.setLocalDescription(await pc.createOffer());
  await waitGathering(pc);
  return pc.localDescription.sdp;
})()
""",
    "chromium-sendrecv.sdp": WAIT_GATHERING + """
(async () => {
  const stream = await navigator.mediaDevices.getUserMedia({audio: true, video: true});
  const pc = new RTCPeerConnection({iceServers: []});
  for (const track of stream.getTracks()) pc.addTrack(track, stream);
  pc.createDataChannel('chat');
  await pc.setLocalDescription(await pc.createOffer());
  await waitGathering(pc);
  return pc.localDescription.sdp;
})()
""",
}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", action="append", help="capture only these fixtures (repeatable)")
    args = ap.parse_args()
    url = page_websocket(args.port, WHO)
    page = serve_blank_page()
    async with websockets.connect(url, max_size=None) as ws:
        await open_page(ws, page, who=WHO)
        for i, (name, script) in enumerate(OFFERS.items(), start=1):
            if args.only and name not in args.only:
                continue
            sdp = await evaluate(ws, i, script, WHO)
            pathlib.Path(args.out, name).write_bytes(sdp.encode())
            print(f"chromium_offers: {name}: {len(sdp)} bytes")


asyncio.run(main())
