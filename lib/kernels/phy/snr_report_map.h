/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* What our receivers report as a burst's SNR against the true SNR, per mode, from the
 * measured curves (phy/modem_curves.h).
 *
 * The receivers estimate SNR from their decisions, so the report is biased, and for
 * the App C modes far from linear: on F.1487 poor, 9600L reports about 15 dB at a true
 * 23 dB and 24 dB at 31 dB, because wrong decisions count as noise. The rate policy's
 * thresholds are true SNRs (bench_curve_fit derives them from the BER curves), so the
 * node maps each report back to the true SNR it stands for before the policy sees it,
 * and the simulator and the emulated modem map the true SNR forward to report what our
 * receiver would.
 *
 * The map is built from a mode's points on the HF fading channels (F.1487 poor and
 * moderate, pooled: the receiver cannot tell which channel it is on, and the rate
 * thresholds are set on moderate), or from its AWGN points when it has fewer than two
 * fading SNRs with a report. Reports at the same true SNR are averaged; the sequence is
 * made non-decreasing (pool-adjacent-violators) and equal reports merged, so the map is
 * strictly increasing and invertible. Outside the measured range it continues with
 * slope 1 from its end point (a constant bias): the measurements say nothing there.
 * The spread of single reports is the mean of the points' (bench_s4539_modem's bursts,
 * seconds / bursts long, about 11 s). A report is the burst's mean (phy/burst_snr.h);
 * older points hold the reports of a look at the burst's end (3-4 dB of spread on
 * fading), and their run's row in the data says so (docs/simulator-design.md, "Our
 * modems' curves").
 */
#ifndef HFSTACK_KERNELS_PHY_SNR_REPORT_MAP_H
#define HFSTACK_KERNELS_PHY_SNR_REPORT_MAP_H

#include "phy/modem_curves.h"

#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

class snr_report_map
{
public:
    // true_db and report_db: the same length, at least 2, finite, both strictly
    // increasing; report_sd_db >= 0 (the spread of single reports about the mean).
    // Throws std::invalid_argument naming the field.
    // report_burst_s: the bursts' length the spread was measured on (> 0).
    snr_report_map(std::vector<double> true_db,
                   std::vector<double> report_db,
                   double report_sd_db,
                   double report_burst_s,
                   std::string channels);

    // The mean report at a true SNR, and the true SNR a report stands for (its inverse).
    // NaN gives NaN.
    double report_for(double true_snr_db) const;
    double true_snr_for(double report_db) const;

    const std::vector<double>& true_db() const { return d_true; }
    const std::vector<double>& report_db() const { return d_report; }
    double report_sd_db() const { return d_sd; }
    // The spread of one report on a burst of `burst_s` seconds: report_sd_db() on the
    // measured bursts, falling as 1 / sqrt(length) on longer ones (a burst's mean SNR
    // and the estimate average over more fades and symbols), never above it on shorter.
    double report_sd_db(double burst_s) const;
    double report_burst_s() const { return d_burst_s; }
    // Which points it was built from: "poor+moderate" or "awgn".
    const std::string& channels() const { return d_channels; }

private:
    std::vector<double> d_true, d_report;
    double d_sd;
    double d_burst_s;
    std::string d_channels;
};

// The map of `mode` built from `data` as described above; nullopt when the mode has
// fewer than two SNRs with a report on either kind of channel.
std::optional<snr_report_map> snr_report_map_from(const modem_curve_data& data,
                                                  const std::string& mode);

// The map of `mode` from its points on one channel ("poor", "awgn", ...) alone, for a
// model of the receiver on that channel; nullopt with fewer than two SNRs reported.
std::optional<snr_report_map> snr_report_map_on(const modem_curve_data& data,
                                                const std::string& mode,
                                                const std::string& channel);

// From measured_modem_curves(), built once per mode; nullptr without one.
const snr_report_map* measured_snr_report_map(const std::string& mode);

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
