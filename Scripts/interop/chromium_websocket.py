"""Chromium's own WebSocket client against swiftlet's room WebSocket: a
headless Chromium page opens ws://127.0.0.1:PORT/rtc, joins with a token,
pings, leaves, and closes. Prints one JSON line with what the page saw.

  .venv/bin/python Scripts/interop/chromium_websocket.py --url ws://127.0.0.1:PORT/rtc --token TOKEN
"""
import argparse
import asyncio
import json
import os
import sys
import tempfile

import websockets

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "capture"))
from cdp import evaluate, free_tcp_port, open_page, page_websocket, serve_blank_page, start_chromium, stop_chromium  # noqa: E402

WHO = "chromium_websocket"

PAGE_JS = """
(async () => {
  const seen = [];
  const ws = new WebSocket(%(url)s);
  const next = () => new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timeout')), 5000);
    ws.onmessage = (e) => { clearTimeout(t); resolve(JSON.parse(e.data)); };
  });
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error('ws error')); });
  ws.send(JSON.stringify({type: 'join', token: %(token)s}));
  const joined = await next();
  seen.push(joined.type);
  ws.send(JSON.stringify({type: 'ping'}));
  seen.push((await next()).type);
  ws.send('{"type": "nonsense"}');
  const error = await next();
  seen.push(error.type + ':' + error.code);
  ws.send(JSON.stringify({type: 'leave'}));
  const closed = new Promise((resolve) => { ws.onclose = (e) => resolve(e.code); });
  ws.close(1000, 'done');
  const code = await closed;
  return {seen, room: joined.room, participantId: joined.participantId, closeCode: code};
})()
"""


async def run(url, token):
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        chromium = start_chromium(port, profile)
        try:
            async with websockets.connect(page_websocket(port, WHO), max_size=None) as devtools:
                await open_page(devtools, serve_blank_page(), who=WHO)
                js = PAGE_JS % {"url": json.dumps(url), "token": json.dumps(token)}
                return await evaluate(devtools, 1, js, WHO)
        finally:
            stop_chromium(chromium)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    args = parser.parse_args()
    try:
        result = asyncio.run(asyncio.wait_for(run(args.url, args.token), 40))
    except BaseException as error:  # report, never hang
        result = {"error": repr(error)}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
