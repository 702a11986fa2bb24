"""Two headless Chromium tabs on swiftlet's room page (`/`, dev mode: the
pages fetch their own tokens) and what happens when a page goes away or
its media stops:

- page loads log no console error (no failed /dev/token probe, no
  missing favicon); a call page (`/call`) is loaded and checked too;
- B stops sending video without leaving: A's tile of B shows
  "reconnecting…", and clears when B sends again;
- B navigates to the room page again, without ?name= and without
  autojoin: A sees B's old tile go within about a second (B has not come
  back, so only a leave can remove it), and B's form has the same name
  (kept in localStorage); B joins under it;
- B reloads: the same, by Page.reload;
- B's tab is closed: A sees B's tile go within about a second.

A screenshot of A while B's tile shows "reconnecting…" is saved. Prints
one JSON line.

  .venv/bin/python Scripts/interop/chromium_page_lifecycle.py --url ws://127.0.0.1:PORT/rtc

The server must be in --dev mode (it mints the pages' tokens).
"""
import argparse
import asyncio
import contextlib
import json
import os
import tempfile
import time
import urllib.parse
import urllib.request

from chromium_page import artifacts_dir, base_url, open_tab
from cdp import CDPError, free_tcp_port, start_chromium, stop_chromium

WHO = "chromium_page_lifecycle"
ROOM = "lifecycle"


def tile_of(tiles, name):
    return next((t for t in tiles or [] if t.get("identity") == name), None)


async def gone_within(tab, participant_id, seconds):
    """Seconds until `tab` has no tile of `participant_id`, or None."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        tiles = await tab.hook("tiles()") or []
        if all(t.get("participantId") != participant_id for t in tiles):
            return round(time.monotonic() - start, 2)
        await asyncio.sleep(0.05)
    return None


async def back_as(a, b, name, old_id, seconds):
    """B's form (no autojoin) has `name`; B joins with it (a new
    participant id) and A decodes B's tile, named `name`."""
    form_name = ""
    for _ in range(50):  # the form is filled once the page knows the server's mode
        try:
            form_name = await b.evaluate("window.swiftlet && window.swiftlet.state() === 'idle' ? "
                                         "document.getElementById('name').value : ''")
        except CDPError as error:
            # A's view of the leave can come before B's new document
            # commits: an evaluation sent to the old one is cut off by the
            # navigation. Ask the new one.
            if "navigated or closed" not in str(error):
                raise
        if form_name:
            break
        await asyncio.sleep(0.1)
    await b.hook("join()")
    await b.wait_for("state()", lambda s: s == "joined", seconds, "B joined again")
    new_id = await b.hook("participantId()")
    tile = await a.wait_for(
        "tiles()", lambda t: (tile_of(t, name) or {}).get("participantId") == new_id
        and (tile_of(t, name) or {}).get("framesDecoded", 0) > 0, seconds, f"A decoding {name} again")
    return {"oldId": old_id, "newId": new_id, "name": form_name, "tile": tile_of(tile, name)}


async def run(url, seconds):
    base = base_url(url)
    room_page = f"{base}/?{urllib.parse.urlencode({'room': ROOM, 'autojoin': '1'})}"
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        chromium = start_chromium(port, profile)
        try:
            async with contextlib.AsyncExitStack() as stack:
                # One at a time: both tabs share localStorage, and B's name
                # must be the one kept last.
                a = await open_tab(port, room_page + "&name=carol", WHO + "[a]", stack, first=True)
                await a.wait_for("state()", lambda s: s == "joined", 15, "A joined")
                b = await open_tab(port, room_page + "&name=dave", WHO + "[b]", stack)
                await b.wait_for("state()", lambda s: s == "joined", 15, "B joined")
                await a.wait_for("tiles()", lambda t: (tile_of(t, "dave") or {}).get("framesDecoded", 0) > 0,
                                 seconds, "A decoding dave")
                await b.wait_for("tiles()", lambda t: (tile_of(t, "carol") or {}).get("framesDecoded", 0) > 0,
                                 seconds, "B decoding carol")
                result = {"loadErrors": {"a": a.console_errors(), "b": b.console_errors()}}

                # B's video stops without a leave or a mute.
                await b.hook("sendVideo(false)")
                stopped = time.monotonic()
                stalled = await a.wait_for("tiles()", lambda t: (tile_of(t, "dave") or {}).get("reconnecting") is True,
                                           6, "A showing dave reconnecting")
                stall = {"after": round(time.monotonic() - stopped, 2), "tile": tile_of(stalled, "dave")}
                stall["screenshot"] = await a.screenshot(os.path.join(artifacts_dir(), "chromium_page_lifecycle.png"))
                await b.hook("sendVideo(true)")
                resumed = time.monotonic()
                cleared = await a.wait_for("tiles()", lambda t: (tile_of(t, "dave") or {}).get("reconnecting") is False,
                                           8, "A's dave tile live again")
                stall["clearedAfter"] = round(time.monotonic() - resumed, 2)
                stall["cleared"] = tile_of(cleared, "dave")
                result["stall"] = stall

                # B goes to the room page again, with no name in the URL.
                old_id = await b.hook("participantId()")
                await b.command("Page.navigate", {"url": f"{base}/?room={ROOM}"})
                navigated = {"goneAfter": await gone_within(a, old_id, 5)}
                navigated.update(await back_as(a, b, "dave", old_id, seconds))
                result["navigate"] = navigated

                # A real reload.
                old_id = await b.hook("participantId()")
                await b.command("Page.reload")
                reloaded = {"goneAfter": await gone_within(a, old_id, 5)}
                reloaded.update(await back_as(a, b, "dave", old_id, seconds))
                result["reload"] = reloaded

                # A call page loads without console errors too.
                c = await open_tab(port, f"{base}/call?autojoin=1&name=erin", WHO + "[call]", stack)
                await c.wait_for("state()", lambda s: s == "joined", 15, "the call page online")
                await asyncio.sleep(0.5)
                result["loadErrors"]["call"] = c.console_errors()
                result["loadErrors"]["bReloaded"] = b.console_errors()

                # B's tab is closed.
                old_id = await b.hook("participantId()")
                target = (await b.command("Target.getTargetInfo"))["targetInfo"]["targetId"]
                urllib.request.urlopen(f"http://127.0.0.1:{port}/json/close/{target}", timeout=5).close()
                result["close"] = {"goneAfter": await gone_within(a, old_id, 5)}
                result["loadErrors"]["aEnd"] = a.console_errors()
                return result
        finally:
            stop_chromium(chromium)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tokens", default="", help="ignored: the pages fetch dev tokens")
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    try:
        result = asyncio.run(asyncio.wait_for(run(args.url, args.seconds), 80))
    except BaseException as error:  # report, never hang
        result = {"errors": [repr(error)]}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
