#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""hfstack-console: ping and throughput tests against a live STANAG 5066 SIS server.

The live twin of hfstack-sim: the same test client (traffic/test_client.h) runs as a
SIS client over TCP (STANAG 5066 Annex A; ours is the sis_server block, e.g. from
hfstack-node) in real time, and the results come out in the same rows and files.
Give --far-port to drive both ends from here; otherwise run `hfstack-console echo`
on the far node. --time-scale matches a server whose clock runs faster than real time
(hfstack-node --time-scale), so times and rates read in protocol seconds.

  hfstack-console echo --host 10.0.0.6                          (on the far node)
  hfstack-console ping --host 10.0.0.5 --peer 0.0.0.2 --pings 5
  hfstack-console ping --port 5066 --far-port 5067 --peer 0.0.0.2 --gap 0
  hfstack-console throughput --port 5066 --far-port 5067 --peer 0.0.0.2 --bytes 100k \\
      --line-rate 9600 --plot saw.png
  hfstack-console throughput --peer 0.0.0.2 --acknowledged --duration 3600 --csv run.csv
"""

import argparse
import logging
import math
import selectors
import signal
import socket
import sys
import time

from gnuradio.hfstack import cli
from gnuradio.hfstack import dl
from gnuradio.hfstack import sim
from gnuradio.hfstack import traffic_report as tr
from gnuradio.hfstack.sis.test_client import link_failure, sis_test_client

PROG = "hfstack-console"
log = logging.getLogger(PROG)

TOO_LARGE = int(dl.sis_unidata_rejected_reason.updu_larger_than_mtu)
# "Until --duration": the client sends as long as the node lets it.
UNLIMITED_BYTES = 2 ** 64 - 1
# Deliveries this close (real seconds) are one delivery instant: network and scheduling
# jitter, not separate receptions.
SAME_INSTANT_REAL_S = 0.1
DEFAULT_DURATION_S = 600.0


def node_address(text):
    """A STANAG 5066 node address: dotted a.b.c.d (0.0.0.2) or its integer value."""
    try:
        if text.strip().isdigit():
            value = int(text)
            if value >= 1 << 29:  # 28 address bits and the group flag
                raise ValueError
            return value
        return dl.parse_address(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a node address (a.b.c.d such as 0.0.0.2, or an integer)")


def port_number(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (1..65535)")
    return value


class stop_request:
    """SIGINT / SIGTERM end the run cleanly: the handler only notes it, and the wake-up
    socket makes the event loop see it at once instead of after its sleep."""

    def __init__(self):
        self.signal_name = None
        self.wakeup, poke = socket.socketpair()
        self._poke = poke
        for s in (self.wakeup, poke):
            s.setblocking(False)
        signal.set_wakeup_fd(poke.fileno(), warn_on_full_buffer=False)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._note)

    def _note(self, signum, frame):
        self.signal_name = signal.Signals(signum).name

    def drain(self):
        try:
            while self.wakeup.recv(64):
                pass
        except (BlockingIOError, InterruptedError):
            pass


class run_result:
    def __init__(self, status, reason, end_s, real_s):
        self.status = status    # completed, duration, interrupted, failed
        self.reason = reason
        self.end_time_s = end_s  # protocol seconds since the start
        self.real_s = real_s

    @property
    def completed(self):
        return self.status == "completed"


def serve(near, far, finished, args, stop, progress=None, when_bound=None):
    """Runs until finished(), --duration (real seconds), a signal or a failure. The far
    client starts first and the near one only once the far one is bound, so that no
    ping or data reaches a SAP nobody has bound yet; when_bound() is called once the
    near one is."""
    links = [link for link in (far, near) if link]
    scale = args.time_scale
    duration = args.duration if args.duration else math.inf
    t0 = time.monotonic()

    def clock():
        return (time.monotonic() - t0) * scale

    def result(status, reason=""):
        return run_result(status, reason, clock(), time.monotonic() - t0)

    selector = selectors.DefaultSelector()
    selector.register(stop.wakeup, selectors.EVENT_READ, None)
    for link in links:
        selector.register(link.sock, selectors.EVENT_READ, link)
    (far or near).start(clock())
    try:
        while True:
            now = clock()
            if not near.started and far.client.report().bound:
                near.start(now)
            if far and near.client.report().bound:
                far.client.release_sender(now)  # a held two-way sender may start now
                far.collect()
            if when_bound and near.client.report().bound:
                when_bound()
                when_bound = None
            for link in links:
                link.serve_timer(now)
            for link in links:
                report = link.client.report()
                if report.error:
                    return result("failed", f"{link.role} client on {link.where}: {report.error}")
                if report.rejections.get(TOO_LARGE):
                    # Every later U_PDU of that size would be rejected too.
                    return result("failed", f"{link.role} node ({link.where}) rejects the "
                                            "U_PDUs as larger than its MTU")
            if finished():
                return result("completed")
            if stop.signal_name:
                return result("interrupted", f"stopped by {stop.signal_name}")
            real_left = t0 + duration - time.monotonic()
            if real_left <= 0:
                return result("duration", f"--duration {duration:g} s reached")
            if progress:
                progress(now)
            wait = real_left
            for link in links:
                wait = min(wait, (link.deadline() - now) / scale)
            if progress:
                wait = min(wait, 0.5)
            for link in links:
                events = selectors.EVENT_READ | (selectors.EVENT_WRITE if link.backlog else 0)
                selector.modify(link.sock, events, link)
            for key, events in selector.select(None if math.isinf(wait) else max(0.0, wait)):
                if key.data is None:
                    stop.drain()
                    continue
                if events & selectors.EVENT_WRITE:
                    key.data.send()
                if events & selectors.EVENT_READ:
                    key.data.receive(clock())
    except link_failure as e:
        return result("failed", str(e))
    finally:
        selector.close()


def never_bound(*links):
    return any(link and math.isnan(link.client.report().bound_at) for link in links)


def finish(result, links, rows_and_output, normal_ends=()):
    """Closes the links, writes what was measured and picks the exit code: 2 when the
    test never got going (bind rejected, server gone before the bind), 1 when it did
    not finish, 0 when it did or ended one of the `normal_ends` ways."""
    for link in links:
        if link:
            link.close()
    if result.status == "failed" and never_bound(*links):
        print(f"{PROG}: {result.reason}", file=sys.stderr)
        return 2
    # Figures that cannot be right (or a test nobody answered) fail the run, saying why.
    problems = rows_and_output() or []
    for problem in problems:
        print(f"{PROG}: {problem}", file=sys.stderr)
    if problems:
        return 1
    if result.completed or result.status in normal_ends:
        return 0
    print(f"{PROG}: not finished: {result.reason}", file=sys.stderr)
    return 1


SCALE_HINT = ("--line-rate and --time-scale must match the server (hfstack-node --time-scale N "
              "needs --time-scale N here)")


def least_air_time(rate, nbytes):
    """Seconds the shortest STANAG 4539 transmission of `nbytes` at `rate` bps lasts
    (any interleaver the modem has), or None for a rate STANAG 4539 lacks."""
    if not rate:
        return None
    times = [sim.s4539_air_time(m, nbytes) for m in sim.mode_names()
             if m.startswith(f"{rate:g}") and m[len(f"{rate:g}"):].isalpha() and sim.s4539_mode(m)]
    return min(times) if times else None


def implausible_throughput(rows, rate):
    """Rows whose throughput exceeds the nominal rate: wrong --line-rate or --time-scale."""
    return [f"{row['flow']}: {row['throughput_bps']:.0f} bit/s is {row['utilisation_pct']:.0f} % "
            f"of --line-rate {rate:g} bit/s, which no link delivers: {SCALE_HINT}"
            for row in rows if row.get("utilisation_pct") and row["utilisation_pct"] > 100]


def ping_problems(rows, args, target):
    """Unanswered pings and round trips shorter than two transmissions' air time."""
    problems = []
    lost = [row["ping"] for row in rows if row["rtt_s"] is None]
    if lost:
        problems.append(f"{target}: {len(lost)} of {len(rows)} pings not answered "
                        f"(is the peer address right, and does the far end run "
                        f"`hfstack-console echo` or --far-port?)")
    least = least_air_time(args.line_rate, args.ping_bytes)
    if least is not None:
        short = [row for row in rows if row["rtt_s"] is not None and row["rtt_s"] < 2 * least]
        if short:
            problems.append(f"{target}: round trip {short[0]['rtt_s']} s is shorter than the "
                            f"air time of a ping and its answer at {args.line_rate:g} bit/s "
                            f"({2 * least:.2f} s): {SCALE_HINT}")
    return problems


