#!/usr/bin/env python3
"""One HTTPS request with Python's ssl module, for the TLS tests: connects,
verifies the server against --cafile (or not, with --insecure), sends the
request, reads to the end (a missing close_notify is an error here), and
prints one JSON line: version, ALPN, the server certificate (base64 DER),
the response, or the error."""
import argparse
import base64
import json
import socket
import ssl

p = argparse.ArgumentParser()
p.add_argument("--host", default="127.0.0.1")
p.add_argument("--port", type=int, required=True)
p.add_argument("--cafile")
p.add_argument("--insecure", action="store_true")
p.add_argument("--server-name", default="localhost")
p.add_argument("--max-version", choices=["1.2", "1.3"])
p.add_argument("--path", default="/healthz")
a = p.parse_args()

ctx = ssl.create_default_context(cafile=a.cafile)
if a.insecure:
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
if a.max_version == "1.2":
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
ctx.set_alpn_protocols(["h2", "http/1.1"])
# Some builds (Debian's) ignore an EOF without close_notify by default;
# the tests want to see it (RFC 8446 section 6.1).
ctx.options &= ~getattr(ssl, "OP_IGNORE_UNEXPECTED_EOF", 0)
out = {}
try:
    with socket.create_connection((a.host, a.port), timeout=5) as raw:
        # suppress_ragged_eofs=False: an EOF without close_notify is an error.
        with ctx.wrap_socket(raw, server_hostname=a.server_name, suppress_ragged_eofs=False) as s:
            out["version"] = s.version()
            out["alpn"] = s.selected_alpn_protocol()
            out["certificate"] = base64.b64encode(s.getpeercert(binary_form=True)).decode()
            request = f"GET {a.path} HTTP/1.1\r\nHost: {a.server_name}:{a.port}\r\nConnection: close\r\n\r\n"
            s.sendall(request.encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            out["response"] = data.decode("latin-1")
except Exception as e:  # reported, not raised: the test reads the JSON
    out["error"] = f"{type(e).__name__}: {e}"
print(json.dumps(out))
