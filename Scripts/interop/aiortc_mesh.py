"""N aiortc clients in one swiftlet mesh room: media goes peer to peer.

  .venv/bin/python Scripts/interop/aiortc_mesh.py --url ws://127.0.0.1:PORT/rtc --tokens '["t1","t2","t3"]'

The clients join one after another, asking for `"mode": "mesh"`. Following
docs/PROTOCOL.md's convention, a client offers to every member listed in
its `joined` message, through `mesh-signal`; the member answers through
`mesh-signal` too. Each pair thus has one direct RTCPeerConnection, on
which each side sends its own tone and receives the other's.

No candidates are trickled: aiortc gathers every candidate before
setLocalDescription returns, so the offer and answer SDPs already carry
them (aiortc has no trickle ICE). A `candidate` payload from a peer would
be counted and is expected never to arrive.

Counts decoded frames per peer for a few seconds and prints one JSON line.
Bounded in time; loopback only.
"""
import argparse
import asyncio
import json
import os
import sys
import time

import websockets
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiortc_room import tone  # noqa: E402


class MeshClient:
    def __init__(self, url, token, index):
        self.url, self.token, self.index = url, token, index
        self.peers = {}  # peer id -> RTCPeerConnection
        self.frames = {}  # peer id -> frames decoded while counting
        self.counting = False
        self.errors = []
        self.signals = {"offer": 0, "answer": 0, "candidate": 0}

    def connection(self, peer):
        """The PeerConnection to `peer`, sending our tone to it."""
        if peer not in self.peers:
            pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
            pc.addTrack(tone(300.0 + 150.0 * self.index))

            @pc.on("track")
            def on_track(track):
                asyncio.ensure_future(self.count(peer, track))

            self.peers[peer] = pc
        return self.peers[peer]

    async def count(self, peer, track):
        self.frames.setdefault(peer, 0)
        while True:
            try:
                await track.recv()
            except MediaStreamError:
                return
            if self.counting:
                self.frames[peer] += 1

    async def signal(self, peer, payload):
        await self.ws.send(json.dumps({"type": "mesh-signal", "to": peer, "payload": payload}))

    async def join(self):
        self.ws = await websockets.connect(self.url, max_size=None)
        await self.ws.send(json.dumps({"type": "join", "token": self.token, "mode": "mesh"}))
        while True:
            joined = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
            if joined["type"] == "joined":
                break
            if joined["type"] == "error":
                raise RuntimeError(f"join refused: {joined}")
        self.id, self.mode = joined["participantId"], joined["mode"]
        self.listener = asyncio.ensure_future(self.listen())
        # The later joiner offers to everyone already there.
        for member in joined["participants"]:
            pc = self.connection(member["id"])
            await pc.setLocalDescription(await pc.createOffer())
            await self.signal(member["id"], {"type": "offer", "sdp": pc.localDescription.sdp})

    async def listen(self):
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                if message["type"] == "mesh-signal":
                    await self.handle(message["from"], message["payload"])
                elif message["type"] == "error":
                    self.errors.append(message)
        except websockets.ConnectionClosed:
            pass

    async def handle(self, peer, payload):
        kind = payload.get("type")
        if kind in self.signals:
            self.signals[kind] += 1
        if kind == "offer":
            pc = self.connection(peer)
            await pc.setRemoteDescription(RTCSessionDescription(payload["sdp"], "offer"))
            await pc.setLocalDescription(await pc.createAnswer())
            await self.signal(peer, {"type": "answer", "sdp": pc.localDescription.sdp})
        elif kind == "answer" and peer in self.peers:
            await self.peers[peer].setRemoteDescription(RTCSessionDescription(payload["sdp"], "answer"))
        else:
            self.errors.append({"unexpected": payload, "from": peer})

    async def close(self):
        for pc in self.peers.values():
            await pc.close()
        await self.ws.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    tokens = json.loads(args.tokens)
    clients = [MeshClient(args.url, t, i) for i, t in enumerate(tokens)]
    result = {"clients": [], "errors": [], "timings": {}}
    t0 = time.monotonic()
    try:
        # One after another, so each `joined` lists exactly the earlier ones.
        for c in clients:
            await c.join()
        result["timings"]["joined"] = round(time.monotonic() - t0, 3)
        for _ in range(100):
            if all(len(c.frames) >= len(clients) - 1 for c in clients):
                break
            await asyncio.sleep(0.1)
        result["timings"]["tracks"] = round(time.monotonic() - t0, 3)
        await asyncio.sleep(1.0)
        for c in clients:
            c.counting = True
        await asyncio.sleep(args.seconds)
        for c in clients:
            c.counting = False
        result["timings"]["counted"] = round(time.monotonic() - t0, 3)
    except Exception as error:
        result["errors"].append(repr(error))
    for c in clients:
        result["clients"].append({
            "id": getattr(c, "id", None), "mode": getattr(c, "mode", None), "frames": c.frames,
            "errors": c.errors, "signals": c.signals,
            "connections": {peer: pc.connectionState for peer, pc in c.peers.items()},
            # Where each PeerConnection's ICE pair goes: the peer's port,
            # never the server's media port.
            "remotePorts": {peer: remote_port(pc) for peer, pc in c.peers.items()},
        })
    for c in clients:
        try:
            await asyncio.wait_for(c.close(), 5)
        except Exception:
            pass
    print(json.dumps(result), flush=True)


def remote_port(pc):
    """The remote port of the nominated ICE pair (aioice internals; None
    if they change)."""
    try:
        transceiver = pc.getTransceivers()[0]
        ice = transceiver.sender.transport.transport._connection
        pair = ice._nominated.get(1)
        return pair.remote_candidate.port if pair else None
    except Exception:
        return None


if __name__ == "__main__":
    asyncio.run(main())
