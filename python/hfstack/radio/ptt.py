#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Push-to-talk: the switches that key a transmitter (a serial port's RTS or DTR line,
or Hamlib's rigctld daemon) and the block that follows the modem transmitter's `ptt`
port with them. VOX radios need none of it.

    spec: vox | serial:PORT[:rts|:dtr] | rigctld[:HOST[:PORT]]   (parse_ptt)
"""

import socket
import threading

try:
    import Hamlib  # python3-hamlib
except ImportError:  # rigctld's text protocol by hand instead
    Hamlib = None

import pmt
from gnuradio import gr

from .errors import device_error, radio_error


def parse_ptt(spec):
    """("vox",), ("serial", PORT, "rts"|"dtr") or ("rigctld", HOST, PORT) from a PTT
    spec; radio_error naming the spec when it is malformed. Opens nothing."""
    parts = spec.split(":")
    if spec == "vox":
        return ("vox",)
    if parts[0] == "serial" and len(parts) in (2, 3) and parts[1]:
        line = parts[2] if len(parts) == 3 else "rts"
        if line not in ("rts", "dtr"):
            raise radio_error(f"ptt {spec!r}: the serial line is rts or dtr")
        return ("serial", parts[1], line)
    if parts[0] == "rigctld" and len(parts) <= 3:
        host = parts[1] if len(parts) > 1 and parts[1] else "127.0.0.1"
        try:
            port = int(parts[2]) if len(parts) > 2 else 4532
            if not 0 < port < 65536:
                raise ValueError(port)
        except ValueError:
            raise radio_error(f"ptt {spec!r}: the rigctld port is a number 1..65535")
        return ("rigctld", host, port)
    raise radio_error(f"ptt {spec!r}: use vox, serial:PORT[:rts|:dtr] or rigctld[:HOST[:PORT]]")


class hamlib_rigctld:
    """rigctld through Hamlib's own bindings (python3-hamlib): its NET rigctl model
    speaks the daemon's protocol, so answers and errors are Hamlib's, not parsed here."""

    def __init__(self, host, port):
        Hamlib.rig_set_debug(Hamlib.RIG_DEBUG_NONE)  # Hamlib traces to stderr otherwise
        self.rig = Hamlib.Rig(Hamlib.RIG_MODEL_NETRIGCTL)
        self.rig.set_conf("rig_pathname", f"{host}:{port}")
        # One try of 5 s per command: PTT must not hang the transmitter for long.
        self.rig.set_conf("timeout", "5000")
        self.rig.set_conf("retry", "0")
        self.rig.open()
        self.check("cannot connect")

    def check(self, what="rigctld answered"):
        if self.rig.error_status != Hamlib.RIG_OK:
            raise OSError(f"{what} (Hamlib: {Hamlib.rigerror2(self.rig.error_status).strip()})")

    def key(self, on):
        self.rig.set_ptt(Hamlib.RIG_VFO_CURR, Hamlib.RIG_PTT_ON if on else Hamlib.RIG_PTT_OFF)
        self.check()

    def keyed(self):
        """The PTT state rigctld reports (`t`)."""
        on = self.rig.get_ptt(Hamlib.RIG_VFO_CURR)
        self.check()
        return on != Hamlib.RIG_PTT_OFF

    def close(self):
        self.rig.close()


class rigctld_text:
    """rigctld's text protocol by hand (`T 1` / `T 0`, answers RPRT n), for machines
    without python3-hamlib."""

    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=5.0)

    def command(self, line):
        self.sock.sendall(line)
        return self.sock.recv(64).decode(errors="replace").strip()

    def key(self, on):
        reply = self.command(b"T 1\n" if on else b"T 0\n")
        if not reply.startswith("RPRT 0"):
            raise OSError(f"rigctld answered {reply!r}")

    def keyed(self):
        reply = self.command(b"t\n")
        if reply.startswith("RPRT"):
            raise OSError(f"rigctld answered {reply!r}")
        return reply != "0"

    def close(self):
        self.sock.close()


class ptt_switch:
    """Keys the transmitter: serial:PORT[:rts|:dtr] raises a modem-control line (through
    pyserial, which sets both lines low before the port opens, so opening never keys the
    radio), rigctld[:HOST[:PORT]] sets PTT through Hamlib's daemon (with Hamlib's Python
    bindings where installed, else its text protocol). A port or daemon that cannot be
    used, or refuses to unkey at opening, raises device_error."""

    def __init__(self, spec, use_hamlib=None):
        self.spec = spec
        self.port = None
        self.sock = None
        how = parse_ptt(spec)
        if how[0] == "serial":
            import serial
            _, device, self.line = how
            where = f"ptt serial port {device}"
            self.port = serial.Serial()
            self.port.port = device
            # Radios use the other line for CW keying or CAT power: both stay low.
            self.port.rts = self.port.dtr = False
            try:
                self.port.open()
            except (serial.SerialException, OSError) as e:
                self.port = None
                raise device_error(f"{where}: {getattr(e, 'strerror', None) or e}")
        elif how[0] == "rigctld":
            _, host, port = how
            where = f"ptt rigctld at {host}:{port}"
            hamlib = Hamlib is not None if use_hamlib is None else use_hamlib
            try:
                self.sock = (hamlib_rigctld if hamlib else rigctld_text)(host, port)
            except OSError as e:
                raise device_error(f"{where}: {e.strerror or e}")
        else:
            raise radio_error(f"ptt {spec!r}: vox needs no switch")
        try:
            self.release()
        except OSError as e:
            self.close()
            raise device_error(f"{where}: {e.strerror or e}")

    @property
    def closed(self):
        return self.port is None and self.sock is None

    def key(self, on):
        if self.port is not None:
            setattr(self.port, self.line, bool(on))
        else:
            self.sock.key(on)

    def keyed(self):
        """Whether the transmitter is keyed: the serial line, or rigctld's PTT state."""
        if self.port is not None:
            return bool(getattr(self.port, self.line))
        return self.sock.keyed()

    def release(self):
        """Unkeyed: both serial lines low, or PTT off through rigctld."""
        if self.port is not None:
            self.port.rts = self.port.dtr = False
        else:
            self.key(False)

    def close(self):
        if self.port is not None:
            self.port.close()
            self.port = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None


