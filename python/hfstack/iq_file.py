#
# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Complex baseband recordings the apps read and write: SigMF (NAME.sigmf-meta, JSON,
beside NAME.sigmf-data, samples cf32_le or ci16_le) and raw interleaved samples with no
metadata (a USRP's uhd_rx_cfile writes .cfile/.fc32 as cf32_le, .sc16 as ci16_le).

Every problem a recording can have is an iq_error of one line: missing or contradictory
metadata, a type not read, a data file cut short."""

import json
import math
import os

import numpy as np

SIGMF_VERSION = "1.0.0"
META, DATA = ".sigmf-meta", ".sigmf-data"
# SigMF datatype -> (numpy type of one stored number, bytes per complex sample).
DATATYPES = {"cf32_le": ("<f4", 8), "ci16_le": ("<i2", 4)}
RAW_EXTENSIONS = {".cf32": "cf32_le", ".cfile": "cf32_le", ".fc32": "cf32_le", ".c64": "cf32_le",
                  ".ci16": "ci16_le", ".sc16": "ci16_le"}
CI16_FULL_SCALE = 32768.0


class iq_error(Exception):
    """A recording that cannot be read or written as asked; the message is one line."""


def kind_of(path):
    """"sigmf", "raw" or None (not a complex recording by its name: a WAV, say)."""
    lower = path.lower()
    if lower.endswith((META, DATA)):
        return "sigmf"
    return "raw" if os.path.splitext(lower)[1] in RAW_EXTENSIONS else None


def sigmf_paths(path):
    """(metadata path, data path) of a SigMF recording named by either file."""
    base = path[:-len(META)] if path.lower().endswith((META, DATA)) else path
    return base + META, base + DATA


def raw_datatype(path):
    return RAW_EXTENSIONS[os.path.splitext(path.lower())[1]]


class recording:
    """What is known of a recording: its data file, datatype, rate (Hz, None when no one
    said), sample count, centre frequency (Hz or None) and the SigMF annotations."""

    def __init__(self, data_path, datatype, sample_rate, samples, centre_hz=None,
                 annotations=(), meta=None):
        self.data_path, self.datatype, self.sample_rate = data_path, datatype, sample_rate
        self.samples, self.centre_hz = samples, centre_hz
        self.annotations = list(annotations)
        self.meta = meta

    def labels(self):
        return [a["core:label"] for a in self.annotations if isinstance(a.get("core:label"), str)]

    def band_centre_hz(self):
        """The middle of the first annotation that gives both band edges, else None."""
        for a in self.annotations:
            if "core:freq_lower_edge" in a and "core:freq_upper_edge" in a:
                return 0.5 * (a["core:freq_lower_edge"] + a["core:freq_upper_edge"])
        return None


def _samples_in(data_path, datatype, what):
    try:
        size = os.path.getsize(data_path)
    except OSError as e:
        raise iq_error(f"{what}: data file {data_path}: {e.strerror or e}")
    if os.path.isdir(data_path):
        raise iq_error(f"{what}: data file {data_path} is a directory")
    width = DATATYPES[datatype][1]
    if size % width:
        raise iq_error(f"{what}: truncated: {size} bytes is not a whole number of {datatype} "
                       f"samples ({width} bytes each)")
    if size == 0:
        raise iq_error(f"{what}: no samples")
    return size // width


def _number(value, name, what, positive=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or (positive and value <= 0):
        raise iq_error(f"{what}: {name} is {json.dumps(value)}, not a "
                       f"{'positive ' if positive else ''}finite number")
    return float(value)


def read_raw(path, sample_rate, centre_hz=None):
    """A raw recording: its rate has to be given (None: refused)."""
    if not os.path.isfile(path):
        raise iq_error(f"{path}: no such file")
    if sample_rate is None:
        raise iq_error(f"{path}: a raw recording carries no sample rate: give --sample-rate")
    datatype = raw_datatype(path)
    return recording(path, datatype, float(sample_rate), _samples_in(path, datatype, path),
                     centre_hz)


def read_sigmf(path, sample_rate=None, centre_hz=None):
    """A SigMF recording, checked: datatype, version and rate present; a rate or centre
    frequency given must agree with the metadata's; annotations inside the data."""
    meta_path, data_path = sigmf_paths(path)
    try:
        with open(meta_path, "rb") as f:
            meta = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        raise iq_error(f"{meta_path}: {e.strerror or e}")
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise iq_error(f"{meta_path}: not SigMF metadata (not JSON: {str(e).splitlines()[0]})")
    if not isinstance(meta, dict) or not isinstance(meta.get("global"), dict):
        raise iq_error(f"{meta_path}: not SigMF metadata (no \"global\" object)")
    g = meta["global"]
    for key in ("core:datatype", "core:version"):
        if key not in g:
            raise iq_error(f"{meta_path}: missing {key}")
    datatype = g["core:datatype"]
    if datatype not in DATATYPES:
        raise iq_error(f"{meta_path}: core:datatype {json.dumps(datatype)}: read are "
                       f"{' and '.join(DATATYPES)} (complex, little-endian)")
    if not isinstance(g["core:version"], str) or not g["core:version"].startswith("1."):
        raise iq_error(f"{meta_path}: core:version {json.dumps(g['core:version'])}: read is 1.x.x")
    if g.get("core:num_channels", 1) != 1:
        raise iq_error(f"{meta_path}: core:num_channels {json.dumps(g['core:num_channels'])}: "
                       f"one channel only")
    if g.get("core:offset", 0) != 0:
        raise iq_error(f"{meta_path}: core:offset {json.dumps(g['core:offset'])}: a header "
                       f"before the samples is not read")
    rate = None
    if "core:sample_rate" in g:
        rate = _number(g["core:sample_rate"], "core:sample_rate", meta_path, positive=True)
    if rate is None and sample_rate is None:
        raise iq_error(f"{meta_path}: missing core:sample_rate (or give --sample-rate)")
    if rate is not None and sample_rate is not None and float(sample_rate) != rate:
        raise iq_error(f"{meta_path}: --sample-rate {sample_rate:g} contradicts core:sample_rate "
                       f"{rate:g}")
    rate = rate if rate is not None else float(sample_rate)
    samples = _samples_in(data_path, datatype, meta_path)

    captures = meta.get("captures", [])
    annotations = meta.get("annotations", [])
    if not isinstance(captures, list) or not all(isinstance(c, dict) for c in captures):
        raise iq_error(f"{meta_path}: \"captures\" is not a list of objects")
    if not isinstance(annotations, list) or not all(isinstance(a, dict) for a in annotations):
        raise iq_error(f"{meta_path}: \"annotations\" is not a list of objects")
    frequencies = {_number(c["core:frequency"], "core:frequency", meta_path)
                   for c in captures if "core:frequency" in c}
    if len(frequencies) > 1:
        raise iq_error(f"{meta_path}: captures at several centre frequencies "
                       f"({', '.join(f'{f:g}' for f in sorted(frequencies))} Hz): one is read")
    for c in captures:
        start = c.get("core:sample_start", 0)
        if not isinstance(start, int) or isinstance(start, bool) or not 0 <= start < samples:
            raise iq_error(f"{meta_path}: a capture's core:sample_start {json.dumps(start)} is not "
                           f"a sample of the {samples} in {data_path}")
    centre = frequencies.pop() if frequencies else None
    if centre is not None and centre_hz is not None and float(centre_hz) != centre:
        raise iq_error(f"{meta_path}: --centre-frequency {centre_hz:g} contradicts core:frequency "
                       f"{centre:g}")
    centre = centre if centre is not None else centre_hz
    for a in annotations:
        start, count = a.get("core:sample_start"), a.get("core:sample_count", 0)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (start, count)):
            raise iq_error(f"{meta_path}: an annotation's core:sample_start or core:sample_count "
                           f"is missing or not a whole number")
        if start + count > samples:
            raise iq_error(f"{meta_path}: truncated: an annotation ends at sample {start + count}, "
                           f"{data_path} holds {samples}")
        if ("core:freq_lower_edge" in a) != ("core:freq_upper_edge" in a):
            raise iq_error(f"{meta_path}: an annotation gives one band edge of two")
        if "core:freq_lower_edge" in a:
            low = _number(a["core:freq_lower_edge"], "core:freq_lower_edge", meta_path)
            high = _number(a["core:freq_upper_edge"], "core:freq_upper_edge", meta_path)
            if not low < high:
                raise iq_error(f"{meta_path}: an annotation's band edges {low:g} and {high:g} Hz "
                               f"are the wrong way round")
            if centre is not None and (low < centre - rate / 2 or high > centre + rate / 2):
                raise iq_error(f"{meta_path}: an annotation's band {low:g}-{high:g} Hz lies outside "
                               f"the recording ({centre:g} Hz +- {rate / 2:g} Hz)")
    return recording(data_path, datatype, rate, samples, centre, annotations, meta)


