"""Two headless Chromium tabs join one room through swiftlet's room page
served over HTTPS, its WebSocket over WSS: Chromium trusts the server's
test certificate only through `--ignore-certificate-errors-spki-list`
with the certificate's SPKI hash (as `swiftlet serve --dev --tls` prints
it). Each tab must be a secure context on https:, join, and decode the
other's video. Prints one JSON line.

  .venv/bin/python Scripts/interop/chromium_page_https.py --url wss://localhost:PORT/rtc --spki HASH --tokens '["t1","t2"]'
"""
import asyncio
import contextlib
import tempfile

from chromium_page import base_url, one_remote_tile_decoding, spki_pages_main, open_tabs, page_url
from cdp import free_tcp_port, start_chromium, stop_chromium

WHO = "chromium_page_https"
NAMES = ["alice", "bob"]


decoding = one_remote_tile_decoding


async def run(url, tokens, spki, seconds):
    base = base_url(url)
    urls = [page_url(base, "/", name, tokens[i]) for i, name in enumerate(NAMES)]
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        chromium = start_chromium(port, profile, (f"--ignore-certificate-errors-spki-list={spki}",))
        try:
            async with contextlib.AsyncExitStack() as stack:
                tabs = await open_tabs(port, urls, WHO, stack)
                pages = []
                for tab in tabs:
                    await tab.wait_for("state()", lambda s: s == "joined", 20, "joined")
                for tab in tabs:
                    tiles = await tab.wait_for("tiles()", decoding, seconds, "a decoding remote tile")
                    pages.append({
                        "protocol": await tab.evaluate("location.protocol"),
                        "secureContext": await tab.evaluate("window.isSecureContext"),
                        "participantId": await tab.hook("participantId()"),
                        "tiles": tiles,
                    })
                return {"pages": pages}
        finally:
            stop_chromium(chromium)


if __name__ == "__main__":
    spki_pages_main(run)
