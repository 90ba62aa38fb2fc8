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

With `tls=True` the servers federate as a real deployment should: TLS required on S2S
and the peer authenticated by its certificate (s2s_secure_auth), each server's
certificate issued for its domain by a certificate authority made with openssl in the
directory, which both servers trust.

Needs root (as the test bed does) and Debian's prosody (and openssl for `tls`)."""

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
modules_enabled = {{ "roster", "saslauth", "disco", "ping", "version", "dialback"{tls_module} }}
modules_disabled = {{ "http", "posix" }}
c2s_require_encryption = false  -- loopback test clients
{s2s_security}
-- A TCP connection and its stream negotiation over HF take minutes at low rates,
-- not the seconds Prosody's defaults allow.
s2s_timeout = 900
network_settings = {{ connect_timeout = 900 }}
authentication = "internal_hashed"

VirtualHost "{domain}"
"""

S2S_IN_THE_CLEAR = """\
-- Without `tls`: S2S in the clear, the peer authenticated by dialback alone (which needs
-- no certificate). Over a real HF path use TLS (`tls`); its handshake costs more round
-- trips, which these figures then do not include.
s2s_require_encryption = false
s2s_secure_auth = false"""

S2S_TLS = """\
-- TLS required on S2S, and the peer authenticated by its certificate, issued by the
-- test bed's certificate authority, which both servers trust.
s2s_require_encryption = true
s2s_secure_auth = true
certificates = "{directory}"
ssl = {{ key = "{directory}/{domain}.key", certificate = "{directory}/{domain}.crt",
        cafile = "{ca}" }}"""


def make_certificates(directory, domains):
    """A certificate authority (`directory`/ca.crt) and, for each domain, a key and a
    certificate for that name signed by it (`directory`/DOMAIN/DOMAIN.key and .crt);
    P-256 keys, which keep the certificates, and so the TLS handshake over HF, small.
    Returns the authority's certificate file."""
    ca_key, ca = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.crt")
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("openssl", "req", "-x509", *curve, "-keyout", ca_key, "-out", ca, "-days", "2",
        "-subj", "/CN=hfstack test bed authority", timeout=START_S)
    for domain in domains:
        base = os.path.join(directory, domain, domain)
        run("openssl", "req", *curve, "-keyout", base + ".key", "-out", base + ".csr",
            "-subj", f"/CN={domain}", timeout=START_S)
        with open(base + ".ext", "w") as f:
            f.write(f"subjectAltName = DNS:{domain}\n")
        run("openssl", "x509", "-req", "-in", base + ".csr", "-CA", ca, "-CAkey", ca_key,
            "-CAcreateserial", "-out", base + ".crt", "-days", "2", "-extfile", base + ".ext",
            timeout=START_S)
    return ca


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
    also when start() fails half way. `tls`: S2S over TLS with certificate
    authentication (the module's description)."""

    def __init__(self, bed, directory, tls=False):
        self.bed, self.directory, self.tls = bed, directory, tls
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
        for domain, _ in USERS.values():
            os.makedirs(os.path.join(self.directory, domain, "data"))
        ca = make_certificates(self.directory, [d for d, _ in USERS.values()]) if self.tls else None
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
            config = os.path.join(directory, "prosody.cfg.lua")
            port = 5222
            security = (S2S_TLS.format(directory=directory, domain=domain, ca=ca) if self.tls
                        else S2S_IN_THE_CLEAR)
            with open(config, "w") as f:
                f.write(PROSODY_CONFIG.format(domain=domain, directory=directory, c2s=port,
                                              address=self.bed.address[side],
                                              tls_module=', "tls"' if self.tls else "",
                                              s2s_security=security))
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
