"""Drives headless Chromium over the DevTools protocol and writes the SDP
offers it generates (after ICE gathering) to fixture files."""
import argparse
import asyncio
import json
import pathlib
import http.server
import threading
import time
import urllib.request

import websockets

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


def page_websocket(port: int) -> str:
    for _ in range(100):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=1) as r:
                for target in json.load(r):
                    if target.get("type") == "page":
                        return target["webSocketDebuggerUrl"]
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("chromium_offers: no DevTools page target")


async def evaluate(ws, msg_id: int, expression: str) -> str:
    await ws.send(json.dumps({"id": msg_id, "method": "Runtime.evaluate", "params": {
        "expression": expression, "awaitPromise": True, "returnByValue": True}}))
    while True:
        reply = json.loads(await ws.recv())
        if reply.get("id") != msg_id:
            continue
        result = reply.get("result", {})
        if "exceptionDetails" in result or "error" in reply:
            raise SystemExit(f"chromium_offers: evaluation failed: {json.dumps(reply)[:2000]}")
        return result["result"]["value"]


class BlankPage(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>capture</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve_blank_page() -> str:
    """getUserMedia needs a secure context, which about:blank is not;
    http://127.0.0.1 is (a potentially trustworthy origin)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BlankPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


async def command(ws, msg_id: int, method: str, params: dict) -> dict:
    await ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
    while True:
        reply = json.loads(await ws.recv())
        if reply.get("id") == msg_id:
            if "error" in reply:
                raise SystemExit(f"chromium_offers: {method} failed: {reply['error']}")
            return reply.get("result", {})


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    url = page_websocket(args.port)
    page = serve_blank_page()
    async with websockets.connect(url, max_size=None) as ws:
        await command(ws, 1000, "Page.enable", {})
        await command(ws, 1001, "Page.navigate", {"url": page})
        for _ in range(100):
            state = await evaluate(ws, 1002, "document.readyState + ' ' + location.href")
            if state.startswith("complete") and page in state:
                break
            await asyncio.sleep(0.1)
        for i, (name, script) in enumerate(OFFERS.items(), start=1):
            sdp = await evaluate(ws, i, script)
            pathlib.Path(args.out, name).write_bytes(sdp.encode())
            print(f"chromium_offers: {name}: {len(sdp)} bytes")


asyncio.run(main())