def report_dict(link):
    r = link.client.report()
    d = {name: getattr(r, name) for name in (
        "bound", "bound_at", "error", "updus_sent", "bytes_sent", "updus_confirmed",
        "bytes_confirmed", "updus_rejected", "first_send_at", "flow_off", "updus_received",
        "bytes_received", "duplicates", "out_of_order", "corrupt", "foreign")}
    d["rejections"] = {str(int(k)): v for k, v in r.rejections.items()}
    d["pings"] = tr.ping_rows(r.pings)
    d["server"] = link.where
    if link.counts_answers:
        d["pings_answered"] = link.pings_answered
    return d


def document(args, result, rows, links, **extra):
    doc = {
        "config": {k: v for k, v in vars(args).items() if k != "command"},
        "nominal_bps": args.line_rate, "end_time_s": result.end_time_s, "real_s": result.real_s,
        "time_scale": args.time_scale, "completed": result.completed,
        "stopped": "" if result.completed else result.reason, "rows": rows,
        "clients": {link.role: report_dict(link) for link in links if link},
    }
    doc.update(extra)
    return tr.clean(doc)


def steady_utilisation(delivered, nominal_bps, same_instant_s):
    """As the simulator: the bytes after the first delivery instant over the time from
    it to the last delivery; NaN with fewer than three instants. In real time one
    reception's U_PDUs reach us a few milliseconds apart, not at one instant:
    deliveries closer than same_instant_s count as one."""
    if not nominal_bps or not delivered:
        return math.nan
    instants = [[delivered[0]]]
    for point in delivered[1:]:
        if point[0] - instants[-1][-1][0] > same_instant_s:
            instants.append([])
        instants[-1].append(point)
    if len(instants) < 3:
        return math.nan
    first_t, before = instants[0][-1]
    last_t, total = delivered[-1]
    return (total - before) * 8 / (nominal_bps * (last_t - first_t))


