"""Shared by the chromium_page_*.py scripts: one headless Chromium with
several tabs on swiftlet's own pages, each driven over the DevTools
protocol through the page's test hook `window.swiftlet` (docs/WEB_CLIENT.md).
Talks only to 127.0.0.1."""
import argparse
import asyncio
import base64
import json
import os
import sys
import urllib.parse
import urllib.request

import websockets

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "capture"))
from cdp import CDPError, page_websocket  # noqa: E402,F401

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def base_url(socket_url: str) -> str:
    """http://HOST:PORT from the room WebSocket's ws://HOST:PORT/rtc
    (https:// from wss://)."""
    parts = urllib.parse.urlsplit(socket_url)
    return f"{'https' if parts.scheme == 'wss' else 'http'}://{parts.netloc}"


def page_url(base: str, path: str, name: str, token: str | None, room: str | None = None,
             simulcast: bool = True, publish: bool = True, codec: str | None = None) -> str:
    """The page with a token in the fragment (never sent to the server),
    or, without one, dev mode: the page fetches a token itself.
    `publish=False` makes a subscribe-only page (`?publish=0`); `codec`
    ('h264') puts that video codec first in its offer (`?codec=`)."""
    flag = ("" if simulcast else "&simulcast=0") + ("" if publish else "&publish=0")
    flag += f"&codec={urllib.parse.quote(codec)}" if codec else ""
    if token:
        return f"{base}{path}?name={urllib.parse.quote(name)}{flag}#token={token}"
    query = {"name": name, "autojoin": "1"}
    if not simulcast:
        query["simulcast"] = "0"
    if not publish:
        query["publish"] = "0"
    if codec:
        query["codec"] = codec
    if room:
        query["room"] = room
    return f"{base}{path}?{urllib.parse.urlencode(query)}"


class Tab:
    """One page target and its DevTools WebSocket. Events that arrive
    while a command waits for its reply are kept (the last 2000) for
    `console_errors`."""

    def __init__(self, ws, who: str):
        self.ws = ws
        self.who = who
        self.next_id = 1
        self.events = []

    async def command(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        msg_id = self.next_id
        await self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        while True:
            reply = json.loads(await self.ws.recv())
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise CDPError(f"{self.who}: {method} failed: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)
                del self.events[:-2000]

    def console_errors(self) -> list[str]:
        """What the page's console showed as errors since the tab opened:
        console.error calls, uncaught exceptions, and browser log entries
        of level error (a failed request, a 404 favicon). Needs
        Runtime.enable and Log.enable, which `open_tabs` sends."""
        errors = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                errors.append("exception: " + str(details.get("exception", {}).get("description", details.get("text"))))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                errors.append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())
        return errors

    async def evaluate(self, expression: str):
        result = await self.command("Runtime.evaluate", {
            "expression": expression, "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in result:
            raise CDPError(f"{self.who}: evaluation of {expression[:80]!r} failed: "
                           f"{json.dumps(result['exceptionDetails'])[:1500]}")
        return result["result"].get("value")

    async def hook(self, call: str):
        """`window.swiftlet.<call>`, or None while the page has not loaded."""
        return await self.evaluate(f"window.swiftlet ? window.swiftlet.{call} : null")

    async def wait_for(self, call: str, predicate, seconds: float, what: str):
        value = None
        for _ in range(int(seconds * 5)):
            value = await self.hook(call)
            if predicate(value):
                return value
            await asyncio.sleep(0.2)
        media, log = await self.hook("media()"), await self.hook("log()")
        raise CDPError(f"{self.who}: timed out waiting for {what}; last {call}: {json.dumps(value)[:1500]}; "
                       f"media: {json.dumps(media)}; messages: {json.dumps(log)[:800]}")

    async def screenshot(self, path: str) -> str:
        shot = await self.command("Page.captureScreenshot", {"format": "png"})
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        return path


async def open_tab(port: int, url: str, who: str, stack, first: bool = False) -> Tab:
    """`url` in Chromium's first page target (`first`) or in a new tab,
    1280x800. `stack` (an AsyncExitStack) closes its DevTools socket."""
    if first:
        endpoint = page_websocket(port, who)
    else:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(request, timeout=5) as r:
            endpoint = json.load(r)["webSocketDebuggerUrl"]
    ws = await stack.enter_async_context(websockets.connect(endpoint, max_size=None))
    tab = Tab(ws, who)
    await tab.command("Page.enable")
    # Console messages and failed loads, for console_errors().
    await tab.command("Runtime.enable")
    await tab.command("Log.enable")
    await tab.command("Emulation.setDeviceMetricsOverride",
                      {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    # Background tabs must not be throttled: every tab renders and decodes.
    await tab.command("Emulation.setFocusEmulationEnabled", {"enabled": True})
    await tab.command("Page.navigate", {"url": url})
    return tab


async def open_tabs(port: int, urls: list[str], who: str, stack) -> list[Tab]:
    """The first URL in Chromium's first page target, the others in new
    tabs; every tab 1280x800. `stack` (an AsyncExitStack) closes them."""
    return [await open_tab(port, url, f"{who}[{index}]", stack, first=index == 0) for index, url in enumerate(urls)]


def artifacts_dir() -> str:
    return os.environ.get("SWIFTLET_ARTIFACTS", os.path.join(ROOT, ".build", "artifacts"))


def one_remote_tile_decoding(tiles) -> bool:
    """One remote tile decoding video."""
    return len(tiles or []) == 1 and all(t.get("framesDecoded", 0) > 0 and t.get("frameWidth", 0) > 0 for t in tiles)


def spki_pages_main(run) -> None:
    """The command line of the drivers whose pages trust the server's test
    certificate by its SPKI hash: --url --spki --tokens (JSON) [--seconds];
    prints run(url, tokens, spki, seconds)'s result as one JSON line, or the
    error (bounded at 50 s: never hang)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--spki", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    try:
        result = asyncio.run(asyncio.wait_for(run(args.url, json.loads(args.tokens), args.spki, args.seconds), 50))
    except BaseException as error:  # report, never hang
        result = {"errors": [repr(error)]}
    print(json.dumps(result), flush=True)
