#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Two Prosody servers federating by standard XMPP server-to-server (S2S, TCP port
5269, dialback) over the IP client, for comparison with the bridge: each server runs in
one namespace of an IP test bed (`ip.testbed`), finds the other's domain through a
small DNS server in its own namespace, and reaches it over HF. Clients in this
process reach each server's client port through a relay on loopback.

    with ip.testbed(rate=9600) as t, federation(t, tmp) as f:
        client.connect(address=("127.0.0.1", f.c2s["a.example"]), ...)

Needs root (as the test bed does) and Debian's prosody."""

import ctypes
import os
import select
import shutil
import socket
import subprocess
import sys
import threading
import time

from . import stop_processes
from .ip import DNS_SERVER, run

CLONE_NEWNET = 0x40000000
START_S = 60
USERS = {"a": ("a.example", "alice"), "b": ("b.example", "bob")}

PROSODY_CONFIG = """\
-- Prosody for {domain}, federated by standard S2S over the IP client
run_as_root = true
daemonize = false
pidfile = "{directory}/prosody.pid"
data_path = "{directory}/data"
log = {{ info = "{directory}/prosody.log" }}
c2s_interfaces = {{ "127.0.0.1" }}
c2s_ports = {{ {c2s} }}
s2s_interfaces = {{ "{address}" }}
s2s_ports = {{ 5269 }}
modules_enabled = {{ "roster", "saslauth", "disco", "ping", "version", "dialback" }}
modules_disabled = {{ "http", "posix" }}
c2s_require_encryption = false  -- loopback test clients
-- The test bed runs offline with no certificates: S2S in the clear, the peer
-- authenticated by dialback alone (which needs no certificate). Over a real HF path use
-- TLS; its handshake costs more round trips, which these figures then do not include.
s2s_require_encryption = false
s2s_secure_auth = false
-- A TCP connection and its stream negotiation over HF take minutes at low rates,
-- not the seconds Prosody's defaults allow.
s2s_timeout = 900
network_settings = {{ connect_timeout = 900 }}
authentication = "internal_hashed"

VirtualHost "{domain}"
"""


def socket_in(namespace):
    """A TCP socket of network namespace `namespace`: made by a thread that enters it
    (a namespace is a thread's attribute; the socket keeps the one it was made in)."""
    made = {}

    def make():
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            with open(f"/var/run/netns/{namespace}") as f:
                if libc.setns(f.fileno(), CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns {namespace}")
            made["socket"] = socket.socket()
        except OSError as e:
            made["error"] = e

    t = threading.Thread(target=make)
    t.start()
    t.join()
    if "error" in made:
        raise made["error"]
    return made["socket"]


def accepts_in(namespace, port):
    s = socket_in(namespace)
    try:
        s.settimeout(1)
        s.connect(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


class relay:
    """Loopback port `port` here, each connection carried to 127.0.0.1:`target` in
    `namespace`."""

    def __init__(self, namespace, target):
        self.namespace, self.target, self.sockets = namespace, target, []
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:
                return  # closed
            far = socket_in(self.namespace)
            try:
                far.connect(("127.0.0.1", self.target))
            except OSError:
                near.close()
                far.close()
                continue
            self.sockets += [near, far]
            for source, sink in ((near, far), (far, near)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self):
        self.listener.close()
        for s in self.sockets:
            s.close()


class federation:
    """Prosody for a.example (user alice) in the test bed's namespace "a" and b.example
    (bob) in "b", both users with password "pw"; `c2s[domain]`: a loopback port here
    that reaches the domain's client port. Everything started is stopped by close(),
    also when start() fails half way."""

    def __init__(self, bed, directory):
        self.bed, self.directory = bed, directory
        self.processes, self.relays, self.c2s, self.netns_dirs = [], [], {}, []

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()

    def start(self):
        for side, peer in (("a", "b"), ("b", "a")):
            domain, user = USERS[side]
            namespace = self.bed.ns[side]
            # `ip netns exec` shows files in /etc/netns/NAME/ in place of /etc's.
            etc = f"/etc/netns/{namespace}"
            os.makedirs(etc, exist_ok=True)
            self.netns_dirs.append(etc)
            # Prosody reads no /etc/hosts: the namespace resolves through its own server.
            with open(os.path.join(etc, "resolv.conf"), "w") as f:
                f.write("nameserver 127.0.0.1\n")
            dns = self.spawn(self.bed.command(side, sys.executable, "-c", DNS_SERVER, "127.0.0.1",
                                              f"{USERS[peer][0]}={self.bed.address[peer]}"),
                             os.path.join(self.directory, f"dns-{side}.log"), stdout=True)
            ready, _, _ = select.select([dns.stdout], [], [], START_S)
            if not ready or dns.stdout.readline().strip() != b"ready":
                raise RuntimeError(f"the DNS server of namespace {side} did not start")
            directory = os.path.join(self.directory, domain)
            os.makedirs(os.path.join(directory, "data"))
            config = os.path.join(directory, "prosody.cfg.lua")
            port = 5222
            with open(config, "w") as f:
                f.write(PROSODY_CONFIG.format(domain=domain, directory=directory, c2s=port,
                                              address=self.bed.address[side]))
            run("prosodyctl", "--config", config, "register", user, domain, "pw",
                timeout=START_S)
            self.spawn(self.bed.command(side, "prosody", "--config", config, "-F"),
                       os.path.join(directory, "stderr.log"))
            deadline = time.monotonic() + START_S
            while not accepts_in(namespace, port):
                if time.monotonic() > deadline or self.processes[-1].poll() is not None:
                    log = os.path.join(directory, "prosody.log")
                    text = open(log, errors="replace").read()[-2000:] if os.path.exists(log) else ""
                    raise RuntimeError(f"prosody {domain} not up within {START_S} s: {text}")
                time.sleep(0.2)  # another process's state, bounded by the deadline
            self.relays.append(relay(namespace, port))
            self.c2s[domain] = self.relays[-1].port
        return self

    def spawn(self, args, log, stdout=False):
        with open(log, "a") as err:
            p = subprocess.Popen(args, stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
                                 stderr=err, stdin=subprocess.DEVNULL)
        self.processes.append(p)
        return p

    def close(self):
        for r in self.relays:
            r.close()
        stop_processes(self.processes)
        for p in self.processes:
            if p.stdout:
                p.stdout.close()
        for etc in self.netns_dirs:
            shutil.rmtree(etc, ignore_errors=True)
