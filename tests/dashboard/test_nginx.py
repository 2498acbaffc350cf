"""deploy/nginx.conf, run by a real nginx in front of a stand-in web process: its access log never shows a
simulated cluster's API token from a path."""
from __future__ import annotations

import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .conftest import ROOT, free_port, wait_for

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


class _Web(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.mark.skipif(not shutil.which(NGINX), reason="nginx is not installed")
def test_the_access_log_redacts_tokens_in_paths(tmp_path):
    web = ThreadingHTTPServer(("127.0.0.1", 0), _Web)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    port = free_port()
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    site = site.replace("http://web:8000", f"http://127.0.0.1:{web.server_port}").replace(
        "listen 8000;", f"listen 127.0.0.1:{port};").replace("/var/log/nginx/access.log", str(tmp_path / "access.log"))
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid; error_log {tmp_path}/error.log; events {{}}\n"
        f"http {{ client_body_temp_path {tmp_path}; proxy_temp_path {tmp_path}; fastcgi_temp_path {tmp_path};"
        f" uwsgi_temp_path {tmp_path}; scgi_temp_path {tmp_path}; include {tmp_path}/site.conf; }}\n")
    nginx = subprocess.Popen([NGINX, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-g", "daemon off;"],
                             stderr=subprocess.PIPE)
    token = "3f" * 24
    try:
        def get(path, **headers):
            try:
                return urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                                                                     headers=headers), timeout=5).status
            except urllib.error.URLError:
                return None
        wait_for(lambda: get("/profiles/login/") == 200, 20, 0.05, "nginx")
        assert get(f"/clusters/demo/k8s/t/{token}/api/v1/pods?watch=1") == 200
        assert get(f"/clusters/demo/k8s/t/{token}", Referer=f"http://x/clusters/demo/k8s/t/{token}/api") == 200
        log = wait_for(lambda: (lambda t: t if t.count("\n") >= 3 else None)(
            (tmp_path / "access.log").read_text() if (tmp_path / "access.log").exists() else ""), 10, 0.05, "log")
    finally:
        nginx.terminate()
        nginx.wait(10)
        web.shutdown()
    assert token not in log
    assert "GET /clusters/demo/k8s/t/redacted/api/v1/pods?watch=1 HTTP/1.1\" 200" in log
    assert "GET /clusters/demo/k8s/t/redacted HTTP/1.1" in log and '"http://x/clusters/demo/k8s/t/redacted/api"' in log
    assert "GET /profiles/login/ HTTP/1.1\" 200" in log
