"""Writes an aiortc offer with audio and video, gathered on loopback only."""
import argparse
import asyncio
import pathlib

import aioice.ice
from aiortc import RTCConfiguration, RTCPeerConnection

# aioice skips 127.0.0.1 when it enumerates host addresses; keep the capture
# off the real network and give it exactly one loopback candidate.
aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=True: ["127.0.0.1"]


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver("audio", direction="sendrecv")
    pc.addTransceiver("video", direction="sendrecv")
    await pc.setLocalDescription(await pc.createOffer())
    sdp = pc.localDescription.sdp
    await pc.close()
    pathlib.Path(args.out, "aiortc-offer.sdp").write_bytes(sdp.encode())
    print(f"aiortc_offer: aiortc-offer.sdp: {len(sdp)} bytes")


asyncio.run(main())
