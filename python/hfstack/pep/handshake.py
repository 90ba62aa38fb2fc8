#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""How a client names its destination to the near HF-PEP: SOCKS5 (RFC 1928, no
authentication, CONNECT to an IP address) and HTTP CONNECT (RFC 9110), with the replies
that report the far proxy's answer. Unfinished requests are bounded per source and in
all, and time out.

handshake_service is the part of pep_proxy (proxy.py) that reads these requests: it runs
in the proxy's thread, under its lock."""

import socket
import struct

from .endpoint import parse_endpoint, proxy_error

MAX_HANDSHAKE = 8192           # bytes of a SOCKS or CONNECT request, at most

# SOCKS5 replies (RFC 1928 section 6) for the far proxy's answers.
SOCKS_REPLY = {"connected": 0, "busy": 1, "forbidden": 2, "no_peer": 3, "unreachable": 4,
               "refused": 5, "timed_out": 4, "bad_request": 1}
HTTP_REPLY = {"forbidden": "403 Forbidden", "busy": "503 Service Unavailable",
              "timed_out": "504 Gateway Timeout"}


def literal_address(name):
    """The IP address a SOCKS5 domain name (bytes) spells out, "[v6]" too, or None."""
    try:
        text = name.decode("ascii").strip("[]")
    except UnicodeDecodeError:
        return None
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            return socket.inet_ntop(family, socket.inet_pton(family, text))
        except OSError:
            pass
    return None


class handshake_service:
    """pep_proxy's SOCKS5 and HTTP CONNECT requests, before a connection opens."""

    def _start_handshake(self, c, source):
        """Counts an unfinished SOCKS/CONNECT request. Beyond max_handshakes_per_source
        the source's oldest is closed, beyond max_handshakes the oldest of all: a client
        that finishes its request at once is never the oldest, a silent one soon is."""
        mine = self.handshake_sources.setdefault(source, {})
        if len(mine) >= self.max_handshakes_per_source:
            self.counters["handshakes_evicted"] += 1
            self._notice(f"handshakes {source}",
                         f"{source} has {self.max_handshakes_per_source} unfinished proxy "
                         "requests: closing its oldest for each new one (logged once per source)")
            self._close(next(iter(mine)), reset=True)
        elif len(self.handshakes) >= self.max_handshakes:
            self.counters["handshakes_evicted"] += 1
            self._notice("handshakes", f"{self.max_handshakes} unfinished proxy requests: "
                                       "closing the oldest for each new one")
            self._close(next(iter(self.handshakes)), reset=True)
        c.source = source
        self.handshakes[c] = None
        self.handshake_sources.setdefault(source, {})[c] = None
        return True

    def _end_handshake(self, c):
        if c.source is None:
            return
        self.handshakes.pop(c, None)
        mine = self.handshake_sources.get(c.source)
        if mine is not None:
            mine.pop(c, None)
            if not mine:
                del self.handshake_sources[c.source]
        c.source = None

    def _expire_handshakes(self, now):
        """Closes the SOCKS/CONNECT clients that did not finish within handshake_timeout_s."""
        while self.handshakes:
            c = next(iter(self.handshakes))
            if now < c.since + self.handshake_timeout_s:
                break
            self.counters["handshake_timeouts"] += 1
            self._close(c, reset=True)

    def _handshake(self, c, data):
        """SOCKS5 or HTTP CONNECT bytes before the connection opens."""
        c.inbox += data
        if len(c.inbox) > MAX_HANDSHAKE:
            raise ValueError("handshake too long")
        if c.mode == "socks" and c.phase == "greeting":
            if len(c.inbox) < 2:
                return
            if c.inbox[0] != 5:
                raise ValueError("not SOCKS5")
            n = c.inbox[1]
            if len(c.inbox) < 2 + n:
                return
            methods, c.inbox = c.inbox[2:2 + n], c.inbox[2 + n:]
            if 0 not in methods:
                c.outbox += b"\x05\xff"
                self._flush_and_close(c)
                return
            c.outbox += b"\x05\x00"
            c.phase = "request"
        if c.mode == "socks" and c.phase == "request":
            if len(c.inbox) < 5:
                return
            ver, cmd, _, atyp = c.inbox[:4]
            if ver != 5:
                raise ValueError("not SOCKS5")
            if atyp == 1:
                need, address = 10, None
            elif atyp == 4:
                need, address = 22, None
            elif atyp == 3:
                need = 7 + c.inbox[4]
            else:
                raise ValueError(f"SOCKS address type {atyp}")
            if len(c.inbox) < need:
                return
            if atyp == 3:
                # A name: only an IP address written out (Chromium sends even those as
                # names) is taken.
                address = literal_address(c.inbox[5:need - 2])
            if cmd != 1 or (atyp == 3 and address is None):
                # Only CONNECT; names are resolved by the client (socks5, not socks5h)
                # through the DNS proxy: reply "not supported".
                code = 7 if cmd != 1 else 8
                c.outbox += bytes([5, code, 0, 1]) + bytes(6)
                self._notice(f"socks{code}", "SOCKS request refused: only CONNECT to an IP "
                                             "address (resolve names locally: socks5://, not socks5h://)")
                self._flush_and_close(c)
                return
            if atyp != 3:
                raw = c.inbox[4:need - 2]
                address = socket.inet_ntop(socket.AF_INET if atyp == 1 else socket.AF_INET6, raw)
            port = struct.unpack("!H", c.inbox[need - 2:need])[0]
            c.inbox = c.inbox[need:]
            self._open(c, address, port)
            return
        if c.mode == "http_connect" and c.phase == "request":
            end = c.inbox.find(b"\r\n\r\n")
            if end < 0:
                return
            head = c.inbox[:end].decode("latin-1").split("\r\n")[0].split()
            c.inbox = c.inbox[end + 4:]
            if len(head) != 3 or head[0] != "CONNECT":
                c.outbox += b"HTTP/1.1 405 Method Not Allowed\r\n\r\n"
                self._flush_and_close(c)
                return
            try:
                address, port = parse_endpoint(head[1], "CONNECT")
                socket.inet_pton(socket.AF_INET6 if ":" in address else socket.AF_INET, address)
            except (proxy_error, OSError):
                c.outbox += b"HTTP/1.1 400 Bad Request\r\nX-HF-PEP: CONNECT needs IP:PORT\r\n\r\n"
                self._flush_and_close(c)
                return
            self._open(c, address, port)