def clock_name(args):
    """What the time axis of a plot is: protocol time on a scaled server."""
    return "protocol" if args.time_scale != 1 else "real"


def time_note(result, scale):
    note = f"{result.real_s:.1f} s real"
    if scale != 1:
        note += f" = {result.end_time_s:.0f} s protocol time"
    return note


def client_configs(args, test):
    """The near and far clients' settings; the flow byte tells their data apart."""
    near = tr.client_config_from(args, test)
    near.flow = 0
    far = tr.client_config_from(args, test)
    far.flow = 1
    far.pings = 0
    far.send_bytes = 0
    return near, far


def connect(args, near_config, far_config):
    far = None
    if args.far_port:
        far = sis_test_client("far", args.far_host or args.host, args.far_port, far_config)
    try:
        near = sis_test_client("near", args.host, args.port, near_config)
    except ValueError:
        if far:
            far.close()
        raise
    return near, far


def cmd_ping(args, stop):
    near_config, far_config = client_configs(args, "ping")
    near_config.peer = args.peer
    far_config.echo = True
    near, far = connect(args, near_config, far_config)
    target = f"{args.host}:{args.port} -> {dl.address_to_string(args.peer)}"
    bar = tr.progress_bar(args.pings, enabled=not args.quiet)

    def progress(now):
        pings = near.client.report().pings
        answered = sum(1 for p in pings if not math.isnan(p.rtt_s))
        bar.update(len(pings), f"{answered} of {args.pings} answered, {now:.0f} s")

    result = serve(near, far, near.client.done, args, stop, progress if bar.enabled else None)
    bar.close()

    def output():
        rows = tr.ping_rows(near.client.report().pings)
        tr.emit(args, rows, document(args, result, rows, (near, far), ping=rows),
                plot=lambda path: tr.plot_pings(rows, path, target, clock_name(args)))
        if not args.quiet and args.csv != "-" and args.json != "-":
            print(tr.ping_summary_text(target, rows, time_note(result, args.time_scale)))
        return ping_problems(rows, args, target)

    return finish(result, (near, far), output)


