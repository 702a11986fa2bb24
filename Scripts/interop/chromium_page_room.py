"""Three headless Chromium tabs join one room through swiftlet's own room
page (`/`): each publishes the fake camera (1280x720, three simulcast
layers) and microphone, and must decode the other two videos; the stats
overlay must show a non-zero bitrate and a received layer. Then one tab's
WebSocket is dropped (a network blip): it must reconnect by itself as the
same participant and keep receiving. A PNG screenshot of the first tab is
saved (path in the result). Prints one JSON line.

  .venv/bin/python Scripts/interop/chromium_page_room.py --url ws://127.0.0.1:PORT/rtc --tokens '["t1","t2","t3"]'

Without --tokens the server must be in --dev mode: the pages fetch their
own tokens for room --room.
"""
import argparse
import asyncio
import contextlib
import json
import os
import tempfile

from chromium_page import CDPError, artifacts_dir, base_url, open_tabs, page_url
from cdp import free_tcp_port, start_chromium, stop_chromium

WHO = "chromium_page_room"
NAMES = ["alice", "bob", "carol"]


def decoding(tiles, others: int) -> bool:
    """`others` remote tiles, each decoding video with a bitrate and a layer."""
    good = [t for t in tiles or [] if t.get("framesDecoded", 0) > 0 and t.get("frameWidth", 0) > 0
            and t.get("bitrateKbps", 0) > 0 and t.get("layer") is not None]
    return len(tiles or []) == others and len(good) == others


async def run(url, tokens, room, seconds, simulcast):
    base = base_url(url)
    names = NAMES[:len(tokens)] if tokens else NAMES
    urls = [page_url(base, "/", name, tokens[i] if tokens else None, room, simulcast) for i, name in enumerate(names)]
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        chromium = start_chromium(port, profile)
        try:
            async with contextlib.AsyncExitStack() as stack:
                tabs = await open_tabs(port, urls, WHO, stack)
                ids = []
                for tab in tabs:
                    await tab.wait_for("state()", lambda s: s == "joined", 15, "joined")
                    ids.append(await tab.hook("participantId()"))
                others = len(tabs) - 1
                for tab in tabs:
                    await tab.wait_for("tiles()", lambda t: decoding(t, others), seconds, "two decoding remote tiles")
                before = [await tab.hook("tiles()") for tab in tabs]
                await asyncio.sleep(2)
                after = [await tab.hook("tiles()") for tab in tabs]

                # A network blip: the last tab loses its WebSocket without leave.
                blip = tabs[-1]
                await blip.hook("dropConnection()")
                await blip.wait_for("state()", lambda s: s == "reconnecting", 5, "reconnecting")
                await blip.wait_for("state()", lambda s: s == "joined", 15, "joined again")
                resumed_id = await blip.hook("participantId()")
                frames = {t["participantId"]: t["framesDecoded"] for t in await blip.hook("tiles()")}
                await asyncio.sleep(2)
                later = {t["participantId"]: t["framesDecoded"] for t in await blip.hook("tiles()")}

                screenshot = await tabs[0].screenshot(os.path.join(artifacts_dir(), "chromium_page_room.png"))
                pages = []
                for i, tab in enumerate(tabs):
                    pages.append({
                        "name": names[i], "participantId": ids[i], "media": await tab.hook("media()"),
                        "tiles": after[i],
                        "framesRising": all(a["framesDecoded"] > b["framesDecoded"]
                                            for a, b in zip(sorted(after[i], key=lambda t: t["participantId"]),
                                                            sorted(before[i], key=lambda t: t["participantId"]))),
                    })
                return {
                    "pages": pages,
                    "reconnect": {"sameParticipant": resumed_id == ids[-1],
                                  "framesRising": bool(frames) and all(later.get(k, 0) > v for k, v in frames.items())},
                    "screenshot": screenshot,
                }
        finally:
            stop_chromium(chromium)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    # Three simulcast layers (the server forwards every rid layer and sends
    # transport-cc feedback); --one-layer publishes a single encoding.
    parser.add_argument("--one-layer", action="store_true")
    parser.add_argument("--tokens", default="")
    parser.add_argument("--room", default="page-room")
    parser.add_argument("--seconds", type=float, default=25.0)
    args = parser.parse_args()
    tokens = json.loads(args.tokens) if args.tokens else None
    try:
        result = asyncio.run(asyncio.wait_for(run(args.url, tokens, args.room, args.seconds, not args.one_layer), 55))
    except BaseException as error:  # report, never hang
        result = {"errors": [repr(error)]}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
