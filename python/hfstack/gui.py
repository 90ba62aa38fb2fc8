#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The --gui window of hfstack-modem rx and hfstack-node: a waterfall of the received
samples (spectrum_rows, a block of the app's flowgraph, drawn with matplotlib: its axes
read in plain seconds and kHz, where GNU Radio's waterfall sink writes its time axis as
2.00e+01) and the constellation of the equalised symbols (GNU Radio's QT GUI sink), a
table (bursts received, or the node's links) and SNR and throughput against time
(matplotlib).

    check_display()                    # before any device opens: display_error if none
    window = receiver_window(tb, samples, rx, rate, ...)   # or node_window(tb, stations)
    tb.start()
    run_window(window, stop, finished, screenshot="shot.png")

Needs PyQt5 and gnuradio.qtgui (Debian: python3-pyqt5, gnuradio) and an X display;
check_display() says in one line what is missing, where Qt itself would abort the
process.
"""

import collections
import ctypes
import ctypes.util
import logging
import os
import threading
import time

import numpy as np
import pmt
from gnuradio import gr
from gnuradio.fft import window as fft_window

from .cli import stop_event

log = logging.getLogger("hfstack.gui")

WATERFALL_ROW_S = 0.1  # a waterfall row (FFT) a tenth of a second, whatever the rate
WATERFALL_ROWS = 200   # 20 s of history
WATERFALL_DB = (-100.0, -20.0)  # colour range, dB relative to full scale
# Points the constellation shows at once: 0.2 s of symbols at 2400 Bd, so a short
# burst's symbols are drawn too (the sink draws only whole sets of this size).
CONSTELLATION_POINTS = 480
REFRESH_MS = 500         # table and time plot
POLL_MS = 100            # stop requests, end of the run, screenshot
HISTORY_S = 600          # the time plot keeps the last ten minutes
THROUGHPUT_WINDOW_S = 10.0  # throughput is averaged over this long
KEPT_BURSTS = 1000       # bursts the table and the plot show at most
SCREENSHOT_WAIT_S = 10.0  # longest wait for the displays to draw before a screenshot


class display_error(Exception):
    """--gui cannot open a window here (no display, or Qt missing)."""


def check_display():
    """Raises display_error naming what is missing: a display (DISPLAY unset, or no X
    server answering there; Qt would abort the process instead) or PyQt5 and GNU
    Radio's Qt GUI. QT_QPA_PLATFORM=offscreen needs no display."""
    try:
        from PyQt5 import Qt  # noqa: F401
        from gnuradio import qtgui  # noqa: F401
    except ImportError as e:
        raise display_error(f"--gui needs PyQt5 and GNU Radio's Qt GUI (Debian: python3-pyqt5, "
                            f"gnuradio): {e}")
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        return
    display = os.environ.get("DISPLAY")
    if not display:
        raise display_error("--gui needs a display: DISPLAY is not set (run it in a desktop "
                            "session, over ssh -X, or under xvfb-run)")
    try:
        x11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    except OSError as e:
        raise display_error(f"--gui needs libX11 (Debian: libx11-6): {e}")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    handle = x11.XOpenDisplay(display.encode())
    if not handle:
        raise display_error(f"--gui: cannot open display {display!r} (no X server there, or "
                            "no permission: check DISPLAY and XAUTHORITY)")
    x11.XCloseDisplay(handle)


_application = None  # kept: Qt must not lose it while widgets live


def application():
    """The process's QApplication (made on first use: QT GUI sinks need it first)."""
    global _application
    from PyQt5 import Qt
    if Qt.QApplication.instance() is None:
        _application = Qt.QApplication(["hfstack"])
    return Qt.QApplication.instance()


def widget_of(sink):
    from PyQt5 import Qt
    from PyQt5 import sip
    return sip.wrapinstance(sink.qwidget(), Qt.QWidget)


def waterfall_fft_size(sample_rate):
    """A power of two near WATERFALL_ROW_S of samples (256 .. 16384)."""
    size = 256
    while size < 16384 and size < WATERFALL_ROW_S * sample_rate:
        size *= 2
    return size


class spectrum_rows(gr.sync_block):
    """A row of the waterfall every WATERFALL_ROW_S of samples (by the samples' count, so
    bunches drawn late still take their own time): the power spectrum, dB relative to a
    full-scale sine, of the last `fft` samples through a Blackman-Harris window. Audio
    gives 0 .. fs/2, complex baseband -fs/2 .. fs/2. Keeps the last WATERFALL_ROWS.
    Samples after the first `shown_samples` (a recording's, before the silence that
    lets the receiver finish) make no rows."""

    def __init__(self, sample_rate, complex_samples, fft, shown_samples=None):
        gr.sync_block.__init__(self, "spectrum_rows",
                               [np.complex64 if complex_samples else np.float32], None)
        self.sample_rate = float(sample_rate)
        self.complex_samples = complex_samples
        self.fft = fft
        self.hop = max(1, int(round(WATERFALL_ROW_S * sample_rate)))
        self.window = np.array(fft_window.blackmanharris(fft), dtype=np.float32)
        # A full-scale sine's bin reads 0 dB (complex: a unit phasor).
        self.scale = (self.window.sum() / (1.0 if complex_samples else 2.0)) ** 2
        self.history = np.zeros(fft, dtype=np.complex64 if complex_samples else np.float32)
        self.until_row = self.hop
        self.lock = threading.Lock()
        self.rows = collections.deque(maxlen=WATERFALL_ROWS)
        self.made = 0  # rows so far
        self.unshown = float("inf") if shown_samples is None else shown_samples

    def frequencies_khz(self):
        """(lowest, highest) frequency of a row, kHz."""
        if self.complex_samples:
            return -self.sample_rate / 2000.0, self.sample_rate / 2000.0
        return 0.0, self.sample_rate / 2000.0

    def work(self, input_items, output_items):
        x = input_items[0][:max(0, int(min(len(input_items[0]), self.unshown)))]
        self.unshown -= len(x)
        taken = 0
        while len(x) - taken >= self.until_row:
            piece = x[taken:taken + self.until_row]
            taken += self.until_row
            self.until_row = self.hop
            self.push(piece)
            self.add_row()
        self.push(x[taken:])
        self.until_row -= len(x) - taken
        return len(input_items[0])

    def push(self, piece):
        n = min(len(piece), self.fft)
        if n:
            self.history = np.concatenate([self.history[n:], piece[len(piece) - n:]])

    def add_row(self):
        spectrum = np.fft.fft(self.history * self.window) if self.complex_samples \
            else np.fft.rfft(self.history * self.window)
        if self.complex_samples:
            spectrum = np.fft.fftshift(spectrum)
        row = 10 * np.log10(np.abs(spectrum) ** 2 / self.scale + 1e-20)
        with self.lock:
            self.rows.append(row.astype(np.float32))
            self.made += 1

    def snapshot(self):
        """(rows so far, the last ones oldest first)."""
        with self.lock:
            return self.made, list(self.rows)


def waterfall_plot(title, rows):
    """The waterfall of a spectrum_rows block: frequency (kHz) across, seconds ago down
    (the newest row on top), plain numbers on both axes. update() draws what is new."""
    from matplotlib.backends.backend_qt5agg import FigureCanvasQTAgg
    from matplotlib.figure import Figure
    figure = Figure(figsize=(5, 4), tight_layout=True)
    canvas = FigureCanvasQTAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    low, high = rows.frequencies_khz()
    width = rows.fft if rows.complex_samples else rows.fft // 2 + 1
    image = axes.imshow(np.full((WATERFALL_ROWS, width), WATERFALL_DB[0], dtype=np.float32),
                        aspect="auto", origin="upper", cmap="turbo", interpolation="nearest",
                        vmin=WATERFALL_DB[0], vmax=WATERFALL_DB[1],
                        extent=(low, high, WATERFALL_ROWS * WATERFALL_ROW_S, 0.0))
    axes.set_xlabel("frequency, kHz")
    axes.set_ylabel("seconds ago")
    axes.set_title(title, fontsize="medium")
    axes.ticklabel_format(style="plain", useOffset=False)
    figure.colorbar(image, ax=axes, label="dB full scale")
    shown = {"made": 0}

    def update():
        made, kept = rows.snapshot()
        if made == shown["made"]:
            return
        shown["made"] = made
        picture = np.full((WATERFALL_ROWS, width), WATERFALL_DB[0], dtype=np.float32)
        if kept:
            picture[:len(kept)] = np.array(kept[::-1])
        image.set_data(picture)
        canvas.draw()  # now: a screenshot may follow at once

    canvas.update_waterfall = update
    canvas.waterfall_axes = axes
    return canvas


class signal_displays:
    """The waterfall of `samples` (a (block, port) of audio or complex baseband at
    sample_rate) and the constellation of `symbols` (complex), connected into tb."""

    def __init__(self, tb, samples, symbols, sample_rate, complex_samples, what,
                 shown_samples=None):
        from gnuradio import qtgui
        application()  # the sinks make their widgets at once
        self.rows = spectrum_rows(sample_rate, complex_samples, waterfall_fft_size(sample_rate),
                                  shown_samples)
        self.waterfall = waterfall_plot(f"Received {what}", self.rows)
        self.constellation = qtgui.const_sink_c(CONSTELLATION_POINTS, "Equalised symbols", 1, None)
        self.constellation.set_x_axis(-1.5, 1.5)
        self.constellation.set_y_axis(-1.5, 1.5)
        self.constellation.set_line_label(0, "data symbols")
        self.constellation.set_update_time(0.1)
        tb.connect(samples, self.rows)
        tb.connect(symbols, self.constellation)

    def widgets(self):
        return self.waterfall, widget_of(self.constellation)


class burst_log(gr.basic_block):
    """Keeps the receiver's last KEPT_BURSTS burst_info dicts (time, mode, SNR, offset,
    bytes) for the window's table and plot, and counts all bursts and their bytes (a
    node runs for days)."""

    def __init__(self):
        gr.basic_block.__init__(self, "burst_log", None, None)
        self.lock = threading.Lock()
        self.recent = collections.deque(maxlen=KEPT_BURSTS)
        self.count = 0
        self.total_bytes = 0
        self.message_port_register_in(pmt.intern("in"))
        self.set_msg_handler(pmt.intern("in"), self.handle)

    def handle(self, msg):
        if not pmt.is_dict(msg):
            return
        info = pmt.to_python(msg)
        with self.lock:
            self.recent.append(info)
            self.count += 1
            self.total_bytes += int(info.get("bytes", 0))

    def snapshot(self):
        """(bursts so far, their bytes, the last ones' dicts, oldest first)."""
        with self.lock:
            return self.count, self.total_bytes, list(self.recent)


def time_plot(title, time_label="time, s", snr_bandwidth_khz=3):
    """SNR (points, left axis; the receiver's, in the bandwidth it listens on) and
    throughput (lines, right axis) against seconds since the window opened. draw()
    takes the throughput as one list of (s, bit/s) or as {label: points}; `series`
    keeps what was drawn last."""
    from matplotlib.backends.backend_qt5agg import FigureCanvasQTAgg
    from matplotlib.figure import Figure
    figure = Figure(figsize=(5, 2.6), tight_layout=True)
    canvas = FigureCanvasQTAgg(figure)
    snr_axes = figure.add_subplot(1, 1, 1)
    rate_axes = snr_axes.twinx()

    def draw(snr_points, rate_points):
        snr_axes.clear()
        rate_axes.clear()
        snr_axes.set_xlabel(time_label)
        snr_axes.set_ylabel(f"SNR, dB in {snr_bandwidth_khz:g} kHz", color="tab:blue")
        rate_axes.set_ylabel(f"bit/s, {THROUGHPUT_WINDOW_S:g} s mean", color="tab:orange")
        snr_axes.set_title(title, fontsize="medium")
        if snr_points:
            snr_axes.plot(*zip(*snr_points), "o", color="tab:blue", markersize=4)
        series = rate_points if isinstance(rate_points, dict) else {"": rate_points}
        canvas.series = series
        colours = ("tab:orange", "tab:green", "tab:red", "tab:purple")
        for k, (label, points) in enumerate(series.items()):
            if points:
                rate_axes.plot(*zip(*points), color=colours[k % len(colours)],
                               label=label or None)
        if any(series.values()):
            rate_axes.set_ylim(bottom=0)
            if any(series):
                rate_axes.legend(loc="upper left", fontsize="small")
        for axes in (snr_axes, rate_axes):  # plain numbers: no 2.00e+01, no offset
            axes.ticklabel_format(style="plain", useOffset=False)
        canvas.draw_idle()

    canvas.series = {}
    canvas.draw_history = draw
    draw([], [])
    return canvas


class monitor_window:
    """The window: waterfall and constellation above (or a note when the radio has no
    samples), a table and the time plot below. `poll()` returns (table rows, SNR
    points, throughput points), called every REFRESH_MS."""

    def __init__(self, title, displays, columns, poll, plot_title, note="",
                 time_label="time, s", snr_bandwidth_khz=3):
        from PyQt5 import Qt
        application()
        self.widget = Qt.QWidget()
        self.widget.setWindowTitle(title)
        self.widget.resize(1100, 760)
        grid = Qt.QGridLayout(self.widget)
        self.displays = displays  # its Python block must stay referenced while it runs
        if displays is not None:
            self.waterfall, self.constellation = displays.widgets()
            grid.addWidget(self.waterfall, 0, 0)
            grid.addWidget(self.constellation, 0, 1)
        else:
            self.waterfall = self.constellation = None
            grid.addWidget(Qt.QLabel(note), 0, 0, 1, 2)
        self.table = Qt.QTableWidget(0, len(columns))
        self.table.setHorizontalHeaderLabels(columns)
        self.table.horizontalHeader().setSectionResizeMode(Qt.QHeaderView.ResizeToContents)
        self.table.setEditTriggers(Qt.QAbstractItemView.NoEditTriggers)
        grid.addWidget(self.table, 1, 0)
        self.plot = time_plot(plot_title, time_label, snr_bandwidth_khz)
        grid.addWidget(self.plot, 1, 1)
        grid.setRowStretch(0, 3)
        grid.setRowStretch(1, 2)
        self.poll = poll
        self.refresh_timer = Qt.QTimer()
        self.refresh_timer.timeout.connect(self.refresh)

    def refresh(self):
        # Called by a Qt timer: an exception escaping it would abort the process.
        try:
            self.show_poll()
        except Exception as e:  # noqa: BLE001
            self.refresh_timer.stop()
            log.error(f"the window stopped updating: {type(e).__name__}: {e}")

    def show_poll(self):
        from PyQt5 import Qt
        rows, snr_points, rate_points = self.poll()
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                self.table.setItem(r, c, Qt.QTableWidgetItem(str(value)))
        # Wide enough for every column: the layout gives the table what it asks for,
        # not a scroll bar that hides the last column.
        self.table.resizeColumnsToContents()
        header = self.table.horizontalHeader()
        self.table.setMinimumWidth(header.length() + self.table.verticalHeader().width()
                                   + 2 * self.table.frameWidth()
                                   + self.table.verticalScrollBar().sizeHint().width())
        self.plot.draw_history(snr_points, rate_points)
        if self.waterfall is not None:
            self.waterfall.update_waterfall()

    def show(self):
        self.widget.show()
        self.refresh()
        self.refresh_timer.start(REFRESH_MS)


def format_number(value, digits=1):
    return "?" if value is None else f"{value:.{digits}f}"


def receiver_window(tb, samples, rx, sample_rate, complex_samples, title, shown_samples=None,
                    bandwidth_khz=3):
    """The window of hfstack-modem rx --gui: samples (block, port; audio, or complex
    baseband with the carrier on 0 Hz) into the waterfall (the first shown_samples, when
    given), rx's symbols into the constellation, its bursts into the table (last ones
    first) and the plot (SNR per burst in bandwidth_khz, the band rx listens on;
    decoded bit/s per second)."""
    displays = signal_displays(tb, samples, (rx, 0), sample_rate, complex_samples,
                               "complex baseband" if complex_samples else "audio", shown_samples)
    bursts = burst_log()
    tb.msg_connect((rx, "burst_info"), (bursts, "in"))
    started, started_wall = time.monotonic(), time.time()
    rate = throughput_meter()

    def poll():
        count, total_bytes, seen = bursts.snapshot()
        rate.add(time.monotonic() - started, total_bytes)
        points = [(b["time"] - started_wall, b["snr_db"]) for b in seen]
        rows = [(count - i, b["mode"], format_number(b["snr_db"]),
                 format_number(b["frequency_offset_hz"]), b["bytes"],
                 "yes" if b["bytes_bad"] else "no") for i, b in enumerate(reversed(seen))]
        return rows, points, rate.points()

    window = monitor_window(title, displays,
                            ("burst", "mode", "SNR dB", "offset Hz", "bytes", "bytes bad"), poll,
                            "SNR per burst; bytes decoded", snr_bandwidth_khz=bandwidth_khz)
    window.bursts = bursts  # Python blocks must stay referenced while they run
    return window


class throughput_meter:
    """Bit/s over the last THROUGHPUT_WINDOW_S (or since the start, when shorter) from a
    byte total read at each refresh, kept for HISTORY_S: bursts arrive whole, and a
    rate per refresh would be all spikes."""

    def __init__(self):
        self.totals = []   # (seconds, bytes)
        self.history = []  # (seconds, bit/s)

    def add(self, now, total_bytes):
        self.totals.append((now, total_bytes))
        while len(self.totals) > 2 and self.totals[1][0] <= now - THROUGHPUT_WINDOW_S:
            del self.totals[0]
        t0, b0 = self.totals[0]
        if now > t0:
            self.history.append((now, 8.0 * (total_bytes - b0) / (now - t0)))
        self.history = [p for p in self.history if p[0] >= now - HISTORY_S]

    def points(self):
        return list(self.history)


class air_meter:
    """Bit/s a station put on the air, from its counters (bytes_sent, air_time_s, both
    counted when a transmission is handed to the modem) read at each refresh: each
    transmission's bytes are spread over its air time, from the hand-off or the end of
    the one before, whichever is later. The mean over THROUGHPUT_WINDOW_S of that never
    exceeds the bit rate of the modes on the air (a burst counted whole at its hand-off
    read as several times the line rate). Times in protocol seconds."""

    def __init__(self, start=0.0):
        self.start = start
        self.last = None           # (bytes, air seconds) last read
        self.intervals = []        # (from, to, bit/s) of the transmissions
        self.air_free_at = start   # when the last transmission laid out ends
        self.history = []          # (seconds, bit/s)

    def add(self, now, total_bytes, total_air_s):
        if self.last is None:
            self.last = (total_bytes, total_air_s)
        sent, air_s = total_bytes - self.last[0], total_air_s - self.last[1]
        if sent > 0 and air_s > 0:
            begin = max(now, self.air_free_at)
            self.air_free_at = begin + air_s
            self.intervals.append((begin, self.air_free_at, 8.0 * sent / air_s))
            self.last = (total_bytes, total_air_s)
        elif sent < 0 or air_s < 0:
            self.last = (total_bytes, total_air_s)  # counters started again
        since = max(self.start, now - THROUGHPUT_WINDOW_S)
        if now > since:
            bits = sum(rate * (min(b, now) - max(a, since))
                       for a, b, rate in self.intervals if b > since and a < now)
            self.history.append((now, bits / (now - since)))
        self.intervals = [i for i in self.intervals if i[1] > now - THROUGHPUT_WINDOW_S]
        self.history = [p for p in self.history if p[0] >= now - HISTORY_S]

    def points(self):
        return list(self.history)


def node_window(tb, stations, title, shown=0):
    """The window of hfstack-node --gui: station `shown`'s radio (waterfall of what it
    receives, constellation of its symbols; none for the emulator), every station's
    links (peer, CAS state, modes each way, the radio's last SNR and the node's queue)
    and, against time, the SNR of each burst that station's radio received and
    every station's bit/s on the air (air_meter), in protocol seconds."""
    first = stations[shown]
    r = first.radio
    log.info(f"the window shows node {first.address}'s radio")
    displays = None
    kind = r.options["kind"]
    # The station's stream ports and burst_info are its radio's.
    if kind != "emulator":
        from .radio import RECEIVED_PORT, SYMBOLS_PORT, complex_streams, modem_rate
        displays = signal_displays(tb, (first, RECEIVED_PORT), (first, SYMBOLS_PORT),
                                   modem_rate(r.options), complex_streams(r.options),
                                   f"by node {first.address}")
    started, started_wall = time.monotonic(), time.time()
    # Protocol time: what the counters' air time is in (an emulator may run faster).
    scale = float(r.options.get("time_scale") or 1.0)
    meters = {st.address: air_meter() for st in stations}
    # Every burst's SNR from the modem's burst_info; the emulator has none, so its
    # radio's last SNR is taken whenever the burst count has grown.
    bursts = None
    if kind != "emulator":
        bursts = burst_log()
        tb.msg_connect((first, "burst_info"), (bursts, "in"))
    snr_points = []
    seen_bursts = [0]

    def poll():
        now = (time.monotonic() - started) * scale
        rows = []
        for st in stations:
            c = st.counters()
            radio_seen = st.radio.stats()
            snr = radio_seen.get("snr_db_last")
            links = [dict(link) for link in st.node.links()] or [{"peer": "-", "state": "no link"}]
            for link in links:
                rows.append((st.address, link.get("peer", "-"), link.get("state", "?"),
                             link.get("tx_mode", "-"), link.get("rx_mode", "-"), format_number(snr),
                             int(c.get("queued_updus", 0)), int(c.get("queued_bytes", 0))))
        if bursts is not None:
            snr_points[:] = [((b["time"] - started_wall) * scale, b["snr_db"])
                             for b in bursts.snapshot()[2]]
        else:
            radio_seen = r.stats()
            if radio_seen["bursts_received"] > seen_bursts[0] and "snr_db_last" in radio_seen:
                seen_bursts[0] = radio_seen["bursts_received"]
                snr_points.append((now, radio_seen["snr_db_last"]))
            del snr_points[:-KEPT_BURSTS]
        for st in stations:
            c = st.counters()
            meters[st.address].add(now, c.get("bytes_sent", 0), c.get("air_time_s", 0.0))
        return rows, list(snr_points), {f"sent by {address}": m.points()
                                        for address, m in meters.items()}

    window = monitor_window(title, displays,
                            ("node", "peer", "state", "tx mode", "rx mode", "last SNR dB",
                             "queued U_PDUs", "queued bytes"), poll,
                            f"SNR received by {first.address}; bit/s on the air",
                            note="The emulator radio has no samples or symbols to show "
                                 "(no DSP): links and statistics only.",
                            time_label="time, s" + (" (protocol time)" if scale != 1 else ""))
    window.bursts = bursts  # Python blocks must stay referenced while they run
    return window


def drawn(widget, blank):
    """True once `widget` no longer looks as it did when blank (a QImage)."""
    return widget.grab().toImage() != blank


def save_screenshot(window, path):
    """The whole window as a PNG; logs its path and the constellation's place in it
    (x, y, width, height) for whoever checks the picture."""
    if not window.widget.grab().save(path, "PNG"):
        raise OSError(f"cannot write the screenshot {path}")
    where = ""
    if window.constellation is not None:
        g = window.constellation.geometry()
        where = f" (constellation at {g.x()},{g.y()},{g.width()},{g.height()})"
    log.info(f"screenshot {path}{where}")
    for label, points in window.plot.series.items():
        if label and points:
            log.info(f"plotted {label}: at most {max(v for _, v in points):.0f} bit/s")


def run_window(window, stop, finished, screenshot=None):
    """Shows the window and runs Qt until it is closed or `stop` is set (SIGINT, SIGTERM:
    the caller's handlers set it); closing the window sets `stop`. When `finished` is
    set (the recording ended, the demo is done) the window stays for the user, or, with
    `screenshot`, is saved as a PNG as soon as the constellation has drawn (at most
    SCREENSHOT_WAIT_S later) and closed."""
    from PyQt5 import Qt
    app = application()
    window.show()
    # The constellation as first laid out, before any symbol: a screenshot waits until
    # it looks different.
    state = {"finished_at": None, "blank": None}

    def check():
        # Called by a Qt timer: an exception escaping it would abort the process.
        try:
            check_once()
        except Exception as e:  # noqa: BLE001
            log.error(f"{type(e).__name__}: {e}")
            stop.set()
            app.quit()

    def check_once():
        if window.constellation is not None and state["blank"] is None:
            state["blank"] = window.constellation.grab().toImage()
        if stop.is_set():
            if screenshot:
                save_screenshot(window, screenshot)
            app.quit()
            return
        if screenshot and finished.is_set():
            now = time.monotonic()
            if state["finished_at"] is None:
                state["finished_at"] = now
                window.refresh()
            if window.constellation is None or drawn(window.constellation, state["blank"]) or \
                    now - state["finished_at"] > SCREENSHOT_WAIT_S:
                window.refresh()
                save_screenshot(window, screenshot)
                app.quit()

    timer = Qt.QTimer()
    timer.timeout.connect(check)
    timer.start(POLL_MS)

    class closing_filter(Qt.QObject):
        def eventFilter(self, obj, event):
            if event.type() == Qt.QEvent.Close:
                stop.set()
            return False

    guard = closing_filter()
    window.widget.installEventFilter(guard)
    app.exec_()
    timer.stop()
    window.refresh_timer.stop()
    window.widget.hide()


def run_flowgraph_window(tb, window, screenshot=None, started=None):
    """Starts tb, calls started() (if given: SIGINT and SIGTERM are handled from then
    on), and runs the window (run_window) until it is closed, SIGINT or SIGTERM, or,
    with `screenshot`, until tb has ended by itself and the picture is saved; then stops
    tb."""
    import signal
    stop, finished = stop_event(), threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        tb.start()
        if started is not None:
            started()

        def wait_for_end():
            tb.wait()
            finished.set()

        threading.Thread(target=wait_for_end, name="flowgraph end", daemon=True).start()
        run_window(window, stop, finished, screenshot)
    finally:
        tb.stop()
        tb.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
