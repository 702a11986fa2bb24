"""Simulcast layer selection in headless Chromium (issue #5): one tab on
swiftlet's room page (`/`) publishes the fake camera at 1280x720 with three
simulcast layers (q 320, h 640, f 1280 wide); three subscribe-only tabs
(`?publish=0`) ask for low, medium and high with `set-preference` and must
receive frames 320, 640 and 1280 wide (getStats `frameWidth`) and keep
decoding. Then subscribers change their preference, one switch at a time:
each switch must change `frameWidth` within the limit while `framesDecoded`
keeps rising and `freezeCount` stays the same.

Switch latency is the time from the `set-preference` request (the call in
the page) to the first getStats sample, polled every 50 ms in the page,
whose `frameWidth` is the new layer's. The JSON has every switch, p50 and
p95, the freezes, the stream-state messages each subscriber got, how long
the first rise to each layer took, and the server's /metrics counters.
Prints one JSON line.

  .venv/bin/python Scripts/interop/chromium_simulcast.py --url ws://127.0.0.1:PORT/rtc \\
      --tokens '["tp","t1","t2","t3"]' [--switches 16] [--codec h264]

With --codec h264 the publisher's page puts H.264 first in its offer
(`?codec=h264`, setCodecPreferences): the same checks then run on H.264
simulcast, and `steady` names each subscriber's decoded codec.

Without --tokens the server must be in --dev mode: the pages fetch their
own tokens for room --room.
"""
import argparse
import asyncio
import contextlib
import json
import tempfile
import time

from chromium_page import CDPError, base_url, open_tabs, page_url
from cdp import chromium_version, free_tcp_port, start_chromium, stop_chromium
from server_metrics import metrics

WHO = "chromium_simulcast"
NAMES = ["publisher", "sub-low", "sub-medium", "sub-high"]
PREFERENCES = ["low", "medium", "high"]
WIDTHS = {"low": 320, "medium": 640, "high": 1280}

# Runs in a subscriber page: asks for `preference` and polls getStats every
# 50 ms until the publisher's video is `width` wide; then samples once more
# `settle` ms later (a freeze is counted only when the late frame arrives).
SWITCH_JS = """(async () => {
  const id = %(publisher)s, width = %(width)d, limit = %(limit)d, settle = %(settle)d;
  const sample = async () => (await window.swiftlet.inbound())[id] || null;
  const before = await sample();
  const t0 = performance.now();
  const sent = window.swiftlet.setPreference(id, %(preference)s);
  let reached = null, last = before, polls = 0;
  while (performance.now() - t0 < limit) {
    await new Promise((r) => setTimeout(r, 50));
    last = await sample();
    polls += 1;
    if (last && last.frameWidth === width) { reached = performance.now() - t0; break; }
  }
  const at = last;
  await new Promise((r) => setTimeout(r, settle));
  const after = await sample();
  return {sent, latencyMs: reached === null ? null : Math.round(reached), polls, before, at, after};
})()"""


def percentile(values, p):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


async def inbound(tab, publisher):
    return (await tab.hook("inbound()") or {}).get(publisher)


async def switch(tab, publisher, preference, limit_ms, settle_ms):
    expression = SWITCH_JS % {"publisher": json.dumps(publisher), "preference": json.dumps(preference),
                              "width": WIDTHS[preference], "limit": limit_ms, "settle": settle_ms}
    result = await tab.evaluate(expression)
    before, after = result.get("before") or {}, result.get("after") or {}
    return {
        "subscriber": tab.who, "to": preference, "width": WIDTHS[preference],
        "fromWidth": before.get("frameWidth"), "latencyMs": result.get("latencyMs"),
        "framesDecodedBefore": before.get("framesDecoded"), "framesDecodedAfter": after.get("framesDecoded"),
        "freezesBefore": before.get("freezeCount"), "freezesAfter": after.get("freezeCount"),
        "freezeSecondsBefore": before.get("totalFreezesDuration"),
        "freezeSecondsAfter": after.get("totalFreezesDuration"),
        "streamLayerAfter": after.get("streamLayer"),
    }


def switch_plan(count: int):
    """`count` switches, round robin over the subscribers: each toggles
    between where it started and a far layer (low<->high for the high
    subscriber, medium<->high, low<->high)."""
    away = {"low": "high", "medium": "high", "high": "low"}
    current = dict(zip(range(3), PREFERENCES))
    plan = []
    for n in range(count):
        i = n % 3
        home = PREFERENCES[i]
        target = away[home] if current[i] == home else home
        current[i] = target
        plan.append((i, target))
    return plan


