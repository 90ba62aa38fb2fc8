#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""How a client names its destination to the near HF-PEP: SOCKS5 (RFC 1928, no
authentication, CONNECT to an IP address or a host name) and HTTP CONNECT (RFC 9110,
to IP:PORT or HOST:PORT), with the replies that report the far proxy's answer. Host
names travel to the far proxy, which resolves them. Unfinished requests are bounded per source and in
all, and time out.

handshake_service is the part of pep_proxy (proxy.py) that reads these requests: it runs
in the proxy's thread, under its lock."""

import re
import socket
import struct

from .endpoint import parse_endpoint, proxy_error

MAX_HANDSHAKE = 8192           # bytes of a SOCKS or CONNECT request, at most
MAX_HOST_NAME = 253            # the PEP request's longest name (net/pep.h pep_max_name)
HOST_NAME = re.compile(r"[A-Za-z0-9_.-]+")

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


def host_name(name):
    """A SOCKS5 domain name or CONNECT host (bytes) as the far proxy takes it (letters,
    digits, '-', '_', '.'; at most 253), or None."""
    try:
        text = name.decode("ascii").rstrip(".")
    except UnicodeDecodeError:
        return None
    if not 0 < len(text) <= MAX_HOST_NAME or not HOST_NAME.fullmatch(text):
        return None
    return text


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
            if cmd != 1:
                c.outbox += bytes([5, 7, 0, 1]) + bytes(6)  # command not supported
                self._notice("socks7", "SOCKS request refused: only CONNECT is supported")
                self._flush_and_close(c)
                return
            if atyp == 3:
                # A name: an IP address written out (Chromium sends even those as names)
                # is taken as such, any other name goes to the far proxy, which resolves
                # it where the destination is (socks5h:// and socks5:// alike).
                raw = c.inbox[5:need - 2]
                address = literal_address(raw) or host_name(raw)
                if address is None:
                    c.outbox += bytes([5, 4, 0, 1]) + bytes(6)  # host unreachable
                    self._notice("socks_name", "SOCKS request refused: a destination name "
                                               "that is not a host name")
                    self._flush_and_close(c)
                    return
            else:
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
                address = literal_address(address.encode()) or host_name(address.encode())
            except proxy_error:
                address = None
            if address is None:
                c.outbox += (b"HTTP/1.1 400 Bad Request\r\n"
                             b"X-HF-PEP: CONNECT needs HOST:PORT\r\n\r\n")
                self._flush_and_close(c)
                return
            self._open(c, address, port)
