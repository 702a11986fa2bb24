"""N aiortc clients in one SFU room over swiftlet's WebSocket protocol.

  .venv/bin/python Scripts/interop/aiortc_room.py --url ws://127.0.0.1:PORT/rtc --tokens '["t1","t2","t3"]'

Each client joins, publishes one audio track (a tone of its own pitch) on
its publisher PeerConnection, and receives everyone else's on its
subscriber PeerConnection (the server offers, the client answers). It then
counts decoded frames per remote track for a few seconds and prints one
JSON line: per client, frames received per remote track, and the server's
/metrics read at the end of the count while everyone is still connected.
With --publishers N only the first N clients publish; the others only
subscribe. Bounded in time; loopback only.
"""
import argparse
import asyncio
import json
import os
import sys

import websockets
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, VideoStreamTrack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The tone source and the loopback-only ICE patch (FACTS.md) are shared with
# the transport interop peer.
from aiortc_peer import ToneTrack  # noqa: E402
from server_metrics import metrics  # noqa: E402


def tone(hz):
    track = ToneTrack()
    track.FREQUENCY = hz
    return track


async def recv_type(ws, wanted, timeout=10):
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if message["type"] == wanted:
            return message


class Client:
    def __init__(self, url, token, index, video=False, publish=True):
        self.url, self.token, self.index, self.video, self.publishes = url, token, index, video, publish
        self.frames = {}
        self.kinds = {}
        self.subscriber = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.publisher = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.counting = False
        self.errors = []

        @self.subscriber.on("track")
        def on_track(track):
            asyncio.ensure_future(self.count(track))

    async def count(self, track):
        key = track.id
        self.frames.setdefault(key, 0)
        self.kinds[key] = track.kind
        while True:
            try:
                await track.recv()
            except MediaStreamError:
                return
            if self.counting:
                self.frames[key] += 1

    async def run(self, started):
        self.ws = await websockets.connect(self.url, max_size=None)
        await self.ws.send(json.dumps({"type": "join", "token": self.token}))
        joined = await recv_type(self.ws, "joined")
        self.id = joined["participantId"]
        await started.wait()
        self.listener = asyncio.ensure_future(self.listen())
        if not self.publishes:
            return
        self.publisher.addTrack(tone(300.0 + 150.0 * self.index))
        if self.video:
            # aiortc's test pattern, VP8-encoded by aiortc (libvpx).
            self.publisher.addTrack(VideoStreamTrack())
        await self.publisher.setLocalDescription(await self.publisher.createOffer())
        await self.ws.send(json.dumps({"type": "publish", "sdp": self.publisher.localDescription.sdp}))

    async def listen(self):
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                if message["type"] == "publish-answer":
                    await self.publisher.setRemoteDescription(RTCSessionDescription(message["sdp"], "answer"))
                elif message["type"] == "subscriber-offer":
                    await self.subscriber.setRemoteDescription(RTCSessionDescription(message["sdp"], "offer"))
                    await self.subscriber.setLocalDescription(await self.subscriber.createAnswer())
                    await self.ws.send(json.dumps({"type": "subscriber-answer", "version": message["version"],
                                                   "sdp": self.subscriber.localDescription.sdp}))
                elif message["type"] == "error":
                    self.errors.append(message)
        except websockets.ConnectionClosed:
            pass
        except Exception as error:  # a failed setRemoteDescription and the like
            self.errors.append({"type": "client", "error": repr(error)})

    async def close(self):
        await self.publisher.close()
        await self.subscriber.close()
        await self.ws.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--video", action="store_true", help="each client also publishes a VP8 video track")
    parser.add_argument("--publishers", type=int, default=None, help="only the first N clients publish")
    args = parser.parse_args()
    tokens = json.loads(args.tokens)
    publishers = len(tokens) if args.publishers is None else args.publishers
    clients = [Client(args.url, t, i, video=args.video, publish=i < publishers) for i, t in enumerate(tokens)]
    started = asyncio.Event()
    result = {"clients": [], "errors": []}
    try:
        runs = [asyncio.ensure_future(c.run(started)) for c in clients]
        await asyncio.sleep(0.5)
        started.set()
        await asyncio.wait_for(asyncio.gather(*runs), 15)
        # Wait until every client has a track from each other publisher.
        per_publisher = 2 if args.video else 1
        for _ in range(100):
            if all(len(c.frames) >= (publishers - (1 if c.publishes else 0)) * per_publisher for c in clients):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)
        for c in clients:
            c.counting = True
        await asyncio.sleep(args.seconds)
        for c in clients:
            c.counting = False
        result["metrics"] = await asyncio.get_running_loop().run_in_executor(None, metrics, args.url)
    except Exception as error:
        result["errors"].append(repr(error))
    # A copy of each list: an offer that reaches a client closing below
    # (someone else left first) is not part of the result.
    for c in clients:
        result["clients"].append({"id": getattr(c, "id", None), "frames": c.frames, "kinds": c.kinds,
                                  "errors": list(c.errors),
                                  "publisher": c.publisher.connectionState, "subscriber": c.subscriber.connectionState})
    for c in clients:
        try:
            await asyncio.wait_for(c.close(), 5)
        except Exception:
            pass
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
