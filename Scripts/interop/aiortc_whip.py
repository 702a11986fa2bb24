"""WHIP and WHEP against swiftlet with aiortc, plus a WebSocket participant.

  .venv/bin/python Scripts/interop/aiortc_whip.py --base http://127.0.0.1:PORT --room room \
      --whip-token T1 --whep-token T2 --ws-token T3

A WebSocket client joins the room first. An aiortc peer then publishes an
Opus tone and a VP8 video track by WHIP (POST of its offer, urllib in a
thread); a second aiortc peer plays the room by WHEP (POST /whep/{room} with
a recvonly audio and video offer; aiortc offers RTX for VP8, so the answer
has an RTX stream in an FID group). Both receivers count decoded frames for
a few seconds; then both sessions are DELETEd. Prints one JSON line. Bounded in time; loopback only.

With --video-codec h264 the publisher's video transceiver offers only
H.264 (setCodecPreferences; aiortc encodes packetization-mode 1 with
libx264 through PyAV), and the JSON names the video codec of the WHIP
answer, of the WebSocket participant's subscriber offer and of the WHEP
answer (first payload type of each m=video line, by its rtpmap).
"""
import argparse
import asyncio
import json
import os
import sys
import urllib.error
import urllib.request

import websockets
from aiortc import RTCConfiguration, RTCPeerConnection, RTCRtpSender, RTCSessionDescription, VideoStreamTrack
from aiortc.mediastreams import MediaStreamError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiortc_peer import ToneTrack  # noqa: E402


def http(method, url, body=None, headers=None):
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


async def post_offer(base, path, token, sdp):
    return await asyncio.get_running_loop().run_in_executor(
        None, lambda: http("POST", base + path, sdp.encode(),
                           {"Content-Type": "application/sdp", "Authorization": "Bearer " + token}))


def video_codec(sdp):
    """`NAME fmtp` of the first payload type on the m=video line, or None."""
    lines = sdp.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("m=video ") and len(line.split()) > 3 and line.split()[1] != "0":
            pt = line.split()[3]
            section = lines[i + 1:]
            end = next((j for j, l in enumerate(section) if l.startswith("m=")), len(section))
            section = section[:end]
            name = next((l.split(" ", 1)[1].split("/")[0] for l in section if l.startswith(f"a=rtpmap:{pt} ")), None)
            fmtp = next((l.split(" ", 1)[1] for l in section if l.startswith(f"a=fmtp:{pt} ")), "")
            return f"{name} {fmtp}".strip() if name else None
    return None


class Counter:
    def __init__(self):
        self.frames = {}
        self.counting = False

    def attach(self, track):
        asyncio.ensure_future(self.count(track))

    async def count(self, track):
        self.frames.setdefault(track.id, 0)
        while True:
            try:
                await track.recv()
            except MediaStreamError:
                return
            if self.counting:
                self.frames[track.id] += 1


class WebSocketClient:
    def __init__(self, url, token):
        self.url, self.token = url, token
        self.subscriber = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.counter = Counter()
        self.seen = []
        self.offered_video = []
        self.errors = []
        self.subscriber.on("track", self.counter.attach)

    async def start(self):
        self.ws = await websockets.connect(self.url, max_size=None)
        await self.ws.send(json.dumps({"type": "join", "token": self.token}))
        self.listener = asyncio.ensure_future(self.listen())

    async def listen(self):
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                self.seen.append(message)
                if message["type"] == "subscriber-offer":
                    self.offered_video.append(video_codec(message["sdp"]))
                    await self.subscriber.setRemoteDescription(RTCSessionDescription(message["sdp"], "offer"))
                    await self.subscriber.setLocalDescription(await self.subscriber.createAnswer())
                    await self.ws.send(json.dumps({"type": "subscriber-answer", "version": message["version"],
                                                   "sdp": self.subscriber.localDescription.sdp}))
                elif message["type"] == "error":
                    self.errors.append(message)
        except websockets.ConnectionClosed:
            pass

    def saw(self, kind):
        return [m for m in self.seen if m["type"] == kind]

    async def close(self):
        await self.subscriber.close()
        await self.ws.close()


