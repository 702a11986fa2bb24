"""Drives swiftlet's room WebSocket (/rtc) with Python's `websockets`, an
independent RFC 6455 implementation, and prints one JSON line of results.

  .venv/bin/python Scripts/interop/signaling_client.py --url ws://127.0.0.1:PORT/rtc --tokens '{"alice": "...", ...}'

Scenarios (each bounded in time): a mesh room relays signals between its
members; a one-to-one call rings, is answered, moves both into a private
room and ends on hangup; calling yourself is a typed error; a bad token is
refused; an oversized message closes the connection with 1009; a close with
1000 or 1001 is a leave (the others hear participant-left at once), while a
dropped TCP connection or another close code keeps the participant for the
grace period (a rejoin resumes it).
"""
import argparse
import asyncio
import json
import sys
import time

import websockets

TIMEOUT = 5


async def recv_type(ws, wanted):
    """Next message of type `wanted`, skipping others."""
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
        if message["type"] == wanted:
            return message


async def join(url, token, mode=None):
    ws = await websockets.connect(url, max_size=None)
    message = {"type": "join", "token": token}
    if mode:
        message["mode"] = mode
    await ws.send(json.dumps(message))
    joined = await recv_type(ws, "joined")
    return ws, joined


async def mesh(url, tokens, results):
    alice, a = await join(url, tokens["alice"], mode="mesh")
    bob, b = await join(url, tokens["bob"])
    results["mesh_mode"] = a["mode"] == "mesh" and b["mode"] == "mesh"
    results["mesh_bob_sees_alice"] = [p["id"] for p in b["participants"]] == [a["participantId"]]
    seen = await recv_type(alice, "participant-joined")
    results["mesh_alice_sees_bob"] = seen["participant"]["id"] == b["participantId"]
    # The server reads a mesh offer's directions against the grants: a
    # real (if minimal) SDP.
    sdp = "\r\n".join(["v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0", "m=audio 9 UDP/TLS/RTP/SAVPF 111",
                       "c=IN IP4 0.0.0.0", "a=mid:0", "a=sendrecv", "a=rtpmap:111 opus/48000/2", ""])
    offer = {"type": "offer", "sdp": sdp}
    await alice.send(json.dumps({"type": "mesh-signal", "to": b["participantId"], "payload": offer}))
    relayed = await recv_type(bob, "mesh-signal")
    results["mesh_relay"] = relayed["from"] == a["participantId"] and relayed["payload"] == offer
    await bob.send(json.dumps({"type": "leave"}))
    left = await recv_type(alice, "participant-left")
    results["mesh_leave"] = left["participantId"] == b["participantId"]
    await alice.close()
    await bob.close()


async def call(url, tokens, results):
    carol, c = await join(url, tokens["carol"])
    dave, d = await join(url, tokens["dave"])
    await carol.send(json.dumps({"type": "call", "to": d["participantId"]}))
    ring = await recv_type(dave, "incoming-call")
    results["call_rings"] = ring["from"] == c["participantId"] and ring["identity"] == "carol"
    await dave.send(json.dumps({"type": "answer-call", "callId": ring["callId"]}))
    started_c = await recv_type(carol, "call-started")
    started_d = await recv_type(dave, "call-started")
    results["call_started"] = (started_c["room"] == started_d["room"] and started_c["peer"] == d["participantId"]
                               and started_d["peer"] == c["participantId"])
    await carol.send(json.dumps({"type": "hangup", "callId": ring["callId"]}))
    ended = await recv_type(dave, "call-ended")
    results["call_ended"] = ended["reason"] == "hangup"
    await carol.send(json.dumps({"type": "call", "to": "PA_nobody"}))
    error = await recv_type(carol, "error")
    results["call_unknown_is_error"] = error["code"] == "unknown_participant"
    await carol.send(json.dumps({"type": "call", "to": c["participantId"]}))
    error = await recv_type(carol, "error")
    results["call_self_is_error"] = error["code"] == "cannot_call_self"
    await carol.close()
    await dave.close()


