"""Shared DevTools-protocol (CDP) plumbing for the capture scripts: find the
page target, send commands, evaluate JavaScript, and serve a blank page from
http://127.0.0.1 (a secure context, unlike about:blank). Talks only to
127.0.0.1."""
import asyncio
import http.server
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request

HOST = "127.0.0.1"


class CDPError(SystemExit):
    """A DevTools call failed; exits the capture script with the message."""


def page_websocket(port: int, who: str = "cdp", attempts: int = 100) -> str:
    """The DevTools WebSocket URL of Chromium's first page target, polling
    every 0.1 s while Chromium starts."""
    for _ in range(attempts):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=1) as r:
                for target in json.load(r):
                    if target.get("type") == "page":
                        return target["webSocketDebuggerUrl"]
        except OSError:
            pass
        time.sleep(0.1)
    raise CDPError(f"{who}: no DevTools page target")


async def command(ws, msg_id: int, method: str, params: dict, who: str = "cdp") -> dict:
    """Sends one CDP command and returns its result, skipping events and
    replies to other ids."""
    await ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
    while True:
        reply = json.loads(await ws.recv())
        if reply.get("id") == msg_id:
            if "error" in reply:
                raise CDPError(f"{who}: {method} failed: {reply['error']}")
            return reply.get("result", {})


async def evaluate(ws, msg_id: int, expression: str, who: str = "cdp"):
    """Evaluates `expression` in the page, awaiting a returned Promise, and
    returns the value (JSON-serialisable results only)."""
    await ws.send(json.dumps({"id": msg_id, "method": "Runtime.evaluate", "params": {
        "expression": expression, "awaitPromise": True, "returnByValue": True}}))
    while True:
        reply = json.loads(await ws.recv())
        if reply.get("id") != msg_id:
            continue
        result = reply.get("result", {})
        if "exceptionDetails" in result or "error" in reply:
            raise CDPError(f"{who}: evaluation failed: {json.dumps(reply)[:2000]}")
        return result["result"].get("value")


class BlankPage(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>capture</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve_blank_page() -> str:
    """Serves a blank page on 127.0.0.1 from a daemon thread and returns its
    URL. getUserMedia needs a secure context, which about:blank is not;
    http://127.0.0.1 is (a potentially trustworthy origin)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BlankPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


async def open_page(ws, page: str, first_id: int = 1000, who: str = "cdp") -> None:
    """Navigates the target to `page` and waits until it has loaded."""
    await command(ws, first_id, "Page.enable", {}, who)
    await command(ws, first_id + 1, "Page.navigate", {"url": page}, who)
    for _ in range(100):
        state = await evaluate(ws, first_id + 2, "document.readyState + ' ' + location.href", who)
        if state.startswith("complete") and page in state:
            return
        await asyncio.sleep(0.1)
    raise CDPError(f"{who}: {page} did not load")


def start_chromium(port: int, profile: str, extra_args: tuple = ()) -> subprocess.Popen:
    args = ["chromium", "--headless=new", "--no-sandbox", f"--remote-debugging-port={port}",
            "--remote-debugging-address=127.0.0.1",
            "--allow-loopback-in-peer-connection", "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream", f"--user-data-dir={profile}", *extra_args, "about:blank"]
    # A session of its own, so that stopping it also stops its helpers.
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def stop_chromium(process: subprocess.Popen) -> None:
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


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def chromium_version() -> str:
    try:
        out = subprocess.run(["chromium", "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.strip().splitlines()[0] if out.strip() else "unknown"