def flow_row(label, sender, sink, flow, end_s, nominal_bps, same_instant_s):
    """One flow as the simulator reports it: U_PDU bytes delivered x 8 over the time
    from the first send to the end of the run."""
    tx, rx = sender.client.report(), sink.client.report()
    delivered = rx.received_by_flow.get(flow, [])
    start = 0.0 if math.isnan(tx.first_send_at) else tx.first_send_at
    row = tr.throughput_row(label, delivered[-1][1] if delivered else 0, end_s - start,
                            nominal_bps, steady_utilisation(delivered, nominal_bps, same_instant_s))
    row.update({"updus": len(delivered), "lost_or_late": rx.out_of_order,
                "duplicates": rx.duplicates, "corrupt": rx.corrupt,
                "rejected": tx.updus_rejected})
    return row, (start, delivered)


def cmd_throughput(args, stop):
    if args.two_way and not args.far_port:
        raise ValueError("--two-way needs --far-port (both ends driven from here)")
    if args.two_way and args.near_address is None:
        raise ValueError("--two-way needs --near-address: the node address the far end "
                         "sends to")
    if not args.far_port:
        # Bytes handed to the local node are no throughput (they used to give 71 Mbit/s
        # with nobody at the far end): from here only the node's delivery confirmations
        # say what crossed the link.
        if args.non_arq:
            raise ValueError("non-ARQ throughput needs --far-port: without confirmations "
                             "nothing here sees what reached the far end")
        if not args.acknowledged:
            log.info("no --far-port: counting the bytes the node confirms delivered "
                     "(--acknowledged)")
            args.acknowledged = True
    near_config, far_config = client_configs(args, "throughput")
    near_config.peer = args.peer
    near_config.send_bytes = args.bytes or UNLIMITED_BYTES
    if args.two_way:
        far_config.peer = args.near_address
        far_config.send_bytes = args.bytes or UNLIMITED_BYTES
        # The far client binds first; its data must wait until the near one has bound
        # its SAP, or the first U_PDUs reach a SAP nobody has bound.
        far_config.hold_sender = True
    near, far = connect(args, near_config, far_config)
    peer = dl.address_to_string(args.peer)
    flows = []  # (label, sender, sink, flow byte)
    if far:
        flows.append(("near->far", near, far, 0))
        if args.two_way:
            flows.append(("far->near", far, near, 1))

    def finished():
        if not args.bytes:
            return False  # until --duration
        if not far:
            return near.client.done()
        for _, sender, sink, flow in flows:
            series = sink.client.report().received_by_flow.get(flow)
            if not sender.client.done() or not series or \
                    series[-1][1] < sender.client.report().bytes_sent:
                return False
        return True

    total = args.bytes * len(flows or [near]) if args.bytes else args.duration
    bar = tr.progress_bar(total, enabled=not args.quiet)
    started = time.monotonic()

    def progress(now):
        if not args.bytes:
            bar.update(time.monotonic() - started, f"{now:.0f} s")
            return
        if flows:
            done = sum(sink.client.report().bytes_received for _, _, sink, _ in flows)
        else:
            r = near.client.report()
            done = r.bytes_confirmed if args.acknowledged else r.bytes_sent
        bar.update(done, f"{done} of {total} bytes, {now:.0f} s")

    result = serve(near, far, finished, args, stop, progress if bar.enabled else None)
    bar.close()

    def output():
        rows, series = [], {}
        for label, sender, sink, flow in flows:
            row, series[label] = flow_row(label, sender, sink, flow, result.end_time_s,
                                          args.line_rate, SAME_INSTANT_REAL_S * args.time_scale)
            rows.append(row)
        if not far:
            # Nobody here sees the far end: count what the node confirmed delivered (with
            # --acknowledged) or took from us.
            r = near.client.report()
            start = 0.0 if math.isnan(r.first_send_at) else r.first_send_at
            row = tr.throughput_row(f"near->{peer} (confirmed)", r.bytes_confirmed,
                                    result.end_time_s - start, args.line_rate, math.nan)
            row.update({"updus": r.updus_confirmed, "rejected": r.updus_rejected})
            rows.append(row)
        tr.emit(args, rows,
                document(args, result, rows, (near, far),
                         series={label: points for label, (_, points) in series.items()}),
                series, args.line_rate,
                f"{args.host}:{args.port} -> {peer} {'non-ARQ' if args.non_arq else 'ARQ'}, "
                f"{args.updu_size}-byte U_PDUs", clock_name(args),
                same_instant_s=SAME_INSTANT_REAL_S * args.time_scale)
        if not args.quiet and args.csv != "-" and args.json != "-":
            unfinished = "" if result.completed or not args.bytes else \
                f"; not finished: {result.reason}"
            print(f"[{time_note(result, args.time_scale)}{unfinished}]")
        return implausible_throughput(rows, args.line_rate)

    # Without --bytes the run is meant to end at --duration or Ctrl-C (hfstack-sim: 0).
    return finish(result, (near, far), output, () if args.bytes else ("duration", "interrupted"))


