"""Writes the provenance note for the captured SDP fixtures."""
import argparse
import datetime
import pathlib

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--chromium", required=True)
ap.add_argument("--aiortc", required=True)
args = ap.parse_args()
today = datetime.date.today().isoformat()
pathlib.Path(args.out, "README.md").write_text(f"""# SDP fixtures

Captured from real programs by `Scripts/capture-fixtures` on {today}; do not
edit by hand (rerun the script instead).

- Browser: {args.chromium} (Debian, `--headless=new`, fake media devices)
- aiortc: {args.aiortc} (host candidates patched to 127.0.0.1)

| File | Producer | What |
|------|----------|------|
| chromium-publish-simulcast.sdp | Chromium | audio + video sendonly, simulcast rids q/h/f from getUserMedia 1280x720 |
| chromium-publish-h264-simulcast.sdp | Chromium | as chromium-publish-simulcast.sdp, with H.264 mode 1 42e01f first (setCodecPreferences, as the room page's `?codec=h264`) |
| chromium-recvonly.sdp | Chromium | recvonly audio + video transceivers |
| chromium-sendrecv.sdp | Chromium | addTrack audio + video (no simulcast) and a data channel |
| aiortc-offer.sdp | aiortc | sendrecv audio + video transceivers |
""")
