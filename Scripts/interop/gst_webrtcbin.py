"""GStreamer's webrtcbin (1.22, Debian) as a WHIP publisher and WHEP player.

Runs with the SYSTEM python3 (python3-gst-1.0 gives it `gi`), not .venv:

  /usr/bin/python3 Scripts/interop/gst_webrtcbin.py publish --base http://127.0.0.1:8080 --room r \
      --codec vp8|h264 --bundle-policy max-bundle|max-compat|none [--seconds 3]
  /usr/bin/python3 Scripts/interop/gst_webrtcbin.py play --base ... --room r --codec vp8|h264 [--seconds 3]
  /usr/bin/python3 Scripts/interop/gst_webrtcbin.py pair --base ... --codec ... --bundle-policy ...
  /usr/bin/python3 Scripts/interop/gst_webrtcbin.py offers --codec ... --bundle-policy ... [--out DIR]
  /usr/bin/python3 Scripts/interop/gst_webrtcbin.py check

`publish` sends videotestsrc (VP8, or H.264 constrained baseline 42e01f
with packetization-mode 1) and an Opus tone through webrtcbin to
POST /whip/{room}; `play` offers recvonly audio and video to
POST /whep/{room}, decodes with decodebin and counts decoded video frames.
`pair` does both in one process (one room; the player joins once the
publisher has sent for a second, so its first frame depends on our PLI):
time to first frame, frames, width and height. `offers` prints the
offers only (fixture capture, no server; with --out, every fixture of
FIXTURES); `check` names the elements this machine lacks. Tokens come from the dev
server's /dev/token. Non-trickle: each offer is POSTed once ICE gathering
is complete (webrtcbin then has its candidates in the SDP). One JSON line
on stdout; every wait is bounded; libnice gathers no loopback candidate,
so the tests run this inside a network namespace (BrowserNamespace).
"""
import argparse
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstSdp", "1.0")
gi.require_version("GstWebRTC", "1.0")
from gi.repository import Gst, GstSdp, GstWebRTC  # noqa: E402

POLICIES = {
    "max-bundle": GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE,
    "max-compat": GstWebRTC.WebRTCBundlePolicy.MAX_COMPAT,
    "none": GstWebRTC.WebRTCBundlePolicy.NONE,
}

VIDEO = {
    "vp8": ("vp8enc deadline=1 cpu-used=8 keyframe-max-dist=3000 target-bitrate=300000 ! rtpvp8pay pt=96 "
            "! application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000"),
    # Constrained baseline level 3.1 with packetization-mode 1, the profile
    # every browser decodes. rtph264pay writes profile-level-id from the
    # SPS: x264 sets constraint_set0 and 1, not 2, so it says 42c01f, the
    # same profile as libwebrtc's 42e01f (RFC 6184 Table 5); a capsfilter
    # asking for 42e01f would not link. Its caps become the offer's fmtp.
    "h264": ("x264enc tune=zerolatency speed-preset=ultrafast key-int-max=3000 bitrate=300 "
             "! video/x-h264,profile=constrained-baseline,level=(string)3.1 ! h264parse "
             "! rtph264pay pt=102 config-interval=-1 aggregate-mode=zero-latency "
             "! application/x-rtp,media=video,encoding-name=H264,payload=102,clock-rate=90000,"
             "packetization-mode=(string)1"),
}
RECV_VIDEO = {
    "vp8": "application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000",
    "h264": ("application/x-rtp,media=video,encoding-name=H264,payload=102,clock-rate=90000,"
             "packetization-mode=(string)1,profile-level-id=(string)42e01f"),
}
# encoding-params 2: RFC 7587 section 7 writes Opus as opus/48000/2.
RECV_AUDIO = "application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000,encoding-params=(string)2"


def http(method, url, body=None, headers=None):
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def dev_token(base, room, identity):
    """A token from the dev server, waiting (at most 5 s) for it to listen."""
    query = urllib.parse.urlencode({"room": room, "identity": identity})
    deadline = time.monotonic() + 5
    while True:
        try:
            status, _, body = http("GET", f"{base}/dev/token?{query}")
            break
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    if status != 200:
        raise RuntimeError(f"/dev/token {status}: {body}")
    return json.loads(body)["token"]


