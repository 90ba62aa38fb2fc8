#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""STANAG 4539 mode names, one set for the modem blocks, the radio, GRC and the apps:
a rate and an interleaver letter, "2400S", "75L", "9600VL", "4800U", "12800U" (the
kernel's phy/s4539_modes.h is the source; this only translates). The modem blocks also
take STANAG 5069's at every bandwidth by name, "WN8/3kHz/L", "WN12/48kHz/US"
(phy/waveform_modes.h)."""

import os

from . import cli
from .hfstack_python import sim

# Interleaver names of the blocks (s4539_tx, radio) and their letters in mode names.
LETTER = {"ultra_short": "US", "very_short": "VS", "short": "S", "medium": "M", "long": "L",
          "very_long": "VL", "none": "U"}


def _plain(value):
    """GRC hands enum values over as written in the YAML: '2400', '"short"'."""
    return str(value).strip().strip("'\"")


def default_receiver_threads():
    """The STANAG 5069 receiver's threads where none are asked for: two where this
    process may run on two cores or more (the same bursts either way)."""
    return min(2, len(os.sched_getaffinity(0)))


def mode_name(data_rate, interleaver):
    """"2400S" from (2400, "short"); None for an interleaver name that does not exist."""
    letter = LETTER.get(_plain(interleaver))
    return None if letter is None else f"{int(float(_plain(data_rate)))}{letter}"


def s4539_pair_ok(data_rate, interleaver):
    """True when the modem has this rate with this interleaver (GRC's asserts use it,
    so an impossible pair is refused in the editor, not at run time)."""
    try:
        name = mode_name(data_rate, interleaver)
    except ValueError:
        return False
    return name is not None and sim.s4539_mode(name) is not None


def mode_problem(name):
    """Why `name` is no mode of the modem, '' when it is one: the reason the node, the
    simulator, the modem app and GRC all give (the zero interleaver included), with the
    nearest name when one is close."""
    name = _plain(name).upper()
    problem = sim.s4539_mode_problem(name)
    if problem and not name.endswith("Z"):
        problem += cli.nearest(name, modem_mode_names())
    return problem


def modem_mode_ok(name):
    """True when s4539_tx takes this mode name, of either standard ("2400S",
    "WN8/3kHz/L"): GRC's asserts use it."""
    return sim.modem_mode(_plain(name)) is not None


def s5069_settings_problem(text, transmitter):
    """Why s4539_tx (transmitter) or s4539_rx refuses this settings text ("" if it
    takes it)."""
    return sim.s5069_settings_problem(_plain(text), bool(transmitter))


def s5069_settings_ok(text, transmitter):
    """True when s4539_tx (transmitter) or s4539_rx takes this STANAG 5069 settings
    text (GRC's asserts)."""
    return not sim.s5069_settings_problem(_plain(text), bool(transmitter))


def modem_mode_names():
    """Every mode the modem blocks send and receive, slowest first."""
    return [m for m in sim.mode_names() if sim.s4539_mode(m) is not None]


def mode_info(name):
    """(data_rate, interleaver, canonical name) of a mode of either standard the modem
    blocks take ("wn12/48khz/us" -> (240000, "ultra_short", "WN12/48kHz/US")), or None."""
    return sim.modem_mode(_plain(name))


def is_s5069(name):
    """True for a STANAG 5069 mode's name (WN<n>/<bw>kHz/<interleaver>)."""
    found = mode_info(name)
    return found is not None and found[2].startswith("WN")


def any_mode_problem(name):
    """Why `name` is no mode of the modem blocks (either standard), with the nearest name
    when one is close; '' when it is one."""
    name = _plain(name)
    problem = sim.modem_mode_problem(name)
    if problem:
        problem += cli.nearest(name, sim.modem_mode_names())
    return problem


def mode_band(name):
    """(bandwidth kHz, symbol rate Bd, carrier Hz on real audio) of a mode of either
    standard: (3, 2400, 1800) for STANAG 4539's; STANAG 5069's above 3 kHz 800 Bd per
    kHz on 300 Hz + BW / 2 (phy/waveform_modes.h). ValueError for an unknown name."""
    return sim.modem_mode_band(_plain(name))
