"""Private PostgreSQL and Redis for the fault tests, which stop, kill and restart them.

``python tests/faults/harness.py -- CMD...`` creates a throwaway PostgreSQL cluster (initdb into a
temporary directory, run as the ``postgres`` user when we are root) and a redis-server, each on a free
port, runs CMD with DATABASE_URL, REDIS_URL and the FAULT_* variables set, then removes both. The
shared servers on 5432 and 6379 are never touched.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    if not found:
        sys.exit("no PostgreSQL binaries under /usr/lib/postgresql/*/bin")
    return found[-1]


def _as_pg(args: list) -> list:
    return ["runuser", "-u", "postgres", "--"] + args if os.geteuid() == 0 else args


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Services:
    """Start/stop handles for the private servers, from the FAULT_* environment."""

    def __init__(self, env=os.environ):
        self.pg_bin = env["FAULT_PG_BIN"]
        self.pg_data = env["FAULT_PG_DATA"]
        self.pg_port = int(env["FAULT_PG_PORT"])
        self.redis_dir = env["FAULT_REDIS_DIR"]
        self.redis_port = int(env["FAULT_REDIS_PORT"])

    # -- PostgreSQL ---------------------------------------------------------------------------
    def pg_start(self) -> None:
        opts = (f"-p {self.pg_port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.pg_data} "
                f"-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        subprocess.run(_as_pg([f"{self.pg_bin}/pg_ctl", "-D", self.pg_data, "-l", f"{self.pg_data}/server.log",
                               "-o", opts, "-w", "-t", "60", "start"]), check=True, stdout=subprocess.DEVNULL)

    def pg_stop(self, mode: str = "fast") -> None:
        subprocess.run(_as_pg([f"{self.pg_bin}/pg_ctl", "-D", self.pg_data, "-m", mode, "-w", "stop"]),
                       check=True, stdout=subprocess.DEVNULL)

    # -- Redis --------------------------------------------------------------------------------
    def redis_start(self) -> None:
        subprocess.run(["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "--port", str(self.redis_port),
                        "--save", "", "--appendonly", "no", "--dir", self.redis_dir,
                        "--pidfile", f"{self.redis_dir}/redis.pid", "--logfile", f"{self.redis_dir}/redis.log"],
                       check=True)
        end = time.monotonic() + 20
        while not _port_open(self.redis_port):
            if time.monotonic() > end:
                raise RuntimeError("private redis-server did not start")
            time.sleep(0.05)

    def redis_stop(self) -> None:
        """SIGKILL, as a crash (its data is not persisted: locks, queues and groups are gone)."""
        with open(f"{self.redis_dir}/redis.pid") as f:
            pid = int(f.read())
        os.kill(pid, signal.SIGKILL)
        end = time.monotonic() + 10
        while _port_open(self.redis_port) and time.monotonic() < end:
            time.sleep(0.05)


def main(argv: list) -> int:
    cmd = argv[argv.index("--") + 1:] if "--" in argv else argv
    tmp = tempfile.mkdtemp(prefix="schedscope-faults-")
    pg_data, redis_dir = os.path.join(tmp, "pg"), os.path.join(tmp, "redis")
    os.makedirs(pg_data)
    os.makedirs(redis_dir)
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        os.chown(tmp, pw.pw_uid, pw.pw_gid)
        os.chown(pg_data, pw.pw_uid, pw.pw_gid)
    env = dict(os.environ, FAULT_PG_BIN=_pg_bin(), FAULT_PG_DATA=pg_data, FAULT_PG_PORT=str(free_port()),
               FAULT_REDIS_DIR=redis_dir, FAULT_REDIS_PORT=str(free_port()), SCHEDSCOPE_FAULTS="1")
    svc = Services(env)
    subprocess.run(_as_pg([f"{svc.pg_bin}/initdb", "-D", pg_data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                           "--no-sync"]), check=True, stdout=subprocess.DEVNULL)
    svc.pg_start()
    svc.redis_start()
    env["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:{svc.pg_port}/schedscope"
    env["REDIS_URL"] = f"redis://127.0.0.1:{svc.redis_port}/0"
    print(f"faults: private PostgreSQL on {svc.pg_port}, Redis on {svc.redis_port} ({tmp})", flush=True)
    try:
        return subprocess.call(cmd, env=env)
    finally:
        try:
            svc.pg_stop("immediate")
        except subprocess.CalledProcessError:
            pass
        try:
            svc.redis_stop()
        except (OSError, ValueError):
            pass
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