def read(path, sample_rate=None, centre_hz=None):
    """A recording of either kind, by its name."""
    if os.path.isdir(path):
        raise iq_error(f"{path}: is a directory")
    if kind_of(path) == "sigmf":
        return read_sigmf(path, sample_rate, centre_hz)
    return read_raw(path, sample_rate, centre_hz)


def to_complex(raw, datatype):
    """Stored numbers (interleaved I, Q) to complex64."""
    x = np.asarray(raw, dtype=np.float32)
    if datatype == "ci16_le":
        x = x / np.float32(CI16_FULL_SCALE)
    return x.view(np.complex64) if x.flags.c_contiguous else np.ascontiguousarray(x).view(np.complex64)


def chunks(rec, size=1 << 16):
    """The samples as complex64 chunks, read as they are needed."""
    numbers = np.memmap(rec.data_path, dtype=DATATYPES[rec.datatype][0], mode="r")
    for k in range(0, 2 * rec.samples, 2 * size):
        yield to_complex(numbers[k:k + 2 * size], rec.datatype)


class writer:
    """Writes complex64 chunks as `datatype` to `path` (SigMF: its .sigmf-data, and the
    .sigmf-meta on close; raw: the samples alone). ci16_le clips to +-32767 and counts."""

    def __init__(self, path, datatype, sample_rate, centre_hz=None, description=None):
        self.kind = kind_of(path)
        if self.kind is None:
            raise iq_error(f"{path}: neither SigMF (.sigmf-meta) nor raw IQ "
                           f"({', '.join(RAW_EXTENSIONS)})")
        if datatype not in DATATYPES:
            raise iq_error(f"datatype {datatype}: written are {' and '.join(DATATYPES)}")
        if self.kind == "raw" and datatype != raw_datatype(path):
            raise iq_error(f"{path}: its name says {raw_datatype(path)}, not {datatype}")
        self.meta_path, self.data_path = sigmf_paths(path) if self.kind == "sigmf" else (None, path)
        self.datatype, self.sample_rate, self.centre_hz = datatype, sample_rate, centre_hz
        self.description = description
        self.annotations = []
        self.samples, self.clipped = 0, 0
        self.file = open(self.data_path, "wb")

    def write(self, x):
        x = np.asarray(x, dtype=np.complex64)
        numbers = x.view(np.float32)
        if self.datatype == "ci16_le":
            scaled = np.round(numbers.astype(np.float64) * CI16_FULL_SCALE)
            self.clipped += int(np.count_nonzero(np.abs(scaled) > 32767))
            numbers = np.clip(scaled, -32767, 32767).astype("<i2")
        else:
            numbers = numbers.astype("<f4")
        self.file.write(numbers.tobytes())
        self.samples += len(x)

    def annotate(self, start, count, label=None, bandwidth_hz=None, carrier_hz=None):
        """A stretch of samples: its label and, with a carrier known, its band's edges."""
        a = {"core:sample_start": int(start), "core:sample_count": int(count)}
        if label:
            a["core:label"] = label
        if bandwidth_hz and carrier_hz is not None:
            a["core:freq_lower_edge"] = carrier_hz - bandwidth_hz / 2
            a["core:freq_upper_edge"] = carrier_hz + bandwidth_hz / 2
        self.annotations.append(a)

    def close(self):
        self.file.close()
        if self.kind != "sigmf":
            return
        g = {"core:datatype": self.datatype, "core:sample_rate": self.sample_rate,
             "core:version": SIGMF_VERSION, "core:recorder": "gr-hfstack"}
        if self.description:
            g["core:description"] = self.description
        capture = {"core:sample_start": 0}
        if self.centre_hz is not None:
            capture["core:frequency"] = self.centre_hz
        with open(self.meta_path, "w") as f:
            json.dump({"global": g, "captures": [capture], "annotations": self.annotations}, f,
                      indent=2)
            f.write("\n")