async def run(args, result):
    base = args.base
    ws = WebSocketClient(base.replace("http://", "ws://") + "/rtc", args.ws_token)
    await ws.start()
    result["ws"] = ws

    publisher = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    result["peers"].append(publisher)
    publisher.addTrack(ToneTrack())
    publisher.addTrack(VideoStreamTrack())
    if args.video_codec:
        mime = "video/" + args.video_codec
        for transceiver in publisher.getTransceivers():
            if transceiver.kind == "video":
                transceiver.setCodecPreferences(
                    [c for c in RTCRtpSender.getCapabilities("video").codecs if c.mimeType.lower() == mime.lower()])
    await publisher.setLocalDescription(await publisher.createOffer())
    status, headers, body = await post_offer(base, "/whip/" + args.room, args.whip_token, publisher.localDescription.sdp)
    result["whip_status"] = status
    if status != 201:
        raise RuntimeError("WHIP POST %d: %s" % (status, body))
    result["whip_location"] = headers.get("Location")
    result["whip_etag"] = headers.get("ETag")
    result["whip_video_codec"] = video_codec(body)
    await publisher.setRemoteDescription(RTCSessionDescription(body, "answer"))

    player = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    result["peers"].append(player)
    counter = Counter()
    video_counter = Counter()
    player.on("track", lambda track: (video_counter if track.kind == "video" else counter).attach(track))
    player.addTransceiver("audio", direction="recvonly")
    player.addTransceiver("video", direction="recvonly")
    await player.setLocalDescription(await player.createOffer())
    status, headers, body = await post_offer(base, "/whep/" + args.room, args.whep_token, player.localDescription.sdp)
    result["whep_status"] = status
    if status != 201:
        raise RuntimeError("WHEP POST %d: %s" % (status, body))
    result["whep_location"] = headers.get("Location")
    result["whep_video_codec"] = video_codec(body)
    result["whep_answer_fid"] = sum(1 for line in body.splitlines() if line.startswith("a=ssrc-group:FID "))
    await player.setRemoteDescription(RTCSessionDescription(body, "answer"))

    for _ in range(100):
        if counter.frames and video_counter.frames and ws.counter.frames:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    counter.counting = video_counter.counting = ws.counter.counting = True
    await asyncio.sleep(args.seconds)
    counter.counting = video_counter.counting = ws.counter.counting = False
    result["whep_frames"] = sum(counter.frames.values())
    result["whep_video_frames"] = sum(video_counter.frames.values())
    result["ws_frames"] = sum(ws.counter.frames.values())
    result["ws_track_published"] = len(ws.saw("track-published"))
    result["ws_offered_video"] = [c for c in ws.offered_video if c]
    result["ws_participant_joined"] = [m["participant"]["identity"] for m in ws.saw("participant-joined")]

    loop = asyncio.get_running_loop()
    for key in ("whip_location", "whep_location"):
        status, _, _ = await loop.run_in_executor(None, lambda: http("DELETE", base + result[key]))
        result["delete"].append(status)
    await asyncio.sleep(0.5)
    result["ws_participant_left"] = len(ws.saw("participant-left"))
    result["ws_errors"] = ws.errors


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--room", required=True)
    parser.add_argument("--whip-token", required=True)
    parser.add_argument("--whep-token", required=True)
    parser.add_argument("--ws-token", required=True)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--video-codec", default=None, help="the WHIP publisher's only video codec (h264)")
    args = parser.parse_args()
    result = {"errors": [], "delete": [], "peers": []}
    try:
        await asyncio.wait_for(run(args, result), 25)
    except Exception as error:
        result["errors"].append(repr(error))
    for peer in result.pop("peers"):
        try:
            await asyncio.wait_for(peer.close(), 5)
        except Exception:
            pass
    ws = result.pop("ws", None)
    if ws is not None:
        try:
            await asyncio.wait_for(ws.close(), 5)
        except Exception:
            pass
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
