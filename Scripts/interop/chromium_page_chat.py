"""The room page's chat box over data channels, in two headless Chromium
tabs: each joins (publishing its fake camera and microphone, which opens
the "chat" data channel on its publisher connection), sends one line,
and must show the other's line with the sender's name the server
attached. Then each opens an unordered channel without retransmissions
("state") and sends ten messages the other must get. Prints one JSON
line.

  .venv/bin/python Scripts/interop/chromium_page_chat.py --url ws://127.0.0.1:PORT/rtc --tokens '["t1","t2"]'
"""
import argparse
import asyncio
import contextlib
import json
import tempfile

from chromium_page import base_url, open_tabs, page_url
from cdp import free_tcp_port, start_chromium, stop_chromium

WHO = "chromium_page_chat"
NAMES = ["dana", "eli"]


async def run(url, tokens, room):
    base = base_url(url)
    urls = [page_url(base, "/", name, tokens[i], room, False) for i, name in enumerate(NAMES)]
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        chromium = start_chromium(port, profile)
        try:
            async with contextlib.AsyncExitStack() as stack:
                tabs = await open_tabs(port, urls, WHO, stack)
                for tab in tabs:
                    await tab.wait_for("state()", lambda s: s == "joined", 15, "joined")
                # sendChat sends only once the channel is open (true).
                for i, tab in enumerate(tabs):
                    await tab.wait_for(f"sendChat('hello from {NAMES[i]}')", lambda sent: sent is True, 15,
                                       "the chat channel open")
                chats = []
                for i, tab in enumerate(tabs):
                    other = NAMES[1 - i]
                    chats.append(await tab.wait_for(
                        "chat()", lambda c: any(e.get("from") == other for e in c or []), 10,
                        f"a line from {other}"))
                # An unordered channel without retransmissions, opened
                # after the fact (DCEP over the running association).
                for tab in tabs:
                    await tab.hook("openDataChannel('state', {ordered: false, maxRetransmits: 0})")
                for i, tab in enumerate(tabs):
                    await tab.wait_for(f"sendData('state', 'first from {NAMES[i]}')", lambda sent: sent is True, 10,
                                       "the state channel open")
                    for n in range(1, 10):
                        await tab.hook(f"sendData('state', '{n} from {NAMES[i]}')")
                unordered = []
                for i, tab in enumerate(tabs):
                    other = NAMES[1 - i]
                    unordered.append(await tab.wait_for(
                        "dataMessages('state')", lambda m: len([x for x in m or [] if x[0] == other]) >= 10, 10,
                        f"ten unordered messages from {other}"))
                return {"chats": chats, "unordered": unordered}
        finally:
            stop_chromium(chromium)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--room", default="page-chat")
    args = parser.parse_args()
    try:
        result = asyncio.run(asyncio.wait_for(run(args.url, json.loads(args.tokens), args.room), 50))
    except BaseException as error:  # report, never hang
        result = {"errors": [repr(error)]}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