class ptt_control(gr.basic_block):
    """Follows the transmitter's `ptt` port: keys at once on #t, unkeys tail_s after #f
    (the samples still in the sound card's or USRP's buffer must go out first)."""

    def __init__(self, switch, tail_s):
        gr.basic_block.__init__(self, "ptt_control", None, None)
        self.switch, self.tail_s = switch, tail_s
        self.lock = threading.Lock()
        self.generation = 0
        self.timer = None
        self.failed = None
        self.message_port_register_in(pmt.intern("ptt"))
        self.set_msg_handler(pmt.intern("ptt"), self.handle)

    def set(self, on, generation=None):
        with self.lock:
            if generation is not None and generation != self.generation:
                return  # keyed again (or stopped) meanwhile
            if self.switch.closed:
                return
            try:
                self.switch.key(on)
            except OSError as e:
                if self.failed is None:
                    self.failed = str(e)
                    self.logger.error(f"PTT {self.switch.spec}: {e}")

    def handle(self, msg):
        on = pmt.is_true(msg)
        with self.lock:
            self.generation += 1
            generation = self.generation
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if not on:
                self.timer = threading.Timer(self.tail_s, self.set, (False, generation))
                self.timer.daemon = True
                self.timer.start()
        if on:
            self.set(True)

    def stop(self):
        with self.lock:
            self.generation += 1  # a pending tail can no longer act
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
        self.set(False)
        return True

    def close(self):
        """Unkeys and lets the port or daemon go (GNU Radio may call stop() later, from
        its own thread: it then finds the switch closed)."""
        self.stop()
        with self.lock:
            self.switch.close()