def sections(sdp):
    """Per m-section: media, port, mid, bundle-only, has a fingerprint."""
    out = []
    for line in sdp.splitlines():
        if line.startswith("m="):
            parts = line[2:].split()
            out.append({"media": parts[0], "port": int(parts[1]), "mid": None, "bundleOnly": False,
                        "fingerprint": False, "ufrag": None})
        elif out:
            if line.startswith("a=mid:"):
                out[-1]["mid"] = line[6:]
            elif line == "a=bundle-only":
                out[-1]["bundleOnly"] = True
            elif line.startswith("a=fingerprint:"):
                out[-1]["fingerprint"] = True
            elif line.startswith("a=ice-ufrag:"):
                out[-1]["ufrag"] = line[12:]
    return out


class Peer:
    """One pipeline with a webrtcbin; bus errors are collected, not raised."""

    def __init__(self, name, description, policy):
        self.name = name
        element = Gst.parse_launch(description)
        if isinstance(element, Gst.Pipeline):
            self.pipeline = element
        else:  # a single element: parse_launch gives it unwrapped
            self.pipeline = Gst.Pipeline.new(name)
            self.pipeline.add(element)
        self.webrtc = self.pipeline.get_by_name("webrtc")
        self.webrtc.set_property("bundle-policy", POLICIES[policy])
        self.errors = []
        # webrtcbin can make an offer once its sink pads have caps; before
        # that create-offer replies with a NULL offer.
        self.negotiation_needed = False
        self.webrtc.connect("on-negotiation-needed", lambda _: setattr(self, "negotiation_needed", True))

    def check_bus(self):
        bus = self.pipeline.get_bus()
        while True:
            message = bus.pop_filtered(Gst.MessageType.ERROR | Gst.MessageType.WARNING)
            if message is None:
                return
            error, debug = (message.parse_error() if message.type == Gst.MessageType.ERROR
                            else message.parse_warning())
            text = f"{self.name}: {error.message}"
            if message.type == Gst.MessageType.ERROR and text not in self.errors:
                self.errors.append(text)

    def offer(self, limit):
        """Creates and sets the local offer; returns it once gathering is complete."""
        self.pipeline.set_state(Gst.State.PLAYING)
        deadline = time.monotonic() + limit
        while not self.negotiation_needed and time.monotonic() < deadline:
            self.check_bus()
            time.sleep(0.02)
        offer = None
        while offer is None and time.monotonic() < deadline:
            promise = Gst.Promise.new()
            self.webrtc.emit("create-offer", None, promise)
            promise.wait()
            reply = promise.get_reply()
            offer = reply.get_value("offer") if reply is not None and reply.has_field("offer") else None
            if offer is None:
                time.sleep(0.05)
        if offer is None:
            raise RuntimeError(f"{self.name}: webrtcbin made no offer: {self.errors}")
        promise = Gst.Promise.new()
        self.webrtc.emit("set-local-description", offer, promise)
        promise.wait()
        while self.webrtc.get_property("ice-gathering-state") != GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            if time.monotonic() > deadline:
                break  # what was gathered so far still goes out
            time.sleep(0.05)
        return self.webrtc.get_property("local-description").sdp.as_text()

    def answer(self, text):
        """Sets the server's answer; an error from webrtcbin comes back as text."""
        result, message = GstSdp.SDPMessage.new_from_text(text)
        if result != GstSdp.SDPResult.OK:
            return "answer does not parse"
        answer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, message)
        promise = Gst.Promise.new()
        self.webrtc.emit("set-remote-description", answer, promise)
        promise.wait()
        reply = promise.get_reply()
        if reply is not None and reply.has_field("error"):
            return reply.get_value("error").message
        return None

    def srtp(self):
        """The cipher and auth of webrtcbin's srtpenc, set from the DTLS-SRTP
        profile the server chose (GStreamer 1.22's dtls elements offer only
        SRTP_AES128_CM_SHA1_80 in use_srtp: gst-plugins-bad ext/dtls)."""
        iterator = self.pipeline.iterate_recurse()
        while True:
            ok, element = iterator.next()
            if ok != Gst.IteratorResult.OK:
                return None
            if element.get_factory() is not None and element.get_factory().get_name() == "srtpenc":
                return [element.get_property("rtp-cipher").value_nick, element.get_property("rtp-auth").value_nick]

    def connection_state(self):
        return self.webrtc.get_property("connection-state").value_nick

    def stop(self):
        self.pipeline.set_state(Gst.State.NULL)


