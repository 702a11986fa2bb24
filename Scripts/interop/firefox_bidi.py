"""Drives Firefox ESR (Debian's `firefox-esr`) through its built-in WebDriver
BiDi agent: there is no geckodriver in Debian. Firefox starts headless with
`--remote-debugging-port` and a fresh profile whose user.js turns on fake
camera and microphone; BiDi is then a WebSocket at
ws://127.0.0.1:PORT/session (`session.new`, `browsingContext.create`,
`browsingContext.navigate`, `script.evaluate`). Results come back as JSON
text (the page-side expression is wrapped in JSON.stringify), so callers
get plain Python values. Talks only to 127.0.0.1.

  proc = start_firefox(port, profile_dir)
  async with FirefoxSession(port, who) as session:
      tab = await session.open_tab(url)
      value = await tab.evaluate("1 + 1")
  stop_firefox(proc)
"""
import asyncio
import json
import os
import signal
import subprocess

import websockets

# Fake media, no permission prompt, nothing that phones home or waits on a
# first-run page. `media.peerconnection.ice.loopback` does not make Firefox
# pair with 127.0.0.1 (FACTS.md): its tests run in a network namespace.
PREFS = {
    "media.navigator.streams.fake": True,
    "media.navigator.permission.disabled": True,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    # Background tabs keep rendering and decoding at full rate.
    "dom.min_background_timeout_value": 4,
    "dom.timeout.enable_budget_timer_throttling": False,
    "widget.windows.window_occlusion_tracking.enabled": False,
}


class BiDiError(SystemExit):
    """A BiDi command failed; exits the driver with the message."""


def start_firefox(port: int, profile: str, prefs: dict | None = None) -> subprocess.Popen:
    """Firefox ESR, headless, with a fresh profile in `profile` (an empty
    directory the caller owns). Its own session, so stopping it stops its
    content processes too."""
    with open(os.path.join(profile, "user.js"), "w") as f:
        for name, value in {**PREFS, **(prefs or {})}.items():
            f.write(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n")
    args = ["firefox-esr", "--headless", f"--remote-debugging-port={port}", "--profile", profile,
            "--no-remote", "about:blank"]
    env = {**os.environ, "MOZ_CRASHREPORTER_DISABLE": "1"}
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)


def stop_firefox(process: subprocess.Popen) -> None:
    for sig, wait_s in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        if process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait_s)
        except subprocess.TimeoutExpired:
            pass


def firefox_version() -> str:
    try:
        out = subprocess.run(["firefox-esr", "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.strip() or "unknown"


class FirefoxSession:
    """One BiDi session over one WebSocket. Replies are matched by id;
    events (log entries) are kept, the last 2000, for `console_errors`."""

    def __init__(self, port: int, who: str, connect_seconds: float = 30):
        self.port, self.who, self.connect_seconds = port, who, connect_seconds
        self.ws = None
        self.next_id = 0
        self.events = []
        self.replies = {}
        self.reader = None

    async def __aenter__(self):
        url = f"ws://127.0.0.1:{self.port}/session"
        for _ in range(int(self.connect_seconds * 5)):
            try:
                self.ws = await websockets.connect(url, max_size=None)
                break
            except (OSError, websockets.exceptions.InvalidStatus, websockets.exceptions.InvalidHandshake):
                await asyncio.sleep(0.2)
        if self.ws is None:
            raise BiDiError(f"{self.who}: no BiDi agent at {url}")
        self.reader = asyncio.create_task(self._read())
        await self.command("session.new", {"capabilities": {"alwaysMatch": {"acceptInsecureCerts": True}}})
        await self.command("session.subscribe", {"events": ["log.entryAdded"]})
        return self

    async def __aexit__(self, *exc):
        try:
            await asyncio.wait_for(self.command("session.end", {}), 3)
        except BaseException:
            pass
        if self.reader:
            self.reader.cancel()
        await self.ws.close()

    async def _read(self):
        async for text in self.ws:
            message = json.loads(text)
            if "id" in message and message["id"] in self.replies:
                self.replies.pop(message["id"]).set_result(message)
            elif message.get("type") == "event":
                self.events.append(message)
                del self.events[:-2000]

    async def command(self, method: str, params: dict) -> dict:
        self.next_id += 1
        reply = asyncio.get_running_loop().create_future()
        self.replies[self.next_id] = reply
        await self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        message = await asyncio.wait_for(reply, 30)
        if message.get("type") == "error":
            raise BiDiError(f"{self.who}: {method} failed: {message.get('error')}: {message.get('message')}")
        return message.get("result", {})

    async def open_tab(self, url: str, first: bool = False, width: int = 1280, height: int = 800):
        """`url` in the first tab (`first`) or a new one, `width`x`height`,
        once it has loaded."""
        if first:
            tree = await self.command("browsingContext.getTree", {})
            context = tree["contexts"][0]["context"]
        else:
            context = (await self.command("browsingContext.create", {"type": "tab"}))["context"]
        tab = FirefoxTab(self, context)
        await tab.set_viewport(width, height)
        await self.command("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
        return tab

    def console_errors(self) -> list[str]:
        """Log entries of level error: console.error calls and uncaught
        exceptions of every tab."""
        return [f"{e['params'].get('type')}: {e['params'].get('text')}" for e in self.events
                if e.get("method") == "log.entryAdded" and e["params"].get("level") == "error"]


class FirefoxTab:
    """One browsing context; the same `evaluate`/`hook`/`wait_for` as
    chromium_page.Tab, so the page scripts read alike."""

    def __init__(self, session: FirefoxSession, context: str):
        self.session, self.context, self.who = session, context, session.who

    async def set_viewport(self, width: int, height: int):
        await self.session.command("browsingContext.setViewport", {
            "context": self.context, "viewport": {"width": width, "height": height}})

    async def evaluate(self, expression: str):
        """`expression` in the page, a returned Promise awaited; the value
        goes through JSON (undefined becomes None)."""
        wrapped = f"(async () => {{ const v = await ({expression}); return v === undefined ? 'null' : JSON.stringify(v); }})()"
        result = await self.session.command("script.evaluate", {
            "expression": wrapped, "target": {"context": self.context}, "awaitPromise": True,
            "resultOwnership": "none"})
        if result.get("type") == "exception":
            details = result.get("exceptionDetails", {})
            raise BiDiError(f"{self.who}: evaluation of {expression[:80]!r} failed: {details.get('text')}")
        value = result.get("result", {})
        return json.loads(value["value"]) if value.get("type") == "string" else None

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
        raise BiDiError(f"{self.who}: timed out waiting for {what}; last {call}: {json.dumps(value)[:1500]}; "
                        f"media: {json.dumps(media)}; messages: {json.dumps(log)[:800]}")
