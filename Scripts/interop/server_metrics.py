"""The server's /metrics, read by the drivers while their room is up."""
import urllib.parse
import urllib.request


def metrics(url: str) -> dict:
    """The server's swiftlet_* samples (name with labels -> value), from
    its http:// base or its room WebSocket's ws:// URL; {"error": ...}
    when the server does not answer."""
    parts = urllib.parse.urlsplit(url)
    scheme = "https" if parts.scheme in ("https", "wss") else "http"
    try:
        with urllib.request.urlopen(f"{scheme}://{parts.netloc}/metrics", timeout=3) as r:
            text = r.read().decode()
    except OSError as error:
        return {"error": repr(error)}
    out = {}
    for line in text.splitlines():
        if line.startswith("swiftlet_"):
            name, _, value = line.rpartition(" ")
            try:
                out[name] = float(value)
            except ValueError:
                pass
    return out
