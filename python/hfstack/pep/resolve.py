#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The far HF-PEP's lookups of host names that clients gave the near one (SOCKS5
domain names, HTTP CONNECT host:port): this machine's resolver (getaddrinfo: the hosts
file, then DNS as nsswitch.conf says) in worker threads, so that the proxy's thread
never waits on one. The kernel's connect_timeout_s bounds a lookup and the connect
together; a lookup still running then is answered and forgotten."""

import queue
import socket
import threading

RESOLVER_THREADS = 4           # lookups at once; more wait their turn
MAX_RESOLVES = 256             # lookups waiting or running; more fail at once


def addresses_of(name, port):
    """The distinct addresses getaddrinfo gives for name (TCP), in its order; [] if none."""
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    out = []
    for family, _, _, _, address in infos:
        # A scoped IPv6 address (fe80::1%eth0) is link-local, which the policy refuses
        # anyway; the kernel reads plain addresses only.
        if family in (socket.AF_INET, socket.AF_INET6) and "%" not in address[0] \
                and address[0] not in out:
            out.append(address[0])
    return out


class name_resolver:
    """Lookups in daemon threads: ask() from the proxy's thread, take() there the
    answers, `wake` called from a worker when one is ready."""

    def __init__(self, wake, threads=RESOLVER_THREADS, lookup=addresses_of):
        self.wake = wake
        self.lookup = lookup
        self.asked = queue.Queue()
        self.answers = queue.Queue()
        self.pending = 0
        self.threads = []
        self.want_threads = threads

    def ask(self, key, name, port):
        """Starts a lookup; False (and nothing started) when MAX_RESOLVES are pending."""
        if self.pending >= MAX_RESOLVES:
            return False
        if len(self.threads) < self.want_threads:
            t = threading.Thread(target=self._work, name="pep_resolver", daemon=True)
            t.start()
            self.threads.append(t)
        self.pending += 1
        self.asked.put((key, name, port))
        return True

    def take(self):
        """[(key, [address, ...])] of the lookups finished since the last call."""
        out = []
        while True:
            try:
                out.append(self.answers.get_nowait())
            except queue.Empty:
                break
        self.pending -= len(out)
        return out

    def stop(self):
        for _ in self.threads:
            self.asked.put(None)
        self.threads = []

    def _work(self):
        while True:
            job = self.asked.get()
            if job is None:
                return
            key, name, port = job
            self.answers.put((key, self.lookup(name, port)))
            self.wake()
