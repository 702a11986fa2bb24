"""Data channels through swiftlet's SFU with aiortc (RFC 8831, 8832).

  .venv/bin/python Scripts/interop/aiortc_data.py --url ws://127.0.0.1:PORT/rtc --tokens '["t1","t2","t3"]'

Three clients join one room. Each publishes a tone and opens two data
channels on its publisher PeerConnection before the offer: "chat"
(reliable, ordered) and "lossy" (unordered, maxRetransmits 0). Then:
the first two send numbered messages to the room on both channels, the
first sends one message to the second only ("@<identity>\\n..."), and
one message over the server's size limit, then one more; with
--api-token, the server API sends one message to the room ("chat"),
which arrives with an empty sender identity. Prints one
JSON line: per client, what arrived on each channel (sender identity and
text, as the server's envelope "<identity>\\n<text>" says), the room
protocol errors it got, and its connection states. Loopback only; about
five seconds.
"""
import argparse
import asyncio
import json
import os
import sys
import urllib.request

import websockets
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiortc_peer import ToneTrack  # noqa: E402  (also patches ICE to loopback)


async def recv_type(ws, wanted, timeout=10):
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if message["type"] == wanted:
            return message


class Client:
    def __init__(self, url, token):
        self.url, self.token = url, token
        self.publisher = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.received = {"chat": [], "lossy": []}
        self.errors = []
        self.opened = asyncio.Event()
        self.channels = {
            "chat": self.publisher.createDataChannel("chat"),
            "lossy": self.publisher.createDataChannel("lossy", ordered=False, maxRetransmits=0),
        }
        for label, channel in self.channels.items():
            channel.on("open", self.check_open)
            channel.on("message", self.receiver(label))

    def check_open(self):
        if all(c.readyState == "open" for c in self.channels.values()):
            self.opened.set()

    def receiver(self, label):
        def on_message(message):
            text = message if isinstance(message, str) else message.decode(errors="replace")
            sender, _, body = text.partition("\n")
            self.received[label].append([sender, body])
        return on_message

    async def run(self):
        self.ws = await websockets.connect(self.url, max_size=None)
        await self.ws.send(json.dumps({"type": "join", "token": self.token}))
        joined = await recv_type(self.ws, "joined")
        self.id = joined["participantId"]
        self.listener = asyncio.ensure_future(self.listen())
        self.publisher.addTrack(ToneTrack())
        await self.publisher.setLocalDescription(await self.publisher.createOffer())
        await self.ws.send(json.dumps({"type": "publish", "sdp": self.publisher.localDescription.sdp}))
        await asyncio.wait_for(self.opened.wait(), 10)

    async def listen(self):
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                if message["type"] == "publish-answer":
                    self.answer = message["sdp"]
                    await self.publisher.setRemoteDescription(RTCSessionDescription(message["sdp"], "answer"))
                elif message["type"] == "error":
                    self.errors.append(message)
        except websockets.ConnectionClosed:
            pass
        except Exception as error:
            self.errors.append({"type": "client", "error": repr(error)})

    async def close(self):
        await self.publisher.close()
        await self.ws.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--identities", required=True)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--api-token")
    args = parser.parse_args()
    identities = json.loads(args.identities)
    clients = [Client(args.url, t) for t in json.loads(args.tokens)]
    result = {"clients": [], "errors": []}
    try:
        await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), 20)
        ann, ben = clients[0], clients[1]
        for i in range(args.count):
            for sender in (ann, ben):
                sender.channels["chat"].send(f"chat {i}")
                sender.channels["lossy"].send(f"lossy {i}")
            await asyncio.sleep(0.1)  # 20 a second: the server relays 20 a second, bursts of 40
        ann.channels["chat"].send(f"@{identities[1]}\nonly for you")
        await asyncio.sleep(0.2)
        ann.channels["chat"].send("x" * 20000)  # over the 16 KiB limit
        await asyncio.sleep(0.5)
        ann.channels["chat"].send("after the refusal")
        await asyncio.sleep(0.3)
        if args.api_token:
            # The server API's data message (docs/API.md), to the whole room.
            room_url = args.url.replace("ws://", "http://").replace("/rtc", "/api/v1/rooms/data/data")
            request = urllib.request.Request(
                room_url, data=json.dumps({"data": "from the server", "label": "chat"}).encode(), method="POST",
                headers={"Authorization": f"Bearer {args.api_token}", "Content-Type": "application/json"})
            answer = await asyncio.to_thread(lambda: urllib.request.urlopen(request, timeout=5).read())
            result["api"] = json.loads(answer)
        await asyncio.sleep(1.0)
    except Exception as error:
        result["errors"].append(repr(error))
    for c in clients:
        result["clients"].append({"id": getattr(c, "id", None), "received": c.received, "errors": list(c.errors),
                                  "publisher": c.publisher.connectionState,
                                  "channels": {k: v.readyState for k, v in c.channels.items()},
                                  "answerHasSCTP": "a=sctp-port:5000" in getattr(c, "answer", "")})
    for c in clients:
        try:
            await asyncio.wait_for(c.close(), 5)
        except Exception:
            pass
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
