#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What every hfstack app shares: a parser whose errors are one line (exit 2), a
--version flag, Python logging on stderr (never on the machine-readable stdout), a
"did you mean" for misspelt names, and the periodic statistics and signal handling of
the long-running SIS clients."""

import argparse
import math
import difflib
import logging
import os
import select
import signal
import sys

from .version import __version__


class usage_error(ValueError):
    """A bad option, value or config: the app prints one line and exits 2."""


class one_line_parser(argparse.ArgumentParser):
    """argparse that raises usage_error instead of printing the usage and exiting, and
    suggests the nearest option for a misspelt one."""

    def error(self, message):
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            options = [o for a in self._actions if a.help != argparse.SUPPRESS
                       for o in a.option_strings]
            for word in message[len(prefix):].split():
                if word.startswith("--") and nearest(word.split("=")[0], options):
                    message += nearest(word.split("=")[0], options)
                    break
        raise usage_error(message)


def finite_float(text):
    """An argparse type: a finite number."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be finite: {text!r}")
    return v


def parse_snr_steps(text):
    """"SECONDS:DB,..." (--snr-steps) -> [(seconds, dB)], times non-negative and
    increasing; usage_error otherwise."""
    steps = []
    for item in text.split(","):
        try:
            t, db = (float(x) for x in item.split(":"))
        except ValueError:
            raise usage_error(f"--snr-steps: {item!r} is not SECONDS:DB")
        if not (math.isfinite(t) and math.isfinite(db)) or t < 0 or (steps and t <= steps[-1][0]):
            raise usage_error(f"--snr-steps: {item!r}: times must be finite, 0 or more and "
                              "increasing, SNRs finite")
        steps.append((t, db))
    return steps


def add_version(parser):
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit")


def add_renamed(parser, name, old_name, **kwargs):
    """The option `name`; `old_name`, its spelling of the previous release (when
    `--rate` meant a sample rate, a data rate, a line rate or rate adaptation, by app),
    is still accepted for the same setting but not shown in --help."""
    action = parser.add_argument(name, **kwargs)
    parser.add_argument(old_name, dest=action.dest, type=action.type, choices=action.choices,
                        metavar=action.metavar, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return action


def nearest(word, choices):
    """ ' (did you mean X?)' for the closest choice, or ''."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def setup_logging(prog, level="info"):
    """Log records on stderr as `prog: level: message`, GNU Radio's blocks' as
    `prog: level: block: message`; stdout stays for results."""
    from .hfstack_python import log_in_app_format
    log_in_app_format(prog)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{prog}: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel({"warn": "WARNING"}.get(level, level.upper()))
    return logging.getLogger(prog)


def add_sis_client_options(parser, retried="the SIS server", check_note=""):
    """The options every long-running SIS client app has: --server, --retry, the
    statistics, --check, --log-level and --version."""
    parser.add_argument("--server", default="127.0.0.1:5066",
                        help="SIS server HOST:PORT (default 127.0.0.1:5066)")
    parser.add_argument("--retry", type=float, default=5.0, metavar="SECONDS",
                        help=f"seconds between attempts to reconnect to {retried} (default 5)")
    parser.add_argument("--stats-interval", type=float, default=60.0,
                        help="seconds between JSON statistics lines (0: only at the end)")
    parser.add_argument("--stats", dest="stats_file",
                        help="write them to this file (default stdout)")
    parser.add_argument("--check", action="store_true",
                        help="check the options, print the settings as JSON and exit" + check_note)
    parser.add_argument("--log-level", default="info", choices=("debug", "info", "warn", "error"))
    add_version(parser)


class every:
    """Calls `action()` every `interval` seconds of the caller's clock (never when the
    interval is 0); `due(now)` runs it when its time has come and returns the next
    time, or None, for the caller's select timeout."""

    def __init__(self, interval, action, now):
        self.interval, self.action = interval, action
        self.next = now + interval if interval else None

    def due(self, now):
        if self.next is None:
            return None
        if now >= self.next:
            self.action()
            self.next = now + self.interval
        return self.next


class stop_event:
    """What threading.Event offers a stop request (set, is_set, wait), safe to set from a
    signal handler. Event.set() takes the event's lock, which the main thread holds for a
    few instructions of each wait(): a handler that ran there waited for itself forever
    (a node stopped by SIGTERM hung about once in a few hundred stops). Here set() takes
    no lock: it marks a flag and writes a byte to a pipe that every waiter selects on."""

    def __init__(self):
        self._read, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._set = False

    def set(self):
        if not self._set:
            self._set = True
            try:
                os.write(self._write, b"!")
            except BlockingIOError:  # a byte is already there: waiters wake anyway
                pass

    def is_set(self):
        return self._set

    def wait(self, timeout=None):
        """True once set; False after `timeout` seconds (None: no limit) without."""
        if not self._set:
            select.select([self._read], [], [], timeout)
        return self._set

    def __del__(self):
        for fd in (getattr(self, "_read", None), getattr(self, "_write", None)):
            if fd is not None:
                os.close(fd)


def stop_on_signals(stop):
    """SIGINT and SIGTERM call `stop()` (set before the app says it is up, so that a
    signal sent on that line is never the default's kill)."""
    signal.signal(signal.SIGINT, lambda *_: stop())
    signal.signal(signal.SIGTERM, lambda *_: stop())


def run_with_stats_out(run, stats_file=None):
    """`run(stats_out)`, the JSON statistics lines going to `stats_file` (appended) or
    stdout."""
    stats_out = open(stats_file, "a") if stats_file else sys.stdout
    try:
        run(stats_out)
    finally:
        if stats_out is not sys.stdout:
            stats_out.close()
