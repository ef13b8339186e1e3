"""Helpers of the deployment tests: the shipped nginx site (deploy/nginx/widerpoker.conf)
rendered with a test's ports, certificate and paths, and run in front of daphne processes."""

from __future__ import annotations

import getpass
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "deploy/nginx/widerpoker.conf"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 at the time of the call."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def render_site(workdir: Path, *, backends: tuple[int, int], http: int, https: int, static: Path) -> str:
    """deploy/nginx/widerpoker.conf with this test's ports, certificate, static root and log
    directory; every value replaced must be there (a changed file fails here, loudly)."""
    text = SITE.read_text()
    replacements = {
        "server 127.0.0.1:8001 ": f"server 127.0.0.1:{backends[0]} ",
        "server 127.0.0.1:8002 ": f"server 127.0.0.1:{backends[1]} ",
        "listen 80;": f"listen 127.0.0.1:{http};",
        "listen [::]:80;": "",
        "listen 443 ssl http2;": f"listen 127.0.0.1:{https} ssl http2;",
        "listen [::]:443 ssl http2;": "",
        "/etc/ssl/widerpoker/fullchain.pem": str(workdir / "cert.pem"),
        "/etc/ssl/widerpoker/privkey.pem": str(workdir / "key.pem"),
        "/srv/widerpoker/var/static/": f"{static}/",
        "/var/log/nginx/": f"{workdir}/",
    }
    for old, new in replacements.items():
        assert old in text, f"{SITE.name} no longer has {old!r}"
        text = text.replace(old, new)
    return text


def wait_http(url: str, context: ssl.SSLContext | None = None, seconds: float = 60) -> None:
    """Poll ``url`` until it answers 2xx; the last error after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2, context=context):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def start_nginx(
    workdir: Path, *, backends: tuple[int, int], static: Path
) -> tuple[subprocess.Popen[bytes], int, int, ssl.SSLContext]:
    """A certificate for ``localhost`` made now, and nginx running the shipped site in front
    of ``backends`` (in the foreground, logs in ``workdir``); returns (process, http port,
    https port, an SSL context trusting the certificate). The caller stops the process."""
    keys = ["-keyout", str(workdir / "key.pem"), "-out", str(workdir / "cert.pem")]
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost", *keys],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    http, https = free_port(), free_port()
    (workdir / "site.conf").write_text(render_site(workdir, backends=backends, http=http, https=https, static=static))
    temp = workdir / "temp"
    temp.mkdir()
    (workdir / "nginx.conf").write_text(
        f"""daemon off;
user {getpass.getuser()};
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {workdir}/site.conf;
}}
"""
    )
    command = ["nginx", "-p", str(workdir), "-c", str(workdir / "nginx.conf")]
    checked = subprocess.run([*command, "-t"], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    nginx = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=(workdir / "nginx.log").open("w"))
    return nginx, http, https, ssl.create_default_context(cafile=str(workdir / "cert.pem"))