def cmd_echo(args, stop):
    config, _ = client_configs(args, "throughput")
    config.pings = 0
    config.send_bytes = 0
    config.echo = True
    link = sis_test_client("echo", args.host, args.port, config)

    def ready():
        # A log record (stderr): --csv - / --json - keep stdout to themselves.
        log.info(f"bound SAP {config.sap} at {link.where}: echoing pings and sinking data; "
                 "Ctrl-C stops")

    result = serve(link, None, lambda: False, args, stop, when_bound=ready)

    def output():
        r = link.client.report()
        rows = []
        for flow, delivered in sorted(r.received_by_flow.items()):
            same_instant_s = SAME_INSTANT_REAL_S * args.time_scale
            # The sender's start is not seen here: time from the first delivery.
            span = delivered[-1][0] - delivered[0][0]
            row = tr.throughput_row(f"flow {flow}", delivered[-1][1], span, args.line_rate,
                                    steady_utilisation(delivered, args.line_rate, same_instant_s))
            if span <= same_instant_s:  # all at one instant: no rate to speak of
                row["throughput_bps"] = row["utilisation_pct"] = None
            row["updus"] = len(delivered)
            rows.append(row)
        if rows:  # the receiver's counters cover every flow into it
            rows[-1].update({"lost_or_late": r.out_of_order, "duplicates": r.duplicates,
                             "corrupt": r.corrupt})
        if link.pings_answered or not rows:
            rows.append({"flow": "pings", "updus": link.pings_answered})
        series = {f"flow {flow}": points for flow, points in r.received_by_flow.items()}
        tr.emit(args, rows, document(args, result, rows, (link,), series=series))
        if not args.quiet and args.csv != "-" and args.json != "-":
            print(f"answered {link.pings_answered} pings, received {r.updus_received} data "
                  f"U_PDUs ({r.bytes_received} bytes), {r.foreign} foreign "
                  f"[{time_note(result, args.time_scale)}]")

    # The echo runs until stopped: a signal or --duration is its normal end.
    return finish(result, (link,), output, ("duration", "interrupted"))


