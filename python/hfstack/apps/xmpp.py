#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-xmpp: the XMPP-over-HF bridge. It attaches to the local XMPP server as an
external component (XEP-0114), one component connection per remote domain, and to any
STANAG 5066 server's SIS (TCP port 5066) as a client, and carries the stanzas to the
far bridge with x2x-slep or x2x-rcop (docs/xmpp.md). The protocol is the sans-IO kernel
in hfstack.net; this module only moves bytes, keeps the clock and reconnects: when the
XMPP server or the SIS server goes away the connection is remade every --retry seconds
(connects never block the bridge), and nothing queued is lost meanwhile: what was
written to a component connection is kept until the server confirms it, and written
again after a reconnect.

Exit status: 0 after SIGINT/SIGTERM, 2 for a bad option (one line saying which).
Statistics as JSON lines on stdout (or --stats), logs on stderr.
"""

import json
import logging
import selectors
import sys
import time

from ..cli import (add_sis_client_options, every, one_line_parser, run_with_stats_out, setup_logging,
                   stop_on_signals, usage_error)
from ..hfstack_python import dl, net
from ..pep.endpoint import parse_endpoint, proxy_error
from ..xmpp import TRANSPORTS, bridge_core, bridge_error, bridge_options, connection, parse_peers

PROG = "hfstack-xmpp"
log = logging.getLogger(PROG)
# Options the flags set: given with --option they would contradict them.
FLAG_OPTIONS = {"local_domains": "--local-domain", "peer_domains": "--peer",
                "transport": "--transport"}


def parse_args(argv):
    p = one_line_parser(
        prog=PROG,
        description="XMPP over HF: federates the local XMPP server with the servers "
                    "beside other STANAG 5066 nodes, as an external component (XEP-0114) "
                    "of the local server and a SIS client of the local node.",
        epilog="Example: hfstack-xmpp --secret-file /etc/hfstack/xmpp-secret "
               "--local-domain a.example --peer b.example=0.0.0.2 "
               "--peer conference.b.example=0.0.0.2 (docs/xmpp.md, Set up two Prosody "
               "servers)")
    p.add_argument("--component", default="127.0.0.1:5347",
                   help="the XMPP server's component port HOST:PORT (default 127.0.0.1:5347)")
    p.add_argument("--secret", default=None, help="the components' shared secret")
    p.add_argument("--secret-file", default=None,
                   help="a file holding the secret (first line), kept out of the process list")
    p.add_argument("--local-domain", action="append", default=[], metavar="DOMAIN",
                   help="a domain of the local XMPP server (repeatable, at least one)")
    p.add_argument("--peer", action="append", default=[], metavar="DOMAIN=ADDRESS",
                   help="a remote domain and the STANAG 5066 address of the node its "
                        "bridge is on, e.g. b.example=0.0.0.2 (repeatable; a component "
                        "each; the domains of one address share a bridge)")
    p.add_argument("--transport", default="x2x-slep", choices=TRANSPORTS,
                   help="how stanzas travel over 5066 (default x2x-slep)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a bridge option (repeatable; see --list-options)")
    p.add_argument("--list-options", action="store_true",
                   help="print every bridge option and exit")
    add_sis_client_options(p, retried="either server", check_note=" (no server is contacted)")
    a = p.parse_args(argv)
    if a.list_options:
        return a
    try:
        a.sis = parse_endpoint(a.server, "--server")
        a.xmpp = parse_endpoint(a.component, "--component")
    except proxy_error as e:
        raise usage_error(str(e))
    if a.retry <= 0 or a.stats_interval < 0:
        raise usage_error("--retry must be > 0 and --stats-interval >= 0")
    if a.secret is not None and a.secret_file:
        raise usage_error("give --secret or --secret-file, not both")
    if a.secret_file:
        try:
            with open(a.secret_file) as f:
                a.secret = f.readline().strip()
        except OSError as e:
            raise usage_error(f"--secret-file: {e.strerror}: {a.secret_file}")
    if not a.secret:
        raise usage_error("the component secret is required (--secret or --secret-file)")
    if not a.local_domain:
        raise usage_error("at least one --local-domain is required")
    if not a.peer:
        raise usage_error("at least one --peer DOMAIN=ADDRESS is required")
    try:
        a.peers = parse_peers(a.peer)
    except bridge_error as e:
        raise usage_error(f"--peer: {e}")
    options = []
    for spec in a.option:
        name, sep, value = spec.partition("=")
        if not sep or not name.strip():
            raise usage_error(f"--option must be NAME=VALUE, not {spec!r}")
        if name.strip() in FLAG_OPTIONS:
            raise usage_error(f"--option {name.strip()}: use {FLAG_OPTIONS[name.strip()]}")
        options.append(f"{name.strip()}={value}")
    a.options = ";".join(options)
    return a


class xmpp_bridge_app:
    """The event loop: the SIS connection (TCP, made without blocking) beside the
    bridge core's component connections, in one selector."""

    def __init__(self, a):
        self.a = a
        self.sel = selectors.DefaultSelector()
        self.core = bridge_core(a.bridge_options, a.peers, a.secret, a.xmpp, a.transport,
                                a.retry, self.to_sis, self.sel)
        self.sis = None
        self.sis_retry_at = 0.0
        self.stopping = False

    def to_sis(self, frames):
        for f in frames:
            self.sis.write(f)

    def sis_up(self, now):
        host, port = self.a.sis
        try:
            self.sis = connection(host, port)
        except OSError as e:
            return self.sis_failed(now, e)
        if self.sis.connecting:
            self.sel.register(self.sis.sock, selectors.EVENT_WRITE, ("sis", None))
        else:
            self.sis_connected(now)

    def sis_failed(self, now, e):
        host, port = self.a.sis
        self.core.notice("sis_connect", "SIS server %s:%d: %s; retrying every %g s", host,
                         port, e.strerror or e, self.a.retry)
        if self.sis is not None:
            if self.sel.get_map().get(self.sis.sock) is not None:
                self.sel.unregister(self.sis.sock)
            self.sis.close()
            self.sis = None
        self.sis_retry_at = now + self.a.retry

    def sis_connected(self, now):
        try:
            self.sis.finish_connect()
        except OSError as e:
            return self.sis_failed(now, e)
        self.core.noticed.discard("sis_connect")
        if self.sel.get_map().get(self.sis.sock) is None:
            self.sel.register(self.sis.sock, selectors.EVENT_READ, ("sis", None))
        else:
            self.sel.modify(self.sis.sock, selectors.EVENT_READ, ("sis", None))
        log.info("connected to the SIS server at %s:%d", *self.a.sis)
        self.core.sis_up(now)

    def sis_down(self, now, why):
        log.warning("SIS server connection lost (%s); reconnecting", why)
        self.sel.unregister(self.sis.sock)
        self.sis.close()
        self.sis = None
        self.sis_retry_at = now + self.a.retry
        self.core.sis_down(now)

    def sis_event(self, mask, now):
        if self.sis.connecting:
            if mask & selectors.EVENT_WRITE:
                self.sis_connected(now)
            return
        if mask & selectors.EVENT_WRITE:
            self.sis.flush()
        if not mask & selectors.EVENT_READ:
            return
        try:
            data = self.sis.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            return self.sis_down(now, e.strerror or str(e))
        if not data:
            return self.sis_down(now, "closed by the server")
        self.core.on_sis_bytes(data, now)

    def run(self, stats_out):
        stats = every(self.a.stats_interval,
                      lambda: print(json.dumps(self.core.statistics()), file=stats_out,
                                    flush=True),
                      time.monotonic())
        while not self.stopping:
            now = time.monotonic()
            if self.sis is None and now >= self.sis_retry_at:
                self.sis_up(now)
            deadline = self.core.step(now)
            if self.sis is None:
                deadline = min(deadline, self.sis_retry_at)
            deadline = min(deadline, stats.due(now) or deadline)
            # Output that did not fit in a socket waits for writability.
            self.core.watch_writes()
            sis_waits = self.sis is not None and not self.sis.connecting and self.sis.out
            if sis_waits:
                self.sel.modify(self.sis.sock, selectors.EVENT_READ | selectors.EVENT_WRITE,
                                ("sis", None))
            try:
                ready = self.sel.select(max(0.0, deadline - time.monotonic()))
            except InterruptedError:
                ready = []
            self.core.unwatch_writes()
            if sis_waits and self.sis is not None:
                self.sel.modify(self.sis.sock, selectors.EVENT_READ, ("sis", None))
            now = time.monotonic()
            for key, mask in ready:
                what, domain = key.data
                if what == "sis":
                    if self.sis is not None:
                        self.sis_event(mask, now)
                else:
                    self.core.component_event(domain, mask, now)
        self.core.close()
        print(json.dumps(self.core.statistics()), file=stats_out, flush=True)


def main(argv=None):
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
        if a.list_options:
            for name, default, help_text in net.xmpp_options():
                print(f"{name} (default {default!r}): {help_text}")
            return 0
        a.bridge_options = bridge_options(a.options, a.transport, a.local_domain, a.peers)
        settings = net.check_xmpp_options(next(iter(a.bridge_options.values())))
    except (usage_error, bridge_error, ValueError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if a.check:
        del settings["peer_domains"]
        print(json.dumps({"server": "%s:%d" % a.sis, "component": "%s:%d" % a.xmpp,
                          "peers": {dl.address_to_string(n): d for n, d in a.peers.items()},
                          "options": settings}, indent=2))
        return 0
    setup_logging(PROG, a.log_level)
    app = xmpp_bridge_app(a)

    def stop():
        app.stopping = True

    stop_on_signals(stop)
    log.info("XMPP bridge: SIS server %s:%d, XMPP server %s:%d, %s; peers %s", *a.sis, *a.xmpp,
             a.transport, ", ".join(f"{'+'.join(d)} at {dl.address_to_string(n)}"
                                    for n, d in a.peers.items()))
    run_with_stats_out(app.run, a.stats_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
