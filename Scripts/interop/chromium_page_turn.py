"""Two headless Chromium tabs join one room through swiftlet's room page
with `?relay=tls`: the page keeps only the `turns:` server of the join
response's `iceServers` and sets iceTransportPolicy "relay", so every
packet goes through swiftlet's built-in TURN over TLS. Chromium trusts
the TURN server's test certificate only through its SPKI hash. Each tab
must decode the other's video; the selected candidate pairs of both
connections are reported (getStats). Then the connectivity check page
(/check) runs in a third tab and reports which transports reached the
TURN server. Prints one JSON line.

  .venv/bin/python Scripts/interop/chromium_page_turn.py --url ws://127.0.0.1:PORT/rtc --spki HASH --tokens '["t1","t2"]'
"""
import asyncio
import contextlib
import json
import tempfile

from chromium_page import base_url, one_remote_tile_decoding, spki_pages_main, open_tab, open_tabs, page_url
from cdp import free_tcp_port, start_chromium, stop_chromium

WHO = "chromium_page_turn"
NAMES = ["alice", "bob"]


decoding = one_remote_tile_decoding


def relayed(pairs) -> bool:
    return bool(pairs) and all(name in pairs for name in ("publisher", "subscriber"))


async def check_results(tab, seconds):
    """The check page's results once all three transports are decided."""
    results = None
    for _ in range(int(seconds * 5)):
        results = await tab.evaluate("window.swiftletCheck ? window.swiftletCheck.results() : null")
        if isinstance(results, dict) and len(results) == 3 and all(r.get("ok") is not None for r in results.values()):
            return results
        await asyncio.sleep(0.2)
    message = await tab.evaluate("document.getElementById('message').textContent")
    raise RuntimeError(f"the connectivity check did not finish; last: {json.dumps(results)}; message: {message}")


async def run(url, tokens, spki, seconds):
    base = base_url(url)
    urls = [page_url(base, "/", name, tokens[i]).replace("#", "&relay=tls#", 1) for i, name in enumerate(NAMES)]
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
                    pairs = await tab.wait_for("selectedPairs()", relayed, 10, "selected candidate pairs")
                    pages.append({"tiles": tiles, "pairs": pairs})
                check = await open_tab(port, f"{base}/check#token={tokens[0]}", f"{WHO}[check]", stack)
                return {"pages": pages, "check": await check_results(check, 15)}
        finally:
            stop_chromium(chromium)


if __name__ == "__main__":
    spki_pages_main(run)