def add_connection_options(p, far):
    g = p.add_argument_group("connection")
    g.add_argument("--host", default="127.0.0.1", help="SIS server (default 127.0.0.1)")
    g.add_argument("--port", type=port_number, default=5066,
                   help="SIS port (default 5066, the STANAG 5066 Annex A port)")
    if far:
        g.add_argument("--peer", type=node_address, required=True,
                       help="node address of the far end: a.b.c.d (0.0.0.2) or an integer")
        g.add_argument("--far-host", default=None, help="far end's SIS server (default --host)")
        g.add_argument("--far-port", type=port_number, default=None,
                       help="also connect to the far end's SIS server and answer there "
                            "(otherwise run `hfstack-console echo` on the far node)")
    g.add_argument("--time-scale", type=tr.positive_float, default=None,
                   help="protocol seconds per real second, for a server with a sped-up "
                        "clock (hfstack-node --time-scale); default 1, or --node-stats'")
    g.add_argument("--node-stats", metavar="FILE",
                   help="our node's statistics (hfstack-node --stats FILE): --line-rate and "
                        "--time-scale come from its header unless given")
    g.add_argument("--duration", type=tr.positive_float, default=None,
                   help="real seconds to run at most (default: "
                        + (f"{DEFAULT_DURATION_S:g})" if far else "until Ctrl-C)"))
    cli.add_renamed(g, "--line-rate", "--rate", type=tr.positive_float, default=None, metavar="BPS",
                    help="nominal bit rate of the link, for the utilisation figures "
                         "(default: none, or --node-stats')")


def from_node_stats(args):
    """--line-rate and --time-scale from the header line of our node's statistics file,
    where the options leave them out; then the defaults."""
    if args.node_stats:
        import json
        try:
            with open(args.node_stats) as f:
                header = json.loads(f.readline())
        except OSError as e:
            raise ValueError(f"--node-stats {args.node_stats}: {e.strerror}")
        except ValueError:
            raise ValueError(f"--node-stats {args.node_stats}: no JSON header line")
        if header.get("type") != "header":
            raise ValueError(f"--node-stats {args.node_stats}: the first line is not "
                             "hfstack-node's header")
        if args.line_rate is None:
            args.line_rate = float(str(header["mode"]).rstrip("SLUN"))
        if args.time_scale is None:
            args.time_scale = float(header["time_scale"])
        log.info(f"from {args.node_stats}: --line-rate {args.line_rate:g} --time-scale "
                 f"{args.time_scale:g}")
    if args.time_scale is None:
        args.time_scale = 1.0


def main(argv=None):
    cli.setup_logging(PROG)
    parser = cli.one_line_parser(
        prog=PROG, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    cli.add_version(parser)
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("ping", help="ARQ or non-ARQ ping: round trips, first and later")
    add_connection_options(p, far=True)
    tr.add_client_options(p)
    tr.add_output_options(p)
    p = sub.add_parser("throughput", help="send-only, acknowledged or two-way throughput")
    add_connection_options(p, far=True)
    p.add_argument("--two-way", action="store_true",
                   help="both ends send at once (needs --far-port and --near-address)")
    p.add_argument("--near-address", type=node_address, default=None,
                   help="node address of the --port server, where the far end sends with "
                        "--two-way")
    tr.add_client_options(p)
    tr.add_output_options(p)
    p = sub.add_parser("echo", help="answer pings and sink data until Ctrl-C or --duration")
    add_connection_options(p, far=False)
    tr.add_client_options(p)
    tr.add_output_options(p)
    try:
        args = parser.parse_args(argv)
        if not args.command:
            parser.error("choose a command: ping, throughput or echo")
        from_node_stats(args)
        if args.command != "echo" and args.duration is None:
            args.duration = DEFAULT_DURATION_S
        stop = stop_request()
        return {"ping": cmd_ping, "throughput": cmd_throughput,
                "echo": cmd_echo}[args.command](args, stop)
    except (ValueError, RuntimeError, OSError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
