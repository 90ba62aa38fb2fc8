#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A Linux TUN device as GNU Radio message ports, and the IP client joined to one.

    tun_device     datagrams read from the device leave on `out`; PDUs on `in` are
                   written to it (one IP datagram each, no link header).
    ip_client_tun  hier block: tun_device <-> hfstack.ip_client, with the client's
                   `sis_in`/`sis_out`/`stats` ports, to attach to a node.

Opening a TUN device needs CAP_NET_ADMIN, unless it was made beforehand for the user:
    sudo ip tuntap add dev hf0 mode tun user $USER
    sudo ip link set hf0 up
after which GNU Radio (and GRC) attach to it unprivileged. `configure` (address, MTU,
routes, link up) runs iproute2 and needs the privilege too; leave it off for a device
set up by hand.

A device that is down, deleted or unwritable never stops the flowgraph: errors are
counted and logged once per kind, and a device that vanished is reattached every few
seconds while the flowgraph runs.
"""

import errno
import fcntl
import logging
import os
import select
import struct
import subprocess
import threading

import pmt
from gnuradio import gr

from .hfstack_python import ip_client

log = logging.getLogger(__name__)

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
IFNAMSIZ = 16
REATTACH_S = 5.0


class tun_error(RuntimeError):
    """The TUN device cannot be opened: the message says why and what to do."""


def open_tun(name):
    """Opens (creating if allowed) TUN device `name`; returns (fd, actual name)."""
    if not name or len(name.encode()) >= IFNAMSIZ:
        raise tun_error(f"TUN device name must be 1-{IFNAMSIZ - 1} bytes, not {name!r}")
    try:
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise tun_error("/dev/net/tun does not exist: load the tun module (modprobe tun) "
                        "or, in a container, pass the device in") from None
    except PermissionError:
        raise tun_error("/dev/net/tun is not accessible to this user") from None
    try:
        ifr = struct.pack(f"{IFNAMSIZ}sH", name.encode(), IFF_TUN | IFF_NO_PI)
        got = fcntl.ioctl(fd, TUNSETIFF, ifr)
    except OSError as e:
        os.close(fd)
        if e.errno == errno.EPERM:
            raise tun_error(
                f"not allowed to create or attach to TUN device {name}: run as root, or "
                f"make it for this user first (ip tuntap add dev {name} mode tun user "
                f"{os.environ.get('USER', 'NAME')})") from None
        if e.errno == errno.EBUSY:
            raise tun_error(f"TUN device {name} is in use by another program") from None
        raise tun_error(f"cannot open TUN device {name}: {os.strerror(e.errno)}") from None
    return fd, got[:IFNAMSIZ].rstrip(b"\0").decode()


def configure_tun(name, address=None, mtu=None, routes=(), netns=None,
                  congestion_control="cubic"):
    """Brings `name` up with `address` ("10.0.12.1/24" or an IPv6 prefix), `mtu` and
    `routes` (prefixes sent through it), with iproute2. The address's subnet and the
    routes get TCP congestion control `congestion_control` (None: the system's): BBR,
    the default of some kernels, keeps a few seconds of data in flight where an HF turn
    lasts minutes (docs/ip-client.md). Raises tun_error naming the failed command."""
    import ipaddress
    ip = ["ip"] + (["-n", netns] if netns else [])
    congestion = ["congctl", congestion_control] if congestion_control else []
    commands = []
    if mtu:
        commands.append(ip + ["link", "set", "dev", name, "mtu", str(int(mtu))])
    if address:
        commands.append(ip + ["addr", "replace", address, "dev", name])
    commands.append(ip + ["link", "set", "dev", name, "up"])
    subnet = [str(ipaddress.ip_interface(address).network)] if address and congestion else []
    for r in subnet + list(routes):
        commands.append(ip + ["route", "replace", r, "dev", name] + congestion)
    for cmd in commands:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        if done.returncode != 0:
            raise tun_error(f"'{' '.join(cmd)}' failed: {done.stderr.strip()}")


class tun_device(gr.basic_block):
    """TUN device `name` on message ports `in` and `out` (PDUs of IP datagrams).
    The device is opened here (an unusable one raises tun_error at once); its reader
    thread runs between start() and stop()."""

    def __init__(self, name="hf0", mtu=1500):
        gr.basic_block.__init__(self, name="tun_device", in_sig=None, out_sig=None)
        self.requested_name = name
        self.mtu = int(mtu)
        self.fd, self.name = open_tun(name)
        self.counters = {"datagrams_read": 0, "bytes_read": 0, "datagrams_written": 0,
                         "bytes_written": 0, "write_errors": 0, "read_errors": 0,
                         "reattached": 0}
        self._noticed = set()
        self._lock = threading.Lock()
        self._stop_r = self._stop_w = None
        self._thread = None
        self.message_port_register_in(pmt.intern("in"))
        self.message_port_register_out(pmt.intern("out"))
        self.set_msg_handler(pmt.intern("in"), self._write)

    def _notice(self, kind, text):
        if kind not in self._noticed:
            self._noticed.add(kind)
            log.warning("%s: %s (counted from now on, not logged again)", self.name, text)

    def _write(self, msg):
        data = pmt.cdr(msg) if pmt.is_pair(msg) else msg
        if not pmt.is_u8vector(data):
            self._notice("not_bytes", "dropping a message that is not a datagram")
            return
        datagram = bytes(pmt.u8vector_elements(data))
        with self._lock:
            fd = self.fd
        if fd is None:
            self.counters["write_errors"] += 1
            self._notice("detached", "device gone: dropping datagrams until it is back")
            return
        try:
            os.write(fd, datagram)
            self.counters["datagrams_written"] += 1
            self.counters["bytes_written"] += len(datagram)
        except OSError as e:
            self.counters["write_errors"] += 1
            why = "is down" if e.errno == errno.EIO else os.strerror(e.errno)
            self._notice(f"write_{e.errno}", f"cannot write: the device {why}")

    def start(self):
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._read_loop, name=f"tun {self.name}",
                                        daemon=True)
        self._thread.start()
        return True

    def stop(self):
        if self._thread:
            os.write(self._stop_w, b"x")
            self._thread.join(5)
            os.close(self._stop_r)
            os.close(self._stop_w)
            self._thread = None
        return True

    def close(self):
        """Releases the device (a device not made persistent disappears)."""
        self.stop()
        with self._lock:
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None

    def _reattach(self):
        try:
            fd, _ = open_tun(self.name)
        except tun_error as e:
            self._notice("reattach", f"cannot reattach: {e}")
            return
        with self._lock:
            self.fd = fd
        self.counters["reattached"] += 1
        log.info("%s: reattached", self.name)

    def _read_loop(self):
        try:
            self._read_datagrams()
        except Exception:  # a bug must be loud, but must not silently end the reader
            log.exception("%s: reader stopped by an internal error", self.name)

    def _read_datagrams(self):
        while True:
            with self._lock:
                fd = self.fd
            watch = [self._stop_r] + ([fd] if fd is not None else [])
            ready, _, _ = select.select(watch, [], [], None if fd is not None else REATTACH_S)
            if self._stop_r in ready:
                return
            if fd is None:
                self._reattach()
                continue
            try:
                datagram = os.read(fd, 65536)
            except BlockingIOError:
                continue
            except OSError as e:
                # The device was deleted (EBADFD) or is unusable: let go and retry later.
                self.counters["read_errors"] += 1
                self._notice(f"read_{e.errno}", f"cannot read ({os.strerror(e.errno)}): "
                             f"reattaching every {REATTACH_S:.0f} s")
                with self._lock:
                    os.close(fd)
                    self.fd = None
                continue
            if not datagram:
                continue
            self.counters["datagrams_read"] += 1
            self.counters["bytes_read"] += len(datagram)
            self.message_port_pub(pmt.intern("out"),
                                  pmt.cons(pmt.make_dict(),
                                           pmt.init_u8vector(len(datagram), list(datagram))))


class ip_client_tun(gr.hier_block2):
    """The STANAG 5066 IP client on a TUN device: connect `sis_out` to a node's
    `sis_in` and the node's `sis_out` to `sis_in`; `stats` carries the client's
    counters. `options` are the IP client's ("routes=10.0.12.2=0.0.0.2; mtu=1500",
    see hfstack.ip_client_option_help()). With `configure`, the device gets `address`,
    the MTU and `routes` (prefixes to send over HF) through iproute2."""

    def __init__(self, tun="hf0", options="", client_id=0x7FFF0009, stats_interval=10.0,
                 configure=False, address="", routes=()):
        gr.hier_block2.__init__(self, "ip_client_tun", gr.io_signature(0, 0, 0),
                                gr.io_signature(0, 0, 0))
        for port in ("sis_in",):
            self.message_port_register_hier_in(port)
        for port in ("sis_out", "stats"):
            self.message_port_register_hier_out(port)
        self.client = ip_client(options, client_id, stats_interval)
        mtu = int(self.client.option("mtu"))
        self.tun = tun_device(tun, mtu)
        # Its log lines name the device: two clients in one process (a testbed's two
        # stations) said "bound to SAP 9, MTU 1500" alike. An alias is unique in the
        # process: a device name used again (a test's) keeps the plain lines.
        try:
            self.client.set_block_alias(f"on {self.tun.name}")
        except RuntimeError:
            pass
        if configure:
            configure_tun(self.tun.name, address or None, mtu, list(routes))
        self.msg_connect(self.tun, "out", self.client, "ip_in")
        self.msg_connect(self.client, "ip_out", self.tun, "in")
        self.msg_connect(self, "sis_in", self.client, "sis_in")
        self.msg_connect(self.client, "sis_out", self, "sis_out")
        self.msg_connect(self.client, "stats", self, "stats")

    @property
    def name(self):
        return self.tun.name

    def close(self):
        self.tun.close()
