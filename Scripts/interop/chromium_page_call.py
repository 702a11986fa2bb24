"""Two headless Chromium tabs on swiftlet's call page (`/call`): A is
refused calling itself (by id and by name), with a clear message. A
clicks B's tile in the lobby and cancels while it rings (A sees "Ringing
bob…" with Cancel; B sees "Incoming call from alice", and its dialog
closes on call-ended "cancelled"). Then A calls B's participant id, B
answers, both must decode each other's video (three simulcast layers),
each names the other; A hangs up and both see the call end. Then A calls
B by name and B declines: A sees the decline. PNG screenshots of A's
lobby and of A during the call are saved (paths in the result). Prints
one JSON line.

  .venv/bin/python Scripts/interop/chromium_page_call.py --url ws://127.0.0.1:PORT/rtc --tokens '["t1","t2"]'

Without --tokens the server must be in --dev mode.
"""
import argparse
import asyncio
import contextlib
import json
import os
import tempfile

from chromium_page import artifacts_dir, base_url, open_tabs, page_url
from cdp import free_tcp_port, start_chromium, stop_chromium

WHO = "chromium_page_call"


def decoding(tiles) -> bool:
    return len(tiles or []) == 1 and tiles[0].get("framesDecoded", 0) > 0 and tiles[0].get("frameWidth", 0) > 0


def state(s):
    return lambda c: c is not None and c.get("state") == s


async def run(url, tokens, seconds, simulcast):
    base = base_url(url)
    urls = [page_url(base, "/call", name, tokens[i] if tokens else None, simulcast=simulcast) for i, name in enumerate(["alice", "bob"])]
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        chromium = start_chromium(port, profile)
        try:
            async with contextlib.AsyncExitStack() as stack:
                a, b = await open_tabs(port, urls, WHO, stack)
                for tab in (a, b):
                    await tab.wait_for("state()", lambda s: s == "joined", 15, "online")
                a_id, b_id = await a.hook("participantId()"), await b.hook("participantId()")
                lobby = {"ownName": await a.hook("ownName()")}
                lobby["tiles"] = await a.wait_for("tiles()", lambda t: [x.get("identity") for x in t or []] == ["bob"],
                                                  10, "bob's tile in A's lobby")
                lobby["screenshot"] = await a.screenshot(os.path.join(artifacts_dir(), "chromium_page_call_lobby.png"))

                # Calling yourself is refused, by id and by name.
                self_call = {"byId": await a.hook(f"dial({json.dumps(a_id)})"), "message": await a.hook("message()"),
                             "call": await a.hook("call()"), "byName": await a.hook("dial('alice')")}

                # A clicks B's tile and cancels the ringing call: call-ringing
                # gives A the call id.
                centre = await a.hook("tileCentre('bob')")
                for kind in ("mousePressed", "mouseReleased"):
                    await a.command("Input.dispatchMouseEvent", {"type": kind, "x": centre["x"], "y": centre["y"],
                                                                 "button": "left", "clickCount": 1})
                ringing = await a.wait_for("call()", lambda c: c is not None and c.get("state") == "ringing-out"
                                           and (c.get("id") or "").startswith("CA_"), 10, "call-ringing at A")
                ringing_text = await a.hook("ringingText()")
                rung = await b.wait_for("call()", state("ringing-in"), 10, "the incoming call to cancel")
                shown = await b.hook("incomingVisible()")
                caller_text = await b.hook("callerText()")
                await a.hook("cancel()")
                a_cancelled = await a.wait_for("call()", state("ended"), 10, "the cancel at A")
                b_cancelled = await b.wait_for("call()", lambda c: c is not None and c.get("state") == "ended"
                                               and c.get("reason") == "cancelled", 10, "call-ended cancelled at B")
                cancel = {"ringing": ringing, "ringingText": ringing_text, "incoming": rung, "incomingShown": shown,
                          "callerText": caller_text,
                          "a": a_cancelled, "b": b_cancelled, "incomingHidden": not await b.hook("incomingVisible()"),
                          "sameCall": ringing.get("id") == rung.get("id")}

                await a.hook(f"dial({json.dumps(b_id)})")
                incoming = await b.wait_for("call()", state("ringing-in"), 10, "the incoming call")
                await b.hook("answer()")
                await a.wait_for("call()", state("in-call"), 10, "call-started at A")
                await b.wait_for("call()", state("in-call"), 10, "call-started at B")
                a_tiles = await a.wait_for("tiles()", decoding, seconds, "A decoding B")
                b_tiles = await b.wait_for("tiles()", decoding, seconds, "B decoding A")
                # The overlay has a bitrate sample before the screenshot.
                await a.wait_for("tiles()", lambda t: decoding(t) and t[0].get("bitrateKbps", 0) > 0, 5, "A's overlay bitrate")
                in_call = {"a": await a.hook("ringingText()"), "b": await b.hook("ringingText()")}
                screenshot = await a.screenshot(os.path.join(artifacts_dir(), "chromium_page_call.png"))

                await a.hook("hangup()")
                a_end = await a.wait_for("call()", state("ended"), 10, "the end at A")
                b_end = await b.wait_for("call()", state("ended"), 10, "call-ended at B")
                # Both are back online in the lobby, with their ids.
                await a.wait_for("state()", lambda s: s == "joined", 10, "A online again")
                await b.wait_for("participantId()", lambda p: p == b_id, 10, "B online again")

                await a.hook("dial('bob')")
                await b.wait_for("call()", state("ringing-in"), 10, "the second incoming call")
                await b.hook("decline()")
                declined = await a.wait_for("call()", state("declined"), 10, "call-declined at A")
                return {
                    # Token mode (the pages get no dev tokens): nothing in
                    # either console, from the first load to the decline.
                    "consoleErrors": a.console_errors() + b.console_errors(),
                    "ids": [a_id, b_id],
                    "lobby": lobby,
                    "self": self_call,
                    "inCall": in_call,
                    "cancel": cancel,
                    "incoming": incoming,
                    "a": {"tiles": a_tiles, "end": a_end},
                    "b": {"tiles": b_tiles, "end": b_end},
                    "declined": declined,
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
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    tokens = json.loads(args.tokens) if args.tokens else None
    try:
        result = asyncio.run(asyncio.wait_for(run(args.url, tokens, args.seconds, not args.one_layer), 55))
    except BaseException as error:  # report, never hang
        result = {"errors": [repr(error)]}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