async def run(url, tokens, room, switches, rise_seconds, limit_ms, settle_ms, codec=None):
    base = base_url(url)
    started = time.monotonic()
    urls = [page_url(base, "/", name, tokens[i] if tokens else None, room, simulcast=True, publish=(i == 0),
                     codec=codec if i == 0 else None)
            for i, name in enumerate(NAMES)]
    port = free_tcp_port()
    with tempfile.TemporaryDirectory() as profile:
        chromium = start_chromium(port, profile)
        try:
            async with contextlib.AsyncExitStack() as stack:
                tabs = await open_tabs(port, urls, WHO, stack)
                for tab in tabs:
                    await tab.wait_for("state()", lambda s: s == "joined", 15, "joined")
                publisher = await tabs[0].hook("participantId()")
                subscribers = tabs[1:]
                for tab, name in zip(subscribers, NAMES[1:]):
                    tab.who = name
                for tab in subscribers:
                    await tab.wait_for("inbound()", lambda v: (v or {}).get(publisher, {}).get("framesDecoded", 0) > 0,
                                       20, "the publisher's video decoding")
                joined_s = time.monotonic() - started

                # Each subscriber asks for its layer; time until it arrives.
                asked = time.monotonic()
                for tab, preference in zip(subscribers, PREFERENCES):
                    await tab.wait_for(f"setPreference({json.dumps(publisher)}, {json.dumps(preference)})",
                                       lambda sent: sent is True, 5, "a video tile to set the preference on")
                rise = {}
                pending = dict(zip(PREFERENCES, subscribers))
                last = {}
                while pending and time.monotonic() - asked < rise_seconds:
                    for preference, tab in list(pending.items()):
                        last[preference] = await inbound(tab, publisher)
                        if (last[preference] or {}).get("frameWidth") == WIDTHS[preference]:
                            rise[preference] = round(time.monotonic() - asked, 2)
                            del pending[preference]
                    await asyncio.sleep(0.1)

                publisher_at_rise = await tabs[0].hook("outbound()")

                # Steady state: every subscriber decodes at its layer, no freezes.
                first = {p: await inbound(t, publisher) for p, t in zip(PREFERENCES, subscribers)}
                await asyncio.sleep(2)
                second = {p: await inbound(t, publisher) for p, t in zip(PREFERENCES, subscribers)}
                steady = {p: {
                    "frameWidth": (second[p] or {}).get("frameWidth"),
                    "frameHeight": (second[p] or {}).get("frameHeight"),
                    "codec": (second[p] or {}).get("codec"),
                    "framesRising": (second[p] or {}).get("framesDecoded", 0) > (first[p] or {}).get("framesDecoded", 0),
                    "newFreezes": (second[p] or {}).get("freezeCount", 0) - (first[p] or {}).get("freezeCount", 0),
                    "streamLayer": (second[p] or {}).get("streamLayer"),
                    "reason": (second[p] or {}).get("reason"),
                } for p in PREFERENCES}
                steady_s = time.monotonic() - started

                done = []
                if not pending:
                    for i, preference in switch_plan(switches):
                        done.append(await switch(subscribers[i], publisher, preference, limit_ms, settle_ms))
                latencies = [s["latencyMs"] for s in done if s["latencyMs"] is not None]
                freezes = sum((s["freezesAfter"] or 0) - (s["freezesBefore"] or 0) for s in done)
                pages = []
                for tab in subscribers:
                    stats = await inbound(tab, publisher)
                    pages.append({"name": tab.who, "inbound": stats, "streamStates": await tab.hook("streamStates()"),
                                  "log": (await tab.hook("log()") or [])[-30:]})
                publisher_log = [t for t in (await tabs[0].hook("log()") or []) if t == "publisher-layers"]
                return {
                    "chromium": chromium_version(),
                    "publisher": publisher,
                    "joinedSeconds": round(joined_s, 1),
                    "riseSeconds": rise,
                    "publisherAtRise": publisher_at_rise,
                    "publisherAtEnd": await tabs[0].hook("outbound()"),
                    "notReached": {p: {"frameWidth": (last.get(p) or {}).get("frameWidth"),
                                       "streamLayer": (last.get(p) or {}).get("streamLayer"),
                                       "reason": (last.get(p) or {}).get("reason")} for p in pending},
                    "steady": steady,
                    "steadySeconds": round(steady_s, 1),
                    "switches": done,
                    "switchLatencyMs": {"count": len(latencies), "missed": len(done) - len(latencies),
                                        "p50": percentile(latencies, 50) if latencies else None,
                                        "p95": percentile(latencies, 95) if latencies else None,
                                        "max": max(latencies) if latencies else None},
                    "freezes": freezes,
                    "publisherLayersMessages": len(publisher_log),
                    "pages": pages,
                    "metrics": metrics(base),
                    "seconds": round(time.monotonic() - started, 1),
                }
        finally:
            stop_chromium(chromium)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tokens", default="", help="JSON list: publisher, then the low, medium, high subscribers")
    parser.add_argument("--room", default="simulcast")
    parser.add_argument("--switches", type=int, default=2)
    parser.add_argument("--rise-seconds", type=float, default=30.0,
                        help="how long the subscribers may take to reach their first layers")
    parser.add_argument("--limit-ms", type=int, default=2000, help="a switch slower than this is missed")
    parser.add_argument("--settle-ms", type=int, default=1000, help="sampled this long after a switch")
    parser.add_argument("--codec", default=None, help="the publisher's video codec, first in its offer (h264)")
    parser.add_argument("--deadline", type=float, default=56.0)
    args = parser.parse_args()
    tokens = json.loads(args.tokens) if args.tokens else None
    try:
        result = asyncio.run(asyncio.wait_for(
            run(args.url, tokens, args.room, args.switches, args.rise_seconds, args.limit_ms, args.settle_ms,
                args.codec),
            args.deadline))
    except BaseException as error:  # report, never hang
        result = {"errors": [repr(error)]}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
