"""A one-to-one call between two aiortc clients through swiftlet.

  .venv/bin/python Scripts/interop/aiortc_call.py --url ws://127.0.0.1:PORT/rtc --tokens '["caller","callee"]'

Both clients join the same lobby (an SFU room) without publishing. The
caller first calls an id nobody has (the server must answer with an
error), then calls the callee; the callee answers on incoming-call; both
must receive call-started naming the private room. Only then does each
publish a tone on its publisher PeerConnection and receive the other's on
its subscriber PeerConnection, in the call room, as in aiortc_room.py.
Frames are counted for a few seconds, then the caller hangs up and both
must receive call-ended and a fresh `joined` for the lobby.

Prints one JSON line: the messages each side saw at each step, frames per
remote track, and errors. Bounded in time; loopback only.
"""
import argparse
import asyncio
import json
import os
import sys
import time

import websockets
from aiortc import RTCSessionDescription

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiortc_room import Client, tone  # noqa: E402

UNKNOWN_ID = "PA_nobodyhere000"


class CallClient(Client):
    """A room client whose signalling messages other than media
    negotiation are queued for the script to wait on."""

    def __init__(self, url, token, index):
        super().__init__(url, token, index)
        self.inbox = asyncio.Queue()
        # Set on call-ended: the call room's transports are gone, so a late
        # subscriber offer for it is recorded, not answered.
        self.ended = False
        self.late_offers = 0

    async def join(self):
        self.ws = await websockets.connect(self.url, max_size=None)
        await self.ws.send(json.dumps({"type": "join", "token": self.token}))
        self.listener = asyncio.ensure_future(self.listen())
        joined = await self.expect("joined")
        self.id = joined["participantId"]
        return joined

    async def expect(self, wanted, timeout=10):
        """The next queued message, which must be of type `wanted`."""
        message = await asyncio.wait_for(self.inbox.get(), timeout)
        if message["type"] != wanted:
            raise RuntimeError(f"client {self.index} expected {wanted}, got {message}")
        return message

    async def send(self, message):
        await self.ws.send(json.dumps(message))

    async def publish(self):
        self.publisher.addTrack(tone(300.0 + 150.0 * self.index))
        await self.publisher.setLocalDescription(await self.publisher.createOffer())
        await self.send({"type": "publish", "sdp": self.publisher.localDescription.sdp})

    async def listen(self):
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                kind = message["type"]
                if kind == "publish-answer":
                    await self.publisher.setRemoteDescription(RTCSessionDescription(message["sdp"], "answer"))
                elif kind == "subscriber-offer" and self.ended:
                    self.late_offers += 1
                elif kind == "subscriber-offer":
                    await self.subscriber.setRemoteDescription(RTCSessionDescription(message["sdp"], "offer"))
                    await self.subscriber.setLocalDescription(await self.subscriber.createAnswer())
                    await self.send({"type": "subscriber-answer", "version": message["version"],
                                     "sdp": self.subscriber.localDescription.sdp})
                elif kind in ("participant-joined", "participant-left", "track-published", "track-unpublished",
                              "active-speakers", "stream-state", "publisher-layers"):
                    # Room news, not steps of the call.
                    pass
                else:
                    if kind == "call-ended":
                        self.ended = True
                    self.inbox.put_nowait(message)
        except websockets.ConnectionClosed:
            pass


async def call(caller, callee, seconds, result):
    steps = result["steps"]
    t0 = time.monotonic()

    def mark(name):
        result["timings"][name] = round(time.monotonic() - t0, 3)

    lobby = [await caller.join(), await callee.join()]
    steps["lobby"] = [{"room": j["room"], "mode": j["mode"], "others": [p["id"] for p in j["participants"]]}
                      for j in lobby]
    mark("joined")

    await caller.send({"type": "call", "to": UNKNOWN_ID})
    steps["unknownCall"] = await caller.expect("error")

    await caller.send({"type": "call", "to": callee.id})
    ringing = await caller.expect("call-ringing")
    incoming = await callee.expect("incoming-call")
    if ringing.get("callId") != incoming.get("callId") or ringing.get("to") != callee.id:
        raise RuntimeError(f"call-ringing {ringing} does not match incoming-call {incoming}")
    steps["incoming"] = incoming
    await callee.send({"type": "answer-call", "callId": incoming["callId"]})
    steps["started"] = [await caller.expect("call-started"), await callee.expect("call-started")]
    mark("callStarted")

    # Publish only now: both are in the call room.
    await asyncio.gather(caller.publish(), callee.publish())
    for _ in range(100):
        if all(len(c.frames) >= 1 for c in (caller, callee)):
            break
        await asyncio.sleep(0.1)
    mark("tracks")
    await asyncio.sleep(1.0)
    for c in (caller, callee):
        c.counting = True
    await asyncio.sleep(seconds)
    for c in (caller, callee):
        c.counting = False
    mark("counted")

    await caller.send({"type": "hangup", "callId": incoming["callId"]})
    steps["ended"] = [await caller.expect("call-ended"), await callee.expect("call-ended")]
    back = [await caller.expect("joined"), await callee.expect("joined")]
    steps["back"] = [{"room": j["room"], "mode": j["mode"], "resumed": j["resumed"],
                      "others": [p["id"] for p in j["participants"]]} for j in back]
    mark("ended")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    tokens = json.loads(args.tokens)
    caller, callee = CallClient(args.url, tokens[0], 0), CallClient(args.url, tokens[1], 1)
    result = {"steps": {}, "timings": {}, "errors": [], "unknownID": UNKNOWN_ID}
    try:
        await asyncio.wait_for(call(caller, callee, args.seconds, result), 18 + args.seconds)
        # Anything the server said after the lobby's `joined` (a stray error).
        await asyncio.sleep(0.2)
    except Exception as error:
        result["errors"].append(repr(error))
    result["clients"] = []
    for c in (caller, callee):
        leftover = []
        while not c.inbox.empty():
            leftover.append(c.inbox.get_nowait())
        result["clients"].append({"id": getattr(c, "id", None), "frames": c.frames, "leftover": leftover,
                                  "lateOffers": c.late_offers, "publisher": c.publisher.connectionState,
                                  "subscriber": c.subscriber.connectionState})
    for c in (caller, callee):
        try:
            await asyncio.wait_for(c.close(), 5)
        except Exception:
            pass
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
