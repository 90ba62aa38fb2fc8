#!/usr/bin/env python3
#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""apps/hfstack-node: the demo over emulated modems delivers through real TCP SIS
clients; a node pair from a YAML config serves, writes JSON statistics and stops
cleanly on SIGTERM; bad flags, bad configs, a busy port and a missing device each give
one line on stderr and a non-zero exit (2: options or config, 1: device or port).
The demo with the real modem runs a short transfer (about 30 s of real time)."""

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from gnuradio import gr_unittest

from gnuradio import hfstack
from gnuradio.hfstack.sis.client import bind_request, sis_client, unidata_request

from test_support import accepts, app_path, free_port_pair, sigterm_once_said

APP = app_path("hfstack-node")


@contextlib.contextmanager
def started(*args):
    """hfstack-node running with piped output; killed if the test leaves it running."""
    process = subprocess.Popen([sys.executable, APP, *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=os.environ)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def stop(process, sig):
    """Sends `sig`; returns (stdout, stderr) once the process has ended."""
    process.send_signal(sig)
    return process.communicate(timeout=30)


def run(*args):
    return subprocess.run([sys.executable, APP, *args], capture_output=True, text=True,
                          timeout=180, env=os.environ)


class qa_node_app(gr_unittest.TestCase):

    def assert_one_line_error(self, done, code, reason):
        self.assertEqual(done.returncode, code, done.stdout + done.stderr)
        # The log's lines ("hfstack-node: INFO: block: text") go to stderr as well.
        lines = [line for line in done.stderr.splitlines()
                 if not re.match(r"^hfstack-node: (DEBUG|INFO|WARNING): ", line)]
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertTrue(lines[0].startswith("hfstack-node: "), done.stderr)
        self.assertIn(reason, lines[0])

    def test_demo_over_emulated_modems_with_bit_errors(self):
        with tempfile.TemporaryDirectory() as out:
            pcap, summary = os.path.join(out, "a.pcap"), os.path.join(out, "summary.json")
            peer_pcap = os.path.join(out, "b.pcap")
            done = run("--demo", "--kind", "emulator", "--profile", "", "--ber", "1e-4",
                       "--time-scale", "50", "--data-rate", "9600", "--bytes", "8000", "--size", "1500",
                       "--pings", "1", "--seed", "3", "--pcap", pcap, "--peer-pcap", peer_pcap,
                       "--sis-port", "0",
                       "--options", "channel_access.mode=none", "--json", summary)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("8000 of 8000 bytes in 6 U_PDUs, identical and in order; 6 confirmed",
                          done.stdout)
            self.assertIn("ping 1: 0.0.0.1 -> 0.0.0.2 -> 0.0.0.1", done.stdout)
            self.assertIn("of 9600 bps", done.stdout)
            self.assertRegex(done.stdout, r"node 0\.0\.0\.1  sent \d+ transmissions \(\d+ D_PDUs, "
                                          r"[1-9]\d* retransmitted\)")
            # Each capture holds both directions, as Wireshark reads them.
            for capture in (pcap, peer_pcap):
                fields = subprocess.run(
                    ["tshark", "-n", "-r", capture, "-T", "fields",
                     "-e", "s5066dts.src_addr", "-e", "s5066dts.dest_addr"],
                    capture_output=True, text=True, timeout=120, check=True).stdout
                pairs = {tuple(line.split("\t")) for line in fields.splitlines() if line.strip()}
                self.assertLessEqual({("1", "2"), ("2", "1")}, pairs, capture)
            # --json: the same summary for scripts (bench/link_agreement.py).
            with open(summary) as f:
                doc = json.load(f)
            self.assertEqual((doc["bytes"], doc["delivered_bytes"], doc["identical"]),
                             (8000, 8000, True))
            self.assertEqual((doc["updus"], doc["confirmed_updus"]), (6, 6))
            self.assertTrue(doc["protocol_time"])
            self.assertEqual(doc["rate_bps"], 9600)
            self.assertAlmostEqual(doc["utilization_pct"],
                                   100 * 8 * 8000 / doc["elapsed_s"] / 9600, places=6)
            self.assertRegex(done.stdout, r"utilization %.0f %% of 9600 bps" % doc["utilization_pct"])
            self.assertGreater(doc["nodes"]["0.0.0.1"]["arq_retransmissions"], 0)

    def test_demo_with_the_real_modem_over_the_watterson_channel(self):
        with tempfile.TemporaryDirectory() as out:
            summary = os.path.join(out, "summary.json")
            done = run("--demo", "--bytes", "1200", "--size", "600", "--pings", "1",
                       "--sis-port", "0", "--snr-steps", "0:20,1:35", "--json", summary)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            with open(summary) as f:
                timeline = json.load(f)["timeline"]
        # The timeline: delivered bytes growing to all of them, the data rate, and the
        # channel's SNR stepped from 20 to 35 dB after a second of the transfer.
        delivered = [p["delivered_bytes"] for p in timeline]
        self.assertEqual(delivered, sorted(delivered))
        self.assertEqual(delivered[-1], 1200)
        # What the link carried to B: never behind what was delivered, and at the end
        # each U_PDU with its S_PCI (3 bytes) and C_PCI (1), counted once.
        carried = [p["arq_bytes_received"] for p in timeline]
        self.assertEqual(carried, sorted(carried))
        self.assertTrue(all(c >= d for c, d in zip(carried, delivered)))
        self.assertEqual(carried[-1], 1200 + 2 * 4)
        self.assertEqual({p["tx_mode_a"] for p in timeline}, {"2400S"})
        # What B's receiver reported of A's bursts, as it went: its count grows and the
        # last report names the mode (SNR about the channel's 20 or 35 dB).
        heard = [p["bursts_received_b"] for p in timeline]
        self.assertEqual(heard, sorted(heard))
        self.assertGreater(heard[-1], 0)
        reports = [p for p in timeline if "snr_report_b" in p]
        self.assertTrue(reports)
        self.assertEqual({p["burst_mode_b"] for p in reports} - {"600S"}, {"2400S"})
        self.assertTrue(all(10 < p["snr_report_b"] < 45 for p in reports))
        self.assertEqual(timeline[0]["snr_db"], 20)
        self.assertEqual(timeline[-1]["snr_db"], 35)
        self.assertTrue(all(p["t_s"] >= 1 for p in timeline if p["snr_db"] == 35))
        self.assertRegex(done.stdout, r"\d+\.\d s: channel SNR now 35 dB")
        self.assertIn("the real STANAG 4539 modem (2400 bps, short interleaver)", done.stdout)
        self.assertIn("mid_latitude_moderate, 20 dB SNR", done.stdout)
        self.assertIn("1200 of 1200 bytes in 2 U_PDUs, identical and in order; 2 confirmed",
                      done.stdout)
        # Each receiver reports what the modem measured on the fading channel.
        self.assertRegex(done.stdout, r"node 0\.0\.0\.2  sent .* its modem decoded \d+ pieces?, "
                                      r"SNR \d+\.\d dB, frequency offset [+-]\d+\.\d\d Hz")
        # Counts as the reader checks them: the progress lines count node A's
        # transmissions since the transfer began, as the summary does; singular for one.
        progress = [line for line in done.stdout.splitlines() if " of 1200 bytes, " in line]
        last = progress[-1].split("node 0.0.0.1: ")[1].split(",")[0]
        summary = next(line for line in done.stdout.splitlines()
                       if line.startswith("  node 0.0.0.1  sent "))
        self.assertEqual(summary.split("sent ")[1].split(" (")[0], last, done.stdout)
        self.assertNotRegex(done.stdout, r"\b1 (transmissions|D_PDUs|pieces|segments)\b")
        self.assertIn("in pieces as it decodes them", done.stdout)
        print(done.stdout)

    def test_demo_answers_keep_alives_of_the_client_it_is_not_reading(self):
        # A ping slower than the nodes' keep-alive interval: while the demo waits at B,
        # A's client is silent and gets an S_KEEP_ALIVE; unanswered, node A would unbind
        # it and the pong would never come (a slow mode at a low SNR did this).
        done = run("--demo", "--bytes", "600", "--size", "600", "--pings", "1",
                   "--sis-port", "0", "--options",
                   "supervision.keep_alive_interval_s=1;supervision.keep_alive_answer_s=2")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        ping = re.search(r"ping 1: \S+ -> \S+ -> \S+ in (\d+\.\d) s", done.stdout)
        self.assertTrue(ping, done.stdout)
        self.assertGreater(float(ping.group(1)), 3)  # longer than interval and answer time
        self.assertIn("600 of 600 bytes in 1 U_PDUs, identical and in order", done.stdout)

    def test_pair_from_config_serves_writes_statistics_and_stops_on_sigterm(self):
        port = free_port_pair()
        with tempfile.TemporaryDirectory() as d:
            config, stats = os.path.join(d, "node.yaml"), os.path.join(d, "stats.jsonl")
            with open(config, "w") as f:
                f.write(f"address: 0.0.0.7\npeer_address: 0.0.0.8\nrate: 1200\n"
                        f"interleaver: long\noptions:\n  cas.idle_timeout: 60\n"
                        f"sis:\n  port: {port}\nstats:\n  interval: 0.2\n  file: {stats}\n"
                        f"radio:\n  kind: emulator\n  time_scale: 10\n")
            with started("--config", config, "--pair") as server:
                deadline = time.monotonic() + 60  # GNU Radio's import is slow when loaded
                while not (accepts(port) and accepts(port + 1)):
                    if server.poll() is not None:
                        self.fail("hfstack-node exited: " + server.communicate()[1])
                    self.assertLess(time.monotonic(), deadline, "hfstack-node never listened")
                    time.sleep(0.05)  # between polls only: bounded by the deadline
                # Statistics lines come at the interval while it serves.
                while not os.path.exists(stats) or len(open(stats).readlines()) < 4:
                    self.assertLess(time.monotonic(), deadline, "no statistics lines")
                    time.sleep(0.05)
                out, err = stop(server, signal.SIGTERM)
            self.assertEqual(server.returncode, 0, err)
            self.assertIn("node 0.0.0.7: SIS on 127.0.0.1:%d" % port, err)
            self.assertIn("mode=1200L", err)
            self.assertIn("cas.idle_timeout=60", err)
            lines = [json.loads(line) for line in open(stats)]
        self.assertEqual(lines[0]["type"], "header")
        lines = [record for record in lines if record["type"] == "stats"]
        self.assertEqual({record["node"] for record in lines}, {"0.0.0.7", "0.0.0.8"})
        for record in lines:
            self.assertIn("transmissions", record)
            self.assertIn("bursts_received", record["radio"])
            self.assertIsInstance(record["time"], float)

    def test_example_config_checks(self):
        example = os.path.join(os.path.dirname(APP), "..", "examples", "node.yaml")
        done = run("--config", example, "--check", "--sis-port", "6000")
        # The settings are read; the station's sound card and PTT port are not on this
        # host, which fails the check, one line each.
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertEqual(done.stderr.splitlines(), [
            "hfstack-node: sound card plughw:CARD=Device,DEV=0: no card Device on this host "
            "(aplay -l lists the cards; arecord -L their names)",
            "hfstack-node: ptt serial:/dev/ttyUSB0:rts: no serial port /dev/ttyUSB0 "
            "(ls /dev/serial/by-id lists the connected ones)"])
        s = json.loads(done.stdout)
        self.assertEqual(s["node_options"],
                         "mode=1200L;cas.idle_timeout=120;channel_access.mode=random_backoff")
        self.assertEqual((s["address"], s["sis_port"], s["stats_interval"]), ("0.0.0.5", 6000, 10.0))
        self.assertEqual((s["radio"]["kind"], s["radio"]["ptt"], s["radio"]["data_rate"]),
                         ("audio", "serial:/dev/ttyUSB0:rts", 1200))

    def test_app_c_modes_are_fixed_modes_by_the_modems_names(self):
        """--data-rate/--interleaver and YAML name every modem mode; they used to refuse
        App C's ultra_short, very_short, medium, very_long and 12800U."""
        for rate, interleaver, mode in ((9600, "very_short", "9600VS"), (3200, "ultra_short", "3200US"),
                                        (9600, "medium", "9600M"), (12800, "none", "12800U")):
            with self.subTest(mode=mode):
                done = run("--check", "--pair", "--data-rate", str(rate), "--interleaver", interleaver)
                self.assertEqual(done.returncode, 0, done.stderr)
                s = json.loads(done.stdout)
                self.assertEqual(s["node_options"], f"mode={mode}")
                self.assertEqual((s["radio"]["data_rate"], s["radio"]["interleaver"]),
                                 (rate, interleaver))

    def test_stanag_5069_modes_by_name(self):
        """--mode names a mode of either standard; a 5069 one with
        --data-rate auto adapts across the WNs of its bandwidth."""
        done = run("--check", "--pair", "--kind", "emulator", "--mode", "wn12/48khz/us")
        self.assertEqual(done.returncode, 0, done.stderr)
        s = json.loads(done.stdout)
        self.assertEqual((s["node_options"], s["mode"], s["rate"], s["interleaver"]),
                         ("mode=WN12/48kHz/US", "WN12/48kHz/US", 240000, "ultra_short"))
        done = run("--check", "--pair", "--kind", "emulator", "--mode", "WN6/48kHz/S",
                   "--data-rate", "auto")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout)["node_options"],
                         "mode=WN6/48kHz/S;rate_adaptation=true;rate_change.autobaud=true")
        # The modem kinds take the node's mode (and its bandwidth) as their default.
        done = run("--check", "--kind", "uhd", "--frequency-hz", "7.0243e6", "--mode",
                   "WN12/48kHz/US", "--device-args", "serial=hfstack-no-such-usrp")
        # The settings are read; no USRP here answers to them, which fails the check.
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("no USRP found for device_args serial=hfstack-no-such-usrp", done.stderr)
        self.assertEqual(json.loads(done.stdout)["radio"]["mode"], "WN12/48kHz/US")
        done = run("--check", "--mode", "2400S")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout)["node_options"], "mode=2400S")
        for flags, reason in (
                (["--kind", "emulator", "--mode", "WN12/50kHz/US"], "--mode WN12/50kHz/US: "),
                (["--kind", "emulator", "--mode", "WN0/48kHz/S"],
                 "the node carries STANAG 5069 WN1-WN12"),
                (["--kind", "emulator", "--mode", "WN12/48kHz/US", "--data-rate", "9600"],
                 "--mode names the rate"),
                (["--kind", "emulator", "--mode", "WN12/48kHz/US", "--interleaver", "long"],
                 "--mode names the rate"),
                (["--kind", "emulator", "--mode", "WN8/24kHz/M", "--data-rate", "auto"],
                 "STANAG 5069 rate adaptation runs with the US, S or L interleaver"),
                (["--check", "--kind", "audio", "--mode", "WN12/48kHz/US"],
                 "mode WN12/48kHz/US (48 kHz) does not fit real audio at 48000 Hz")):
            with self.subTest(flags=flags):
                self.assert_one_line_error(run(*flags), 2, reason)

    @unittest.skipIf(os.geteuid() != 0 or not shutil.which("unshare"),
                     "needs root and unshare for a network namespace of its own")
    def test_loopback_down_is_named(self):
        """In a fresh network namespace lo is down: its addresses cannot be had (::1
        here; 127.0.0.1 too on most kernels), and the node and the PEP say what to do
        instead of only EADDRNOTAVAIL."""
        hint = "(is the loopback interface down in this network namespace? ip link set lo up)"
        done = subprocess.run(["unshare", "-n", sys.executable, APP, "--kind", "emulator",
                               "--sis-address", "::1", "--sis-port", "0"], capture_output=True,
                              text=True, timeout=180, env=os.environ)
        self.assert_one_line_error(done, 1, "cannot listen on [::1]:0: Cannot assign "
                                            f"requested address {hint}")
        done = subprocess.run(["unshare", "-n", sys.executable, app_path("hfstack-pep"),
                               "--socks", "[::1]:1080"], capture_output=True, text=True,
                              timeout=180, env=os.environ)
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertEqual(done.stderr.strip(), "hfstack-pep: socks listener [::1]:1080: "
                                              f"Cannot assign requested address {hint}")

    def test_stderr_has_one_format(self):
        """Every log line on stderr, the node's blocks' (sis_server, node) as well as the
        app's, reads `hfstack-node: LEVEL: ...`: GNU Radio's `sis_server :info: ...` was
        a second format between them."""
        returncode, _, err = sigterm_once_said(
            [sys.executable, APP, "--pair", "--kind", "emulator", "--profile", "", "--sis-port", "0",
             "--stats-interval", "0", "--log-level", "info"], "Ctrl-C stops", os.environ)
        self.assertEqual(returncode, 0, err)
        lines = err.splitlines()
        self.assertTrue(any(": sis_server: listening on 127.0.0.1:" in line for line in lines), err)
        for line in lines:
            self.assertRegex(line, r"^hfstack-node: (DEBUG|INFO|WARNING|ERROR|CRITICAL): ")

    def test_demo_stops_on_sigint(self):
        with started("--demo", "--kind", "emulator", "--sis-port", "0", "--bytes", "100000") as demo:
            for line in demo.stdout:  # at real time the data take minutes: interrupt them
                if line.startswith("Sending"):
                    break
            interrupted_at = time.monotonic()
            out, err = stop(demo, signal.SIGINT)
        self.assertEqual(demo.returncode, 130, err)
        self.assertIn("hfstack-node: demo interrupted", err)
        self.assertNotIn("Traceback", err)
        self.assertLess(time.monotonic() - interrupted_at, 10)

    def test_options_are_listed(self):
        done = run("--list-options")
        self.assertEqual(done.returncode, 0)
        self.assertIn("channel_access.mode (default random_backoff)", done.stdout)

    def test_bad_options_and_configs_give_one_line_and_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            def config(text):
                path = os.path.join(d, "c%d.yaml" % hash(text))
                with open(path, "w") as f:
                    f.write(text)
                return path
            cases = (
                (["--ber", "2", "--kind", "emulator"], "ber must be in 0..1"),
                (["--sis-port", "70000"], "--sis-port must be 0..65535"),
                (["--data-rate", "1234"], "option mode = '1234S'"),
                (["--data-rate", "fast"], "rate 'fast': a rate in bps"),
                (["--address", "1.2"], "option address"),
                (["--kind", "usrp"], "radio kind 'usrp'"),
                (["--device", "hw:0", "--pair"], "device does not apply to kind loopback"),
                (["--kind", "loopback"], "a loopback radio joins two nodes in one process"),
                (["--pair", "--kind", "audio"], "--pair and --demo join two nodes"),
                (["--pair", "--json", "x.json"], "--json needs --demo"),
                (["--demo", "--snr-steps", "5:x"], "--snr-steps: '5:x' is not SECONDS:DB"),
                (["--demo", "--snr-steps", "5:10,2:12"], "times must be finite, 0 or more and "
                 "increasing"),
                (["--pair", "--snr-steps", "0:10"], "--snr-steps needs --demo"),
                (["--demo", "--kind", "emulator", "--snr-steps", "0:10"],
                 "--snr-steps changes the Watterson channel of loopback radios"),
                (["--frobnicate"], "unrecognized arguments: --frobnicate"),
                (["--stats-intervall", "5"], "(did you mean --stats-interval?)"),
                (["--config", os.path.join(d, "missing.yaml")], "No such file"),
                (["--config", config("address: [1, 2\n")], "not valid YAML at line 2"),
                (["--config", config("- a\n- b\n")], "expected a mapping"),
                (["--config", config("colour: red\n")], "unknown key colour"),
                (["--config", config("sis:\n  prot: 5\n")], "unknown key sis.prot"),
                (["--config", config("radio: audio\n")], "`radio` must be a mapping"),
                (["--config", config("radio:\n  kind: emulator\n  gain: 3\n")],
                 "unknown radio option gain"),
                (["--config", config("options:\n  arq_window: 500\n")], "arq_window"),
                (["--config", config("interleaver: sideways\n")],
                 ":1: interleaver: 'sideways' is not one of long, medium, none, short, "
                 "ultra_short, very_long, very_short"),
                # Every interleaver of the modem is a choice; the pair must be a mode.
                (["--config", config("interleaver: medium\n")],
                 "option mode = '2400M': not a STANAG 4539 mode of our modem"),
                (["--data-rate", "2400", "--interleaver", "none"],
                 "option mode = '2400Z': the zero interleaver (Z) is not implemented"),
                (["--data-rate", "auto", "--interleaver", "very_short"],
                 "--data-rate auto with interleaver very_short: a data rate change announces only"),
                (["--data-rate", "9600", "--interleaver", "very_short", "--options",
                  "rate_adaptation=true"], "mode 9600VS cannot be used with rate_adaptation"),
                (["--check", "--pair", "--config", config("radio:\n  interleaver: medium\n")],
                 "data_rate 2400 and interleaver 'medium'"),
                (["--check", "--kind", "uhd"], "frequency_hz must be > 0 for kind uhd"),
                (["--check", "--kind", "file"], "kind file needs record and/or replay"),
                (["--check", "--pair", "--seed", "-1"], "seed must be >= 0"),
            )
            for flags, reason in cases:
                with self.subTest(flags=flags):
                    self.assert_one_line_error(run(*flags), 2, reason)

    def test_binary_and_duplicate_key_configs_are_refused_in_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            binary = os.path.join(d, "binary.yaml")
            with open(binary, "wb") as f:
                f.write(bytes(range(256)))  # was a UnicodeDecodeError traceback
            self.assert_one_line_error(run("--config", binary, "--check"), 2,
                                       "not a YAML text file (byte 128 is not UTF-8 text)")
            twice = os.path.join(d, "twice.yaml")
            with open(twice, "w") as f:  # the last one won, silently
                f.write("address: 0.0.0.1\nsis:\n  port: 5066\n  port: 6000\naddress: 0.0.0.2\n")
            done = run("--config", twice, "--check")
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn(f"{twice}:4: key sis.port given twice (first at line 3", done.stderr)
            self.assertIn(f"{twice}:5: key address given twice (first at line 1", done.stderr)

    def test_missing_ptt_port_and_ipc_directory_are_named(self):
        """--check passed a PTT port that does not exist (without a word, then with a
        warning and exit 0) where the run stops on it; the run said only "No such file
        or directory" for an ipc:// address without its directory. --check now fails
        as the run would, one line naming the device and where to look."""
        ptt = ("--kind", "audio", "--ptt", "serial:/dev/ttyNOPE:rts")
        for extra in (("--check",), ()):
            with self.subTest(extra=extra):
                self.assert_one_line_error(
                    run(*ptt, *extra), 1, "ptt serial:/dev/ttyNOPE:rts: no serial port /dev/ttyNOPE "
                    "(ls /dev/serial/by-id lists the connected ones)")
        # A port that is there passes (a pseudo-terminal stands in for the radio's).
        leader, follower = os.openpty()
        port = os.ttyname(follower)
        try:
            done = run("--kind", "audio", "--ptt", f"serial:{port}:rts", "--check")
        finally:
            os.close(leader)
            os.close(follower)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout)["radio"]["ptt"], f"serial:{port}:rts")
        # A sound card the kernel does not have: the check says so, as the run would.
        self.assert_one_line_error(run("--kind", "audio", "--device", "plughw:CARD=NoSuchCardHere,DEV=0",
                                       "--check"), 1,
                                   "sound card plughw:CARD=NoSuchCardHere,DEV=0: no card NoSuchCardHere")
        done = run("--kind", "audio", "--device", "null", "--check")  # no card to look for
        self.assertEqual(done.returncode, 0, done.stderr)
        # A USRP nobody answers for (UHD's own search, as uhd_find_devices).
        try:
            from gnuradio import uhd  # noqa: F401
        except ImportError:
            return
        self.assert_one_line_error(run("--kind", "uhd", "--frequency-hz", "7e6", "--device-args",
                                       "serial=hfstack-no-such-usrp", "--check"), 1,
                                   "no USRP found for device_args serial=hfstack-no-such-usrp: "
                                   "uhd_find_devices lists")
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "air")
            self.assert_one_line_error(
                run("--kind", "emulator", "--sis-port", "0", "--air-publish",
                    f"ipc://{missing}/a", "--air-subscribe", f"ipc://{missing}/b"), 1,
                f"air_publish ipc://{missing}/a: no directory {missing} (create it: "
                f"mkdir -p {missing})")

    def test_no_usrp_is_said_in_the_users_terms(self):
        """UHD's own words were `KeyError: No devices found for -----> Empty Device
        Address`."""
        if shutil.which("uhd_find_devices") and "-- UHD Device" in subprocess.run(
                ["uhd_find_devices"], capture_output=True, text=True, timeout=60).stdout:
            self.skipTest("a USRP is connected")
        self.assert_one_line_error(
            run("--kind", "uhd", "--frequency-hz", "7e6", "--sis-port", "0"), 1,
            "no USRP found for device_args (empty: the first found): uhd_find_devices lists "
            "the USRPs this host sees; choose one with --device-args")

    def test_far_side_pep_says_where_it_listens(self):
        """A far-side PEP (no listener) logged "HF-PEP, listening " and nothing more."""
        with started("--kind", "emulator", "--sis-port", "0", "--pep", "--stats-interval",
                     "0", "--pep-options", "allow_peers=0.0.0.2") as node:
            deadline = time.monotonic() + 120
            lines = []
            for line in node.stderr:  # ends when the node does: the deadline bounds it
                lines.append(line)
                if "HF-PEP" in line or time.monotonic() > deadline:
                    break
            node.terminate()
            node.communicate(timeout=60)
        self.assertTrue(lines[-1].rstrip().endswith("HF-PEP, listening nowhere (far side only)"),
                        "".join(lines))

    def test_every_config_problem_at_once_with_file_line_and_suggestion(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "field.yaml")
            with open(path, "w") as f:
                f.write("address: 0.0.0.5\nrat: 1200\nsis:\n  prot: 5066\nradio:\n"
                        "  kind: audio\n  ptt: serial:/dev/ttyUSB0:cts\n  levle: 0.3\n")
            done = run("--config", path, "--check")
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        lines = done.stderr.splitlines()
        self.assertEqual(len(lines), 3, done.stderr)  # before: only the first
        self.assertIn(f"{path}:2: unknown key rat (did you mean rate?) (valid: address,", lines[0])
        self.assertIn(f"{path}:4: unknown key sis.prot (did you mean port?)", lines[1])
        self.assertIn(f"{path}:8: unknown radio option levle (did you mean level?)", lines[2])
        # With those fixed, the PTT spec the real run would refuse is found too.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "field.yaml")
            with open(path, "w") as f:
                f.write("radio:\n  kind: audio\n  ptt: serial:/dev/ttyUSB0:cts\n")
            self.assert_one_line_error(run("--config", path, "--check"), 2,
                                       "the serial line is rts or dtr")

    def test_version(self):
        done = run("--version")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"^hfstack-node \S+")

    def test_unwritable_capture_fails_at_once_with_exit_1(self):
        """It used to hang in tb.start(), deaf to SIGINT and SIGTERM."""
        for extra in ((), ("--check",)):
            with self.subTest(extra=extra):
                done = subprocess.run(
                    [sys.executable, APP, "--kind", "emulator", "--sis-port", "0",
                     "--pcap", "/nonexistent/dir/node.pcap", *extra],
                    capture_output=True, text=True, timeout=60, env=os.environ)
                self.assert_one_line_error(done, 1, "capture file /nonexistent/dir/node.pcap: "
                                                    "no directory /nonexistent/dir")
        done = run("--kind", "emulator", "--sis-port", "0", "--peer-pcap", "b.pcap", "--check")
        self.assert_one_line_error(done, 2, "--peer-pcap captures node B of --pair or --demo")

    def test_statistics_stream_header_events_and_clients_now(self):
        """Standard output carries JSON lines only: a header (version, mode, time
        scale), events (client bind, link up) and statistics with the clients
        connected now, the last interval and the links with their modes."""
        port = free_port_pair()
        with started("--pair", "--kind", "emulator", "--profile", "", "--time-scale", "50",
                     "--data-rate", "9600", "--sis-port", str(port), "--stats-interval", "0.2",
                     "--options", "channel_access.mode=none;"
                                  "supervision.keep_alive_interval_s=36000") as server:
            deadline = time.monotonic() + 60
            while not (accepts(port) and accepts(port + 1)):
                self.assertIsNone(server.poll(), "hfstack-node exited")
                self.assertLess(time.monotonic(), deadline, "hfstack-node never listened")
                time.sleep(0.05)  # between polls only: bounded by the deadline
            a, b = sis_client(port=port, timeout=60), sis_client(port=port + 1, timeout=60)
            for c in (a, b):
                c.send(bind_request(3))
                self.assertEqual(c.receive().type, hfstack.dl.sis_type.bind_accepted)
            a.send(unidata_request("0.0.0.2", 3, b"across"))
            self.assertEqual(b.receive_type(hfstack.dl.sis_type.unidata_indication).payload,
                             b"across")
            a.close()
            records = []
            for line in server.stdout:  # every line must be JSON
                records.append(json.loads(line))
                r = records[-1]
                # (the readiness probes above were clients too)
                if r["type"] == "stats" and r["node"] == "0.0.0.1" and \
                        r["updus_accepted"] == 1 and r["clients_connected"] == 0:
                    break
                self.assertLess(time.monotonic(), deadline, records[-3:])
            b.close()
            stop(server, signal.SIGTERM)
        header = records[0]
        self.assertEqual(header["type"], "header")
        self.assertEqual((header["mode"], header["time_scale"]), ("9600S", 50.0))
        self.assertEqual(header["nodes"], ["0.0.0.1", "0.0.0.2"])
        self.assertTrue(header["version"])
        events = [(r["node"], r["event"]) for r in records if r["type"] == "event"]
        self.assertIn(("0.0.0.1", "client_bind"), events)
        self.assertIn(("0.0.0.2", "client_bind"), events)
        self.assertIn(("0.0.0.1", "link_up"), events)
        self.assertIn(("0.0.0.1", "client_unbind"), events)
        last = records[-1]
        self.assertEqual(last["links"][0]["peer"], "0.0.0.2")
        self.assertEqual(last["links"][0]["tx_mode"], "9600S")
        self.assertIn("tx_bps", last["last_interval"])
        self.assertGreater(last["last_interval"]["seconds"], 0)

    def test_busy_port_and_missing_device_give_one_line_and_exit_1(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            self.assert_one_line_error(run("--kind", "emulator", "--sis-port", str(port)), 1,
                                       "cannot listen on 127.0.0.1:%d" % port)
        self.assert_one_line_error(run("--device", "no_such_card"), 1,  # audio: the default
                                   "sound card no_such_card cannot be opened")
        self.assert_one_line_error(run("--kind", "file", "--replay", "/nonexistent/x.wav"), 1,
                                   "replay file /nonexistent/x.wav")


if __name__ == "__main__":
    gr_unittest.run(qa_node_app)
