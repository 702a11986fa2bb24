"""Three headless Chromium tabs join one room through swiftlet's own room
page (`/`): each publishes the fake camera (1280x720, three simulcast
layers) and microphone, and must decode the other two videos; the stats
overlay must show a non-zero bitrate and a received layer. With the
preference "auto" every tile tells the server its rendered width
(maxWidth), and the frames it gets fit it; a tab resized narrower sends
its tiles' new widths. The second tab mutes its camera: the others' tiles
for it show the muted badge (track-muted), and unmuting clears it. Then
one tab's WebSocket is dropped (a network blip): it must reconnect by
itself as the same participant and keep receiving. A PNG screenshot of the
first tab, taken while the second is muted, is saved (path in the
result). Prints one JSON line.

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


def tile_of(tiles, participant_id):
    return next((t for t in tiles or [] if t.get("participantId") == participant_id), None)


def badge(participant_id, muted: bool):
    """The tile of `participant_id` shows (or no longer shows) its camera muted."""
    def check(tiles):
        tile = tile_of(tiles, participant_id)
        return tile is not None and tile.get("videoMuted") is muted and ("camera muted" in tile.get("badge", "")) is muted
    return check


def auto_width_sent(tiles, others: int) -> bool:
    """Every remote tile has sent its current rendered width as maxWidth."""
    return len(tiles or []) == others and all(
        t.get("renderedWidth", 0) > 0 and t.get("autoMaxWidth") == t.get("renderedWidth") for t in tiles)


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

                # Layer preference "auto": each tile's width went to the
                # server, and the frames received fit in it.
                auto = {}
                for i, tab in enumerate(tabs):
                    tiles = await tab.wait_for("tiles()", lambda t: auto_width_sent(t, others), 5, "auto maxWidth sent")
                    fits = await tab.wait_for(
                        "tiles()", lambda t: all(0 < x.get("frameWidth", 0) <= x["autoMaxWidth"] for x in t or []
                                                 if x.get("autoMaxWidth")) and auto_width_sent(t, others),
                        10, "frames no wider than the tiles")
                    auto[names[i]] = {"tiles": [{k: x.get(k) for k in ("participantId", "renderedWidth", "autoMaxWidth",
                                                                        "frameWidth", "layer")} for x in fits],
                                      "fits": True}
                # A narrower window: the tiles grow to one per row, and the
                # new widths are sent once the resize settles.
                narrow = tabs[1]
                widths_before = sorted(t["renderedWidth"] for t in await narrow.hook("tiles()"))
                await narrow.command("Emulation.setDeviceMetricsOverride",
                                     {"width": 600, "height": 800, "deviceScaleFactor": 1, "mobile": False})
                resized = await narrow.wait_for(
                    "tiles()", lambda t: auto_width_sent(t, others) and all(x["renderedWidth"] > max(widths_before) for x in t),
                    5, "wider tiles' maxWidth sent")
                await narrow.command("Emulation.setDeviceMetricsOverride",
                                     {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
                resize = {"before": widths_before, "after": sorted(t["autoMaxWidth"] for t in resized)}

                # Mute: the second tab mutes its camera; the others' tiles
                # for it show the badge; unmuting clears it.
                muter, muter_id = tabs[1], ids[1]
                await muter.hook("muteCamera(true)")
                own_tracks = await muter.hook("ownTracks()")
                muted_tiles = []
                for tab in (tabs[0], tabs[2]):
                    tiles = await tab.wait_for("tiles()", badge(muter_id, True), 5, "the muted badge")
                    muted_tiles.append(tile_of(tiles, muter_id))
                screenshot = await tabs[0].screenshot(os.path.join(artifacts_dir(), "chromium_page_room.png"))
                await muter.hook("muteCamera(false)")
                unmuted_tiles = []
                for tab in (tabs[0], tabs[2]):
                    tiles = await tab.wait_for("tiles()", badge(muter_id, False), 5, "the badge cleared")
                    unmuted_tiles.append(tile_of(tiles, muter_id))
                mute = {"ownTracks": own_tracks, "muted": muted_tiles, "unmuted": unmuted_tiles,
                        "mutedLog": "track-muted" in (await tabs[0].hook("log()"))}

                # A network blip: the last tab loses its WebSocket without leave.
                blip = tabs[-1]
                await blip.hook("dropConnection()")
                await blip.wait_for("state()", lambda s: s == "reconnecting", 5, "reconnecting")
                await blip.wait_for("state()", lambda s: s == "joined", 15, "joined again")
                resumed_id = await blip.hook("participantId()")
                frames = {t["participantId"]: t["framesDecoded"] for t in await blip.hook("tiles()")}
                await asyncio.sleep(2)
                later = {t["participantId"]: t["framesDecoded"] for t in await blip.hook("tiles()")}

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
                    "auto": auto,
                    "resize": resize,
                    "mute": mute,
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
