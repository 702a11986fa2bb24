"""Headless Chromium through swiftlet's SFU: one page runs two room clients
over the WebSocket protocol. The first publishes the fake camera (VP8, no
simulcast) and microphone on its publisher PeerConnection; the second
receives them on its subscriber PeerConnection (the server offers), renders
them, and after a few seconds reports getStats: frames decoded, frame size,
audio packets, and the protocol of each PeerConnection's selected candidate
pair (`paths`: "udp" or "tcp", RFC 6544). Prints one JSON line.

  .venv/bin/python Scripts/interop/chromium_room.py --url ws://127.0.0.1:PORT/rtc --tokens '["t1","t2"]'
"""
import argparse
import asyncio
import json
import os
import sys
import tempfile

import websockets

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "capture"))
from cdp import evaluate, free_tcp_port, open_page, page_websocket, serve_blank_page, start_chromium, stop_chromium  # noqa: E402

WHO = "chromium_room"

PAGE_JS = """
(async () => {
  const url = %(url)s, tokens = %(tokens)s, seconds = %(seconds)s;
  const log = [];
  function client(token) {
    const ws = new WebSocket(url);
    const handlers = {};
    ws.onmessage = (e) => { const m = JSON.parse(e.data); log.push(m.type); (handlers[m.type] || (() => {}))(m); };
    return {ws, on: (type, f) => { handlers[type] = f; },
            send: (m) => ws.send(JSON.stringify(m)),
            opened: new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error('ws')); })};
  }
  const joined = (c) => new Promise((resolve) => c.on('joined', resolve));

  // Receiver first, so it is subscribed when the track appears.
  const rx = client(tokens[1]);
  await rx.opened;
  const rxJoined = joined(rx);
  rx.send({type: 'join', token: tokens[1]});
  await rxJoined;
  const sub = new RTCPeerConnection({iceServers: []});
  const video = document.createElement('video');
  video.muted = true; video.autoplay = true; video.playsInline = true;
  document.body.appendChild(video);
  const remote = new MediaStream();
  video.srcObject = remote;
  sub.ontrack = (e) => { remote.addTrack(e.track); video.play().catch(() => {}); };
  rx.on('subscriber-offer', async (m) => {
    await sub.setRemoteDescription({type: 'offer', sdp: m.sdp});
    await sub.setLocalDescription(await sub.createAnswer());
    rx.send({type: 'subscriber-answer', version: m.version, sdp: sub.localDescription.sdp});
  });

  const tx = client(tokens[0]);
  await tx.opened;
  const txJoined = joined(tx);
  tx.send({type: 'join', token: tokens[0]});
  await txJoined;
  const stream = await navigator.mediaDevices.getUserMedia({audio: true, video: {width: 640, height: 360}});
  const pub = new RTCPeerConnection({iceServers: []});
  for (const track of stream.getTracks()) pub.addTrack(track, stream);
  const answered = new Promise((resolve) => tx.on('publish-answer', async (m) => {
    await pub.setRemoteDescription({type: 'answer', sdp: m.sdp}); resolve();
  }));
  await pub.setLocalDescription(await pub.createOffer());
  tx.send({type: 'publish', sdp: pub.localDescription.sdp});
  await answered;

  await new Promise((r) => setTimeout(r, seconds * 1000));
  const out = {log, publisher: pub.connectionState, subscriber: sub.connectionState, video: null, audio: null};
  (await sub.getStats()).forEach((s) => {
    if (s.type === 'inbound-rtp' && s.kind === 'video') {
      out.video = {framesDecoded: s.framesDecoded || 0, frameWidth: s.frameWidth || 0, frameHeight: s.frameHeight || 0,
                   packetsReceived: s.packetsReceived, codec: s.codecId};
    }
    if (s.type === 'inbound-rtp' && s.kind === 'audio') {
      out.audio = {packetsReceived: s.packetsReceived, totalSamplesReceived: s.totalSamplesReceived || 0};
    }
  });
  // The selected pair's protocols (RFC 6544: "tcp" when ICE-TCP carries it).
  async function path(pc) {
    const stats = await pc.getStats();
    let pair = null;
    stats.forEach((s) => { if (s.type === 'transport' && s.selectedCandidatePairId) pair = stats.get(s.selectedCandidatePairId); });
    if (!pair) return null;
    const local = stats.get(pair.localCandidateId), remote = stats.get(pair.remoteCandidateId);
    return {local: local && local.protocol, remote: remote && remote.protocol,
            remoteType: remote && remote.candidateType, tcpType: local && local.tcpType};
  }
  out.paths = {publisher: await path(pub), subscriber: await path(sub)};
  pub.close(); sub.close(); tx.ws.close(); rx.ws.close();
  return out;
})()
"""


async def run(url, tokens, seconds):
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        chromium = start_chromium(port, profile)
        try:
            async with websockets.connect(page_websocket(port, WHO), max_size=None) as devtools:
                await open_page(devtools, serve_blank_page(), who=WHO)
                js = PAGE_JS % {"url": json.dumps(url), "tokens": json.dumps(tokens), "seconds": json.dumps(seconds)}
                return await evaluate(devtools, 1, js, WHO)
        finally:
            stop_chromium(chromium)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    try:
        result = asyncio.run(asyncio.wait_for(run(args.url, json.loads(args.tokens), args.seconds), 45))
    except BaseException as error:  # report, never hang
        result = {"errors": [repr(error)]}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
