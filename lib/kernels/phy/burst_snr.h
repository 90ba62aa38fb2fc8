/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The SNR a serial-tone receiver reports for a whole burst.
 *
 * The known-symbol error power is taken in chunks of 64 known symbols (27-250 ms:
 * short against the fades of the F.1487 channels, long enough that noise alone moves a
 * chunk's estimate by well under 0.1 dB); each chunk gives an SNR in dB, and the report
 * is their mean over the burst, the preamble's chunks included.
 *
 * Why a mean over the burst: the receivers used to report their moving average of the
 * error power (about the last 50 known symbols) at the burst's end, one look at the
 * channel however long the burst. On a fading channel such a look scatters by 3-4 dB
 * (single reports on poor, docs/simulator-design.md), and a burst cut where lock is lost
 * ends in a fade by definition; the node's bursts last up to 127 s, so a long burst
 * that carried most of its frames could be reported as if it had all been in its last
 * fade. Over the burst the scatter falls with its length, and a stretch of lost lock
 * counts by its share of the burst.
 *
 * Why the mean of the chunks' dB (not the median, not the power mean): a chunk is as
 * long as the old moving average, so the chunks' mean in dB is, in expectation, what
 * the old report read at a random moment of the burst. The measured report maps
 * (phy/snr_report_map.h, from bench_s4539_modem's 10 s bursts) were taken with that
 * look and stay valid in their mean; a median would read about 1 dB higher on Rayleigh
 * fading and a power mean be ruled by the deepest fade.
 *
 * The recent report: the same mean over the chunks of the burst's last recent_window_s
 * seconds. A burst lasts up to 127 s and the mode can change only between bursts, so a
 * burst across a rise in SNR would otherwise advise from the mean of both levels, and
 * its sender spend one more whole burst below the mode the channel now holds
 * (docs/simulator-design.md, "Automatic data rate"). The rate
 * policy steps down on the whole burst's report and up on the recent one. */
#ifndef HFSTACK_KERNELS_PHY_BURST_SNR_H
#define HFSTACK_KERNELS_PHY_BURST_SNR_H

#include <cstddef>
#include <utility>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

// An SNR in 3 kHz (dB) from the error power on the known symbols (on the scale of
// unit-amplitude symbols) and the signal's mean power on that scale (1 for PSK): the
// serial-tone receivers sample at the 2400 Bd symbol rate.
double serial_tone_snr_3khz_db(double signal_power, double error_power);

class burst_snr
{
public:
    static constexpr size_t chunk_symbols = 64;
    static constexpr double recent_window_s =
        20.0; // the slow rate average's time constant

    // A new burst: forgets everything.
    void start();
    // The error power of one known symbol (|estimate - sent|^2, or a model's variance)
    // sent time_s seconds into the burst (non-decreasing).
    void add(double error_power, double time_s);
    // Mean over the burst's chunks of their SNR in 3 kHz for a signal of signal_power
    // (see serial_tone_snr_3khz_db); a last partial chunk counts once it has half a
    // chunk's symbols. NaN before the first half chunk.
    double snr_db(double signal_power = 1.0) const;
    // The same over the chunks that end within recent_window_s of the latest known
    // symbol: snr_db() for a burst no longer than that.
    double recent_snr_db(double signal_power = 1.0) const;
    // Chunks that snr_db() would average.
    size_t chunks() const;

private:
    // The mean over the closed chunks from index `first` and the partial one.
    double snr_db_from(size_t first, double signal_power) const;

    double d_chunk_sum = 0;   // error power of the open chunk
    size_t d_chunk_count = 0; // its symbols
    double d_last_s = 0;      // time of the latest known symbol
    // Closed chunks: (end time, 10 log10(mean error power)); the running sum of the dB
    // from the first, so any tail's mean is one subtraction.
    std::vector<std::pair<double, double>> d_closed_db_sum;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
