"""Writes the provenance note for the captured SDP fixtures. Producers not
re-captured this run (no --chromium/--firefox/--aiortc) keep the line the
existing README has for them, with its version and date."""
import argparse
import datetime
import pathlib
import re

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--chromium")
ap.add_argument("--firefox")
ap.add_argument("--aiortc")
ap.add_argument("--gstreamer")
args = ap.parse_args()
today = datetime.date.today().isoformat()
readme = pathlib.Path(args.out, "README.md")
old = readme.read_text() if readme.exists() else ""
old_date = (re.search(r"Scripts/capture-fixtures` on (\d{4}-\d\d-\d\d)", old) or [None, "unknown"])[1]

NOTES = {
    "Browser": ("chromium", "(Debian, `--headless=new`, fake media devices)"),
    "Firefox": ("firefox", "(Debian's `firefox-esr`, headless, WebDriver BiDi, fake media from user.js)"),
    "aiortc": ("aiortc", "(host candidates patched to 127.0.0.1)"),
    "GStreamer": ("gstreamer", "(Debian, webrtcbin from python3-gst-1.0; videotestsrc/audiotestsrc, vp8enc or x264enc, opusenc)"),
}


def line(label: str) -> str:
    key, note = NOTES[label]
    version = getattr(args, key)
    if version:
        return f"- {label}: {version} {note}, captured {today}"
    previous = re.search(rf"^- {label}: .*$", old, re.M)
    if previous:
        text = previous.group(0)
        return text if "captured " in text else f"{text}, captured {old_date}"
    return f"- {label}: not captured yet"


# Notes about a single file re-captured alone ("- NAME.sdp alone: ..."
# and its indented continuation lines) are kept as they are.
alone = "".join(m.group(0) for m in re.finditer(r"^- \S+\.sdp alone:.*\n(?:  .*\n)*", old, re.M))

readme.write_text(f"""# SDP fixtures

Captured from real programs by `Scripts/capture-fixtures` (last run on
{today}); do not edit by hand (rerun the script, naming the producers to
re-capture: `Scripts/capture-fixtures firefox`).

{line("Browser")}
{alone}{line("Firefox")}
{line("aiortc")}
{line("GStreamer")}

| File | Producer | What |
|------|----------|------|
| chromium-publish-simulcast.sdp | Chromium | audio + video sendonly, simulcast rids q/h/f from getUserMedia 1280x720 |
| chromium-publish-h264-simulcast.sdp | Chromium | as chromium-publish-simulcast.sdp, with H.264 mode 1 42e01f first (setCodecPreferences, as the room page's `?codec=h264`) |
| chromium-recvonly.sdp | Chromium | recvonly audio + video transceivers |
| chromium-sendrecv.sdp | Chromium | addTrack audio + video (no simulcast) and a data channel |
| firefox-publish-simulcast-balanced.sdp | Firefox | audio + video sendonly, simulcast rids q/h/f from getUserMedia 1280x720, `bundlePolicy: "balanced"`: every section has a port |
| firefox-publish-simulcast-max-bundle.sdp | Firefox | the same under `bundlePolicy: "max-bundle"`: video has port 0 and `a=bundle-only` (RFC 8843 section 6) |
| firefox-recvonly-max-bundle.sdp | Firefox | recvonly audio + video transceivers (a WHEP player) under `max-bundle`: video port 0, `a=bundle-only` |
| aiortc-offer.sdp | aiortc | sendrecv audio + video transceivers |
| gstreamer-publish-vp8-max-bundle.sdp | GStreamer 1.22 webrtcbin | VP8 + Opus sending (sendrecv), `bundle-policy=max-bundle`: audio has port 0 and `a=bundle-only` |
| gstreamer-publish-vp8-max-compat.sdp | GStreamer 1.22 webrtcbin | the same under `max-compat`: every section has a port, one BUNDLE group, one ufrag |
| gstreamer-publish-vp8-none.sdp | GStreamer 1.22 webrtcbin | the same under `none` (webrtcbin's default): no BUNDLE group, a ufrag per section |
| gstreamer-publish-h264-max-bundle.sdp | GStreamer 1.22 webrtcbin | x264enc constrained baseline (`42c01f`, packetization-mode 1) + Opus, `max-bundle` |
| gstreamer-recvonly-vp8-max-bundle.sdp | GStreamer 1.22 webrtcbin | recvonly Opus + VP8 (a WHEP player), `max-bundle` |
| gstreamer-recvonly-h264-max-bundle.sdp | GStreamer 1.22 webrtcbin | recvonly Opus + H.264 `42e01f` mode 1, `max-bundle` |
""")