def publisher(codec, policy):
    return Peer("publisher", (
        "webrtcbin name=webrtc "
        "videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,height=240,framerate=30/1 "
        f"! videoconvert ! queue ! {VIDEO[codec]} ! webrtc. "
        "audiotestsrc is-live=true wave=sine ! audioconvert ! audioresample ! opusenc ! rtpopuspay pt=111 "
        "! application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000 ! webrtc."), policy)


class Player(Peer):
    """webrtcbin receiving audio and video; decodebin; counts decoded video frames."""

    def __init__(self, codec, policy):
        super().__init__("player", "webrtcbin name=webrtc", policy)
        for caps in (RECV_AUDIO, RECV_VIDEO[codec]):
            self.webrtc.emit("add-transceiver", GstWebRTC.WebRTCRTPTransceiverDirection.RECVONLY,
                             Gst.Caps.from_string(caps))
        self.frames = 0
        self.audio_buffers = 0
        self.first_frame = None
        self.size = None
        self.webrtc.connect("pad-added", self.on_pad)

    def on_pad(self, _, pad):
        if pad.direction != Gst.PadDirection.SRC:
            return
        decode = Gst.ElementFactory.make("decodebin")
        decode.connect("pad-added", self.on_decoded)
        self.pipeline.add(decode)
        decode.sync_state_with_parent()
        pad.link(decode.get_static_pad("sink"))

    def on_decoded(self, _, pad):
        caps = pad.get_current_caps() or pad.query_caps(None)
        video = caps.to_string().startswith("video/")
        sink = Gst.ElementFactory.make("fakesink")
        sink.set_property("sync", False)
        self.pipeline.add(sink)
        sink.sync_state_with_parent()
        pad.link(sink.get_static_pad("sink"))
        sink.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, self.on_frame if video else self.on_audio)

    def on_audio(self, pad, info):
        self.audio_buffers += 1
        return Gst.PadProbeReturn.OK

    def on_frame(self, pad, info):
        if self.first_frame is None:
            self.first_frame = time.monotonic()
            s = pad.get_current_caps().get_structure(0)
            self.size = [s.get_value("width"), s.get_value("height")]
        self.frames += 1
        return Gst.PadProbeReturn.OK


def negotiate(peer, base, path, token, result, key, limit):
    offer = peer.offer(limit)
    result[key + "Offer"] = sections(offer)
    result[key + "OfferSDP"] = offer
    status, headers, body = http("POST", base + path, offer.encode(),
                                 {"Content-Type": "application/sdp", "Authorization": "Bearer " + token})
    result[key + "Status"] = status
    if status != 201:
        result[key + "Refusal"] = body.strip()
        return None
    result[key + "Answer"] = sections(body)
    error = peer.answer(body)
    if error:
        result["errors"].append(f"{key}: webrtcbin refused the answer: {error}")
        return None
    return headers.get("Location")


def wait(condition, seconds, peers):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        for p in peers:
            p.check_bus()
        time.sleep(0.05)
    return condition()


