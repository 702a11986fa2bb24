#!/usr/bin/env python3
"""An independent WebRTC peer (aiortc) for Tests/InteropTests.

Offers one sendrecv audio track (a 440 Hz tone, Opus-encoded by aiortc) to
the Swift side over stdin/stdout, one JSON object per line:

  stdout  {"type": "offer", "sdp": "..."}       once ICE gathering is complete
  stdin   {"type": "answer", "sdp": "..."}      the Swift side's answer
  stdout  {"type": "result", ...}                the outcome, then exit

The result carries `connected` (connectionState reached "connected"),
`framesReceived` (audio frames aiortc received and decoded from the remote
track during the measuring window), `iceConnectionState`,
`connectionState`, `srtpProfile` (the profile OpenSSL negotiated, read from
aiortc's DTLS transport internals; null if that changes), and `error`.

Everything is bounded in time and uses 127.0.0.1 only. Logs go to stderr.
Run it with the repository's venv: `.venv/bin/python Scripts/interop/aiortc_peer.py`.
"""

import argparse
import asyncio
import fractions
import json
import logging
import math
import sys
import time

import aioice.ice
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import AudioStreamTrack, MediaStreamError
from av import AudioFrame

# aioice skips loopback addresses when gathering host candidates; the test
# runs entirely on 127.0.0.1.
aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=False: ["127.0.0.1"]

log = logging.getLogger("aiortc_peer")


class ToneTrack(AudioStreamTrack):
    """A 440 Hz sine at 48 kHz, 20 ms per frame, paced in real time."""

    SAMPLE_RATE = 48000
    SAMPLES = 960
    FREQUENCY = 440.0

    def __init__(self) -> None:
        super().__init__()
        self._pts = 0
        self._start: float | None = None

    async def recv(self) -> AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.time()
        else:
            self._pts += self.SAMPLES
            wait = self._start + self._pts / self.SAMPLE_RATE - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
        samples = bytearray(2 * self.SAMPLES)
        for i in range(self.SAMPLES):
            t = (self._pts + i) / self.SAMPLE_RATE
            v = int(8000 * math.sin(2 * math.pi * self.FREQUENCY * t))
            samples[2 * i : 2 * i + 2] = v.to_bytes(2, "little", signed=True)
        frame = AudioFrame(format="s16", layout="mono", samples=self.SAMPLES)
        frame.planes[0].update(bytes(samples))
        frame.pts = self._pts
        frame.sample_rate = self.SAMPLE_RATE
        frame.time_base = fractions.Fraction(1, self.SAMPLE_RATE)
        return frame


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def read_line_from_stdin() -> bytes:
    # Through the event loop rather than a thread: a thread blocked in
    # readline() would keep the process alive after a timeout.
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return await reader.readline()


def negotiated_srtp_profile(pc: RTCPeerConnection) -> str | None:
    # Internals of aiortc 1.16 (RTCDtlsTransport._ssl is a pyOpenSSL
    # Connection); optional, so any change there just gives None.
    try:
        for transceiver in pc.getTransceivers():
            ssl = transceiver.sender.transport._ssl
            if ssl is not None:
                profile = ssl.get_selected_srtp_profile()
                if profile:
                    return profile.decode()
    except Exception as exc:  # noqa: BLE001
        log.info("could not read the SRTP profile: %r", exc)
    return None


async def run(args: argparse.Namespace) -> dict:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    result = {
        "type": "result",
        "connected": False,
        "framesReceived": 0,
        "iceConnectionState": None,
        "connectionState": None,
        "srtpProfile": None,
        "error": None,
    }
    connected = asyncio.Event()
    measuring_started = asyncio.Event()
    frames = {"count": 0}
    readers: list[asyncio.Task] = []

    @pc.on("connectionstatechange")
    def on_state() -> None:
        log.info("connectionState %s", pc.connectionState)
        if pc.connectionState == "connected":
            connected.set()

    async def count_frames(track) -> None:
        # Frames that arrive before the measuring window are not counted,
        # so the number says what flowed after "connected".
        while True:
            try:
                await asyncio.wait_for(track.recv(), timeout=1.0)
            except asyncio.TimeoutError:
                continue
            except MediaStreamError:
                return
            if measuring_started.is_set():
                frames["count"] += 1

    @pc.on("track")
    def on_track(track) -> None:
        log.info("remote track %s", track.kind)
        readers.append(asyncio.ensure_future(count_frames(track)))

    pc.addTrack(ToneTrack())
    try:
        await pc.setLocalDescription(await pc.createOffer())  # waits for gathering
        emit({"type": "offer", "sdp": pc.localDescription.sdp})

        try:
            line = await asyncio.wait_for(read_line_from_stdin(), timeout=args.answer_timeout)
        except asyncio.TimeoutError:
            raise RuntimeError(f"no answer on stdin within {args.answer_timeout} s") from None
        if not line:
            raise RuntimeError("stdin closed before the answer")
        answer = json.loads(line)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))

        try:
            await asyncio.wait_for(connected.wait(), timeout=args.connect_timeout)
        except asyncio.TimeoutError:
            result["error"] = f"not connected within {args.connect_timeout} s"
        if connected.is_set():
            result["connected"] = True
            result["srtpProfile"] = negotiated_srtp_profile(pc)
            measuring_started.set()
            await asyncio.sleep(args.measure)
    except Exception as exc:  # noqa: BLE001
        log.exception("peer failed")
        result["error"] = repr(exc)
    finally:
        result["framesReceived"] = frames["count"]
        result["iceConnectionState"] = pc.iceConnectionState
        result["connectionState"] = pc.connectionState
        for task in readers:
            task.cancel()
        try:
            await asyncio.wait_for(pc.close(), timeout=2.0)
        except Exception:  # noqa: BLE001
            pass
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answer-timeout", type=float, default=10.0)
    parser.add_argument("--connect-timeout", type=float, default=10.0)
    parser.add_argument("--measure", type=float, default=3.0, help="seconds of media to count after connecting")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr,
                        format="aiortc_peer %(levelname)s %(name)s: %(message)s")
    result = asyncio.run(run(args))
    emit(result)


if __name__ == "__main__":
    main()