async def close_codes(url, tokens, results):
    """Erin watches Frank go: closes with 1000 and 1001 are leaves, heard
    within a second; a dropped TCP connection and a close with 4000 are
    not (nothing within 1.5 s), and the rejoin resumes Frank."""
    erin, _ = await join(url, tokens["erin"])
    for code in (1000, 1001):
        frank, f = await join(url, tokens["frank"])
        await recv_type(erin, "participant-joined")
        started = time.monotonic()
        await frank.close(code=code)
        left = await recv_type(erin, "participant-left")
        results[f"close_{code}_leaves"] = left["participantId"] == f["participantId"] and time.monotonic() - started < 1.0
    for label, end in (("tcp_drop_resumes", lambda ws: ws.transport.abort()),
                       ("close_4000_resumes", lambda ws: ws.close(code=4000))):
        frank, f = await join(url, tokens["frank"])
        await recv_type(erin, "participant-joined")
        ended = end(frank)
        if ended is not None:
            await ended
        try:
            await asyncio.wait_for(recv_type(erin, "participant-left"), 1.5)
            stayed = False
        except asyncio.TimeoutError:
            stayed = True
        again, back = await join(url, tokens["frank"])
        results[label] = stayed and back["resumed"] is True and back["participantId"] == f["participantId"]
        await again.send(json.dumps({"type": "leave"}))
        await recv_type(erin, "participant-left")
        await again.close()
    await erin.close()


async def server_close_echo(url, tokens, results):
    """The server closes a silent connection with 1001 (its WebSocket
    timeout, which the caller sets short): that is not the client going
    away, so the participant keeps its grace period and the rejoin resumes
    it."""
    ws, joined = await join(url, tokens["gina"])
    await asyncio.wait_for(ws.wait_closed(), TIMEOUT)
    results["server_closed_1001"] = ws.protocol.close_rcvd is not None and ws.protocol.close_rcvd.code == 1001
    again, back = await join(url, tokens["gina"])
    results["echo_keeps_grace"] = back["resumed"] is True and back["participantId"] == joined["participantId"]
    await again.close()


async def bad_token(url, results):
    ws = await websockets.connect(url)
    await ws.send(json.dumps({"type": "join", "token": "e30.e30.e30"}))
    error = await recv_type(ws, "error")
    results["bad_token_refused"] = error["code"] == "forbidden"
    await ws.send("not json")
    error = await recv_type(ws, "error")
    results["bad_json_is_error"] = error["code"] == "bad_request"
    await ws.close()


async def oversized(url, results):
    ws = await websockets.connect(url, max_size=None)
    await ws.send("x" * (1024 * 1024 + 1))
    try:
        await asyncio.wait_for(ws.recv(), TIMEOUT)
        results["oversized_closes_1009"] = False
    except websockets.ConnectionClosed as closed:
        results["oversized_closes_1009"] = closed.rcvd is not None and closed.rcvd.code == 1009


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--tokens", required=True)
    # Only the server-close scenario, against a server whose WebSocket
    # timeout is short (the others need the default timeouts).
    parser.add_argument("--server-close", action="store_true")
    args = parser.parse_args()
    tokens = json.loads(args.tokens)
    results = {}
    if args.server_close:
        try:
            await asyncio.wait_for(server_close_echo(args.url, tokens, results), 20)
        except Exception as error:  # report, do not hang
            results.setdefault("errors", []).append(repr(error))
        print(json.dumps(results), flush=True)
        return
    for scenario in (lambda: mesh(args.url, tokens, results), lambda: call(args.url, tokens, results),
                     lambda: close_codes(args.url, tokens, results),
                     lambda: bad_token(args.url, results), lambda: oversized(args.url, results)):
        try:
            await asyncio.wait_for(scenario(), 20)
        except Exception as error:  # report, do not hang
            results.setdefault("errors", []).append(repr(error))
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