def run(args, result):
    base, room = args.base, args.room
    peers, locations = [], []
    try:
        if args.command in ("publish", "pair", "offers"):
            pub = publisher(args.codec, args.bundle_policy)
            peers.append(pub)
            if args.command == "offers":
                result["publishOfferSDP"] = pub.offer(3)
                play = Player(args.codec, args.bundle_policy)
                peers.append(play)
                result["playOfferSDP"] = play.offer(3)
                return
            token = dev_token(base, room, "gst-pub")
            location = negotiate(pub, base, "/whip/" + room, token, result, "publish", 5)
            if location is None:
                return
            locations.append(location)
            if not wait(lambda: pub.connection_state() == "connected", 5, peers):
                result["errors"].append(f"publisher: connection {pub.connection_state()}")
                return
            # The player joins late: its first keyframe comes from our PLI.
            time.sleep(1.0 if args.command == "pair" else args.seconds)
            result["publishSRTP"] = pub.srtp()
        if args.command in ("play", "pair"):
            play = Player(args.codec, args.bundle_policy)
            peers.append(play)
            token = dev_token(base, room, "gst-play")
            started = time.monotonic()
            location = negotiate(play, base, "/whep/" + room, token, result, "play", 5)
            if location is None:
                return
            locations.append(location)
            if not wait(lambda: play.first_frame is not None, 5, peers):
                result["errors"].append(f"player: no decoded frame (connection {play.connection_state()})")
            else:
                result["firstFrameSeconds"] = round(play.first_frame - started, 3)
                counted = play.frames
                time.sleep(args.seconds)
                result["frames"] = play.frames - counted
                result["size"] = play.size
            result["audioBuffers"] = play.audio_buffers
    finally:
        for p in peers:
            p.check_bus()
            result["errors"] += p.errors
        for location in locations:
            status, _, _ = http("DELETE", base + location)
            result.setdefault("delete", []).append(status)
        for p in peers:
            p.stop()


# The fixtures Scripts/capture-fixtures writes: (file, codec, policy, which offer).
FIXTURES = [
    ("gstreamer-publish-vp8-max-bundle.sdp", "vp8", "max-bundle", "publishOfferSDP"),
    ("gstreamer-publish-vp8-max-compat.sdp", "vp8", "max-compat", "publishOfferSDP"),
    ("gstreamer-publish-vp8-none.sdp", "vp8", "none", "publishOfferSDP"),
    ("gstreamer-publish-h264-max-bundle.sdp", "h264", "max-bundle", "publishOfferSDP"),
    ("gstreamer-recvonly-vp8-max-bundle.sdp", "vp8", "max-bundle", "playOfferSDP"),
    ("gstreamer-recvonly-h264-max-bundle.sdp", "h264", "max-bundle", "playOfferSDP"),
]


def capture(out):
    """Writes each fixture's offer into `out` (no server is contacted)."""
    import os
    for name, codec, policy, key in FIXTURES:
        args = argparse.Namespace(command="offers", codec=codec, bundle_policy=policy, base=None, room=None)
        result = {"errors": []}
        run(args, result)
        if result["errors"] or key not in result:
            raise RuntimeError(f"{name}: {result['errors']}")
        with open(os.path.join(out, name), "w", newline="") as f:
            f.write(result[key])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["publish", "play", "pair", "offers", "check"])
    parser.add_argument("--base", default="http://127.0.0.1:8080")
    parser.add_argument("--room", default="gst")
    parser.add_argument("--codec", choices=sorted(VIDEO), default="vp8")
    parser.add_argument("--bundle-policy", choices=sorted(POLICIES), default="max-bundle")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--out", help="offers: write every fixture of FIXTURES into this folder")
    args = parser.parse_args()
    Gst.init(None)
    if args.command == "check":  # what the tests skip on
        needed = ["webrtcbin", "nicesrc", "dtlssrtpenc", "vp8enc", "x264enc", "opusenc", "decodebin",
                  "vp8dec", "avdec_h264", "opusdec"]
        missing = [name for name in needed if Gst.ElementFactory.find(name) is None]
        print(json.dumps({"gstreamer": Gst.version_string(), "missing": missing}), flush=True)
        return
    if args.command == "offers" and args.out:
        capture(args.out)
        print(Gst.version_string())
        return
    result = {"command": args.command, "codec": args.codec, "bundlePolicy": args.bundle_policy,
              "gstreamer": Gst.version_string(), "errors": []}
    started = time.monotonic()
    try:
        run(args, result)
    except Exception as error:  # reported in the JSON line, like the other drivers
        result["errors"].append(f"{type(error).__name__}: {error}")
    result["seconds"] = round(time.monotonic() - started, 2)
    print(json.dumps(result), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
