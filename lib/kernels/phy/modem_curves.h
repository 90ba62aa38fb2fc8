/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Our STANAG 4539 modems' measured curves, as data (docs/simulator-design.md, "Our
 * modems' curves").
 *
 * bench/s4539_curves.py measures every mode with bench_s4539_modem on AWGN and fading
 * channels and writes lib/kernels/sim/modem_curves.csv; bench_curve_fit fits the
 * simulator's model to it (EESM beta, preamble detection SNR) and derives each mode's
 * rate-change threshold. lib/CMakeLists.txt embeds that file into the kernels at build
 * time (a generated .cc holding its text), so the installed library, the tests and the
 * simulator read the same numbers with no file at run time; measured_modem_curves()
 * parses it once. No number of it is copied into code.
 *
 * The file is a sectioned CSV: lines starting with '#' are comments; a line "[name]"
 * starts a section whose next line names its columns. Sections:
 *   [runs]    run, commit, date, command: what measured the points
 *   [points]  run, mode, channel, snr_db, seconds, bits, errors, bursts, lost, rx_bits,
 *             rx_errors, snr_report_db, snr_report_sd (see modem_curve_point)
 *   [fits]    mode, eesm_beta, fading_loss_db, beta_rms_log10, beta_points,
 * detect_snr_db, detect_width_db, loss_rms, loss_points, rate_snr_db, source, ... (see
 *             modem_curve_fit)
 * Columns are found by name (others ignored); fields may be double-quoted (no quote
 * inside). Unknown sections are skipped.
 */
#ifndef HFSTACK_KERNELS_PHY_MODEM_CURVES_H
#define HFSTACK_KERNELS_PHY_MODEM_CURVES_H

#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct modem_curve_run {
    unsigned run = 0;
    std::string commit, date, command;
};

// One measured point: `seconds` of signal of `mode` through `channel` ("awgn", "poor",
// "moderate", "5ms5hz") at snr_db (dB in 3 kHz over the transmission's mean power).
struct modem_curve_point {
    unsigned run = 0;
    std::string mode, channel;
    double snr_db = 0, seconds = 0;
    uint64_t bits = 0, errors = 0; // every burst sent; a lost one counts all its bits
    uint64_t bursts = 0, lost = 0; // bursts sent, and those never reported
    uint64_t rx_bits = 0, rx_errors = 0;         // the received bursts alone
    double snr_report_db = 0, snr_report_sd = 0; // receiver's report (NaN: no burst)

    double rx_ber() const { return rx_bits ? double(rx_errors) / double(rx_bits) : 0.0; }
    double loss_rate() const { return bursts ? double(lost) / double(bursts) : 0.0; }
};

// The model fitted to one mode's points (bench_curve_fit).
struct modem_curve_fit {
    std::string mode;
    double eesm_beta = 0;      // linear SNR in 3 kHz
    double fading_loss_db = 0; // implementation loss on fading (dB), fitted with the beta
    double beta_rms_log10 = 0; // RMS of log10(model BER / measured BER) over beta_points
    unsigned beta_points = 0;  // fading points the beta was fitted to (0: fallback)
    double detect_snr_db = 0;  // a preamble whose mean SNR is x dB is missed with
    double detect_width_db =
        0;               // probability 1 / (1 + exp((x - detect) / width)) (0: a step)
    double loss_rms = 0; // RMS of (model - measured) burst-loss rate
    unsigned loss_points = 0;
    double rate_snr_db = 0; // the rate-change threshold (+inf: never meets the target)
    std::string source;     // "fitted", or "fallback:<mode>" when borrowed
};

struct modem_curve_data {
    std::vector<modem_curve_run> runs;
    std::vector<modem_curve_point> points;
    std::vector<modem_curve_fit> fits;
    std::string
        rate_target; // the [fits] section's rate_target column (how rate_snr_db was made)

    // The points of a mode on a channel, ascending SNR.
    std::vector<modem_curve_point> points_of(const std::string& mode,
                                             const std::string& channel) const;
    // nullptr if the mode has no fit.
    const modem_curve_fit* fit_of(const std::string& mode) const;
    // Modes with points on the channel, in file order, each once.
    std::vector<std::string> modes_on(const std::string& channel) const;
};

// Throws std::invalid_argument "modem curves line N: ..." for a row whose number of
// fields differs from its header, a missing column or a field that is no number.
modem_curve_data parse_modem_curves(const std::string& text);

// The file embedded at build time, parsed at the first call.
const modem_curve_data& measured_modem_curves();
// Its text, as embedded.
const std::string& measured_modem_curves_text();

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
