/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Fits the simulator's fading model to our modems' measured curves
 * (docs/simulator-design.md, "Our modems' curves").
 *   build/bench/bench_curve_fit lib/kernels/sim/modem_curves.csv [--seconds S]
 *       [--target-fer F] [--frame-bits N] [--reference moderate] [--max-ber B]
 *       [--beta-channels poor,moderate] [--goodput 1] [--verbose 1]
 * Prints the [fits] rows as CSV on stdout (bench/s4539_curves.py puts them in the file);
 * --verbose 1 prints each fading point's measured and model BER on stderr. Per mode with
 * AWGN points (the AWGN curve of sim::curve_from_points): eesm_beta, fading_loss_db the
 * beta (log grid 0.1 .. 1000, 10 per decade) and the fading loss (0 .. 8 dB, 0.5 dB
 * steps) that minimise the RMS of log10(model BER / measured BER) over the mode's fading
 * points measured at or below B (default 1e-2: where links run; above it a burst cut
 * short in a fade, which the model does not hold, weighs in) on the --beta-channels
 * (default the F.1487 poor and moderate ones the simulator's fading scenarios use: one
 * beta cannot follow 5 ms / 5 Hz as well, where our 110A receivers do far worse;
 * received bursts' BER). Every fading channel's points join the preamble-loss fit. A
 * point without errors counts only where the model exceeds its 95 % bound (3 / bits).
 *                  The model's BER is the mean over S seconds (default 1200) of the
 *                  block BERs of the simulator's fading process (same sampling, EESM
 *                  per interleaver block), channel seed 1.
 *   detect_snr_db, detect_width_db
 *                  the preamble detection SNR (0.25 dB grid) and width (0 .. 3 dB) of
 *                  highest binomial likelihood of the measured lost / bursts over every
 *                  point, the model missing a preamble of mean SNR x (over the
 *                  preamble; starts every 0.5 s over the S seconds) with probability
 *                  sim::preamble_miss_probability; of equally likely values the highest
 *                  SNR, then the narrowest width.
 *   rate_snr_db    the lowest SNR (0.5 dB grid) from which on the reference channel the
 *                  model's frame-error rate of N-bit frames (default 4096, a 512-byte
 *                  D_PDU) stays at or below F (default 0.1): a frame is lost with its
 *                  burst's preamble or when one of its bits is wrong. With --goodput 1
 *                  (default) a mode's target is at most 1 - R'/R, R its data rate and
 *                  R' the rate of the entry below it in the rate policy's ladder
 *                  (dl::rate_table_from, rebuilt until it settles; the next lower rate
 *                  among the modes for a mode outside it): from there on it delivers
 *                  more than the mode the link would use instead, even without losses
 *                  (9600: FER 0.17, 8000: 0.2, 6400: 0.25; 3200 competes with 1200, not
 *                  with 2400, which needs more SNR), so a faster mode that loses more
 *                  than it gains is not chosen.
 * A mode without fading points takes beta and fading loss from the fitted mode of its
 * family (110A or App C) with the same interleaver and the nearest rate, else from the
 * fitted mode of either family with that interleaver (source "fallback:MODE"); its
 * detection SNR is fitted to its own (AWGN) points when they lost bursts, else it is the
 * donor's, lowered to what its own points allow. */
#include "chan/fading_profile.h"
#include "dl/rate_policy.h"
#include "phy/modem_curves.h"
#include "phy/waveform_modes.h"
#include "sim/fading_errors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace gr::hfstack;

namespace {

const char* const fading_channels[] = { "poor", "moderate", "5ms5hz" };

chan::fading_profile profile_of(const std::string& channel)
{
    if (channel == "5ms5hz") {
        chan::fading_profile p;
        p.name = "5ms5hz";
        p.paths = { { 0.5, 5.0, 0.0, 0.0 }, { 0.5, 5.0, 0.0, 0.005 } };
        return p;
    }
    return chan::fading_profile_by_name(channel);
}

// Linear SNR samples at mean 1 (0 dB) of a channel, on the simulator's grid for a block.
struct samples {
    double step = 0;
    std::vector<double> snr;
};

samples sample_channel(const std::string& channel, double block_s, double seconds)
{
    const chan::fading_profile profile = profile_of(channel);
    sim::fading_snr process(0.0, profile, 1);
    sim::fading_error_config c;
    c.interleaver_s = block_s;
    // The simulator's spacing (fading_error_process's rule).
    const double block = block_s > 0 ? block_s : c.uninterleaved_window_s;
    samples s;
    s.step = std::min(c.max_sample_step_s, block / 8.0);
    if (process.max_spread_hz() > 0)
        s.step = std::min(s.step, 1.0 / (10.0 * process.max_spread_hz()));
    const size_t n = size_t(seconds / s.step);
    s.snr.resize(n);
    for (size_t k = 0; k < n; ++k)
        s.snr[k] = process.snr_linear(double(k) * s.step);
    return s;
}

// The model's SNRs (linear) at mean SNR snr_db that the curve is read at: per block of
// block_s the EESM effective SNR, or (block_s 0) every sample, as the simulator does.
std::vector<double>
effective_snrs(const samples& s, double beta, double block_s, double snr_db)
{
    const double gain = std::pow(10.0, snr_db / 10.0);
    std::vector<double> out;
    if (block_s <= 0) {
        for (double x : s.snr)
            out.push_back(gain * x);
        return out;
    }
    const size_t per = std::max<size_t>(1, size_t(std::llround(block_s / s.step)));
    std::vector<double> scaled(per);
    for (size_t k = 0; k + per <= s.snr.size(); k += per) {
        for (size_t j = 0; j < per; ++j)
            scaled[j] = gain * s.snr[k + j];
        out.push_back(sim::eesm_effective_snr(scaled.data(), per, beta));
    }
    return out;
}

// Block BERs (blocks of block_s; 0: 0.1 s windows averaging the samples' BERs) with the
// fading loss.
std::vector<double> block_bers(const samples& s,
                               const sim::ber_curve& curve,
                               double beta,
                               double block_s,
                               double snr_db,
                               double loss_db)
{
    const double loss = std::pow(10.0, -loss_db / 10.0);
    const std::vector<double> eff = effective_snrs(s, beta, block_s, snr_db);
    const size_t per =
        block_s > 0 ? 1 : std::max<size_t>(1, size_t(std::llround(0.1 / s.step)));
    std::vector<double> out;
    for (size_t k = 0; k + per <= eff.size(); k += per) {
        double sum = 0;
        for (size_t j = 0; j < per; ++j)
            sum += curve.ber_linear(std::max(eff[k + j], 0.0) * loss);
        out.push_back(sum / double(per));
    }
    return out;
}

// Mean BER (at least 1e-12) of the curve read at these SNRs lowered by loss_db.
double
mean_ber(const std::vector<double>& eff, const sim::ber_curve& curve, double loss_db)
{
    const double loss = std::pow(10.0, -loss_db / 10.0);
    double sum = 0;
    for (double x : eff)
        sum += curve.ber_linear(std::max(x, 0.0) * loss);
    return std::max(sum / double(eff.size()), 1e-12);
}

// Preamble mean SNRs (dB at mean 0 dB), one per start every 0.5 s.
std::vector<double> preamble_snrs_db(const samples& s, double preamble_s)
{
    const size_t len = std::max<size_t>(1, size_t(std::llround(preamble_s / s.step)));
    const size_t hop = std::max<size_t>(1, size_t(std::llround(0.5 / s.step)));
    std::vector<double> out;
    for (size_t k = 0; k + len <= s.snr.size(); k += hop) {
        double sum = 0;
        for (size_t j = 0; j < len; ++j)
            sum += s.snr[k + j];
        out.push_back(10.0 * std::log10(sum / double(len)));
    }
    return out;
}

double loss_rate(const std::vector<double>& preamble_db,
                 double snr_db,
                 double detect_db,
                 double width_db)
{
    double missed = 0;
    for (double x : preamble_db)
        missed += sim::preamble_miss_probability(x + snr_db, detect_db, width_db);
    return missed / double(preamble_db.size());
}

// Mean error rate of frames of frame_s seconds sent back to back over blocks of block
// seconds with these BERs: a frame is good when all its bits are.
double frame_error_rate(const std::vector<double>& bers,
                        double block,
                        double frame_s,
                        double bit_rate)
{
    const double total = double(bers.size()) * block;
    double sum = 0;
    size_t frames = 0;
    for (double f0 = 0; f0 + frame_s <= total; f0 += frame_s) {
        double log_ok = 0;
        for (size_t k = size_t(f0 / block);
             k < bers.size() && double(k) * block < f0 + frame_s;
             ++k) {
            const double overlap = std::min(f0 + frame_s, double(k + 1) * block) -
                                   std::max(f0, double(k) * block);
            log_ok += overlap * bit_rate * std::log1p(-std::min(bers[k], 0.5));
        }
        sum += 1.0 - std::exp(log_ok);
        ++frames;
    }
    return frames ? sum / double(frames) : 1.0;
}

struct mode_fit {
    phy::modem_curve_fit fit;
    bool fitted = false;     // beta and fading loss from its own fading points
    bool saw_losses = false; // some point of its own lost a burst
};

std::string family_of(const std::string& mode)
{
    const auto m = phy::waveform_mode_by_name(mode);
    return m && m->s4539 && m->s4539->serial ? "110A" : "appc";
}

std::string interleaver_of(const std::string& mode)
{
    const auto m = phy::waveform_mode_by_name(mode);
    return m && m->s4539 ? m->interleaver : "";
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(
            stderr,
            "bench_curve_fit: usage: bench_curve_fit FILE [--seconds S] [--target-fer F] "
            "[--frame-bits N] [--reference CHANNEL] [--beta-channels poor,moderate]\n");
        return 2;
    }
    double seconds = 1200, target_fer = 0.1, max_ber = 1e-2;
    unsigned frame_bits = 4096;
    std::string reference = "moderate";
    std::set<std::string> beta_channels = { "poor", "moderate" };
    bool verbose = false, goodput = true;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--seconds")
            seconds = std::atof(value.c_str());
        else if (key == "--target-fer")
            target_fer = std::atof(value.c_str());
        else if (key == "--frame-bits")
            frame_bits = unsigned(std::atoi(value.c_str()));
        else if (key == "--reference")
            reference = value;
        else if (key == "--max-ber")
            max_ber = std::atof(value.c_str());
        else if (key == "--verbose")
            verbose = value != "0";
        else if (key == "--goodput")
            goodput = value != "0";
        else if (key == "--beta-channels") {
            beta_channels.clear();
            std::stringstream list(value);
            for (std::string ch; std::getline(list, ch, ',');)
                beta_channels.insert(ch);
        } else {
            std::fprintf(stderr, "bench_curve_fit: unknown option %s\n", key.c_str());
            return 2;
        }
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "bench_curve_fit: cannot read %s\n", argv[1]);
        return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    phy::modem_curve_data data;
    try {
        // The points only: the old fits are what this replaces.
        const std::string all = text.str();
        data = phy::parse_modem_curves(all.substr(0, all.find("\n[fits]")));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_curve_fit: %s\n", e.what());
        return 2;
    }

    std::vector<double> betas;
    for (int k = -10; k <= 30; ++k)
        betas.push_back(std::pow(10.0, double(k) / 10.0));
    std::map<std::string, mode_fit> fits;
    std::vector<std::string> order;
    for (const std::string& mode : data.modes_on("awgn")) {
        const auto timing = phy::waveform_timing_by_name(mode);
        if (!timing)
            continue;
        const auto awgn = data.points_of(mode, "awgn");
        sim::ber_curve curve = [&] {
            try {
                return sim::curve_from_points(awgn, 1.0);
            } catch (const std::invalid_argument&) {
                return sim::ber_curve({ { 0, 0.5 }, { 1, 0.5 } });
            }
        }();
        bool have_curve = false;
        for (const auto& p : awgn)
            have_curve |= p.rx_errors > 0;
        if (!have_curve) {
            std::fprintf(
                stderr, "%-7s no AWGN point with errors: not modelled\n", mode.c_str());
            continue;
        }
        order.push_back(mode);
        const double block_s = timing->whole_units() ? timing->unit_s : 0.0;
        std::map<std::string, samples> channel_samples;
        std::vector<std::pair<phy::modem_curve_point, const samples*>> fading;
        for (const char* ch : fading_channels) {
            const auto points = data.points_of(mode, ch);
            if (points.empty())
                continue;
            channel_samples[ch] = sample_channel(ch, block_s, seconds);
            for (const auto& p : points)
                fading.push_back({ p, &channel_samples[ch] });
        }
        mode_fit mf;
        mf.fit.mode = mode;
        // beta and fading loss
        double best_rms = std::numeric_limits<double>::infinity(), best_beta = 1,
               best_loss = 0;
        unsigned used = 0;
        std::vector<double> fitted_ber(fading.size());
        for (double beta : betas) {
            std::vector<std::vector<double>> eff;
            for (const auto& [p, s] : fading)
                eff.push_back(effective_snrs(*s, beta, block_s, p.snr_db));
            for (double loss_db = 0; loss_db <= 8.0 + 1e-9; loss_db += 0.5) {
                double sum = 0;
                unsigned n = 0;
                std::vector<double> model(fading.size());
                for (size_t i = 0; i < fading.size(); ++i) {
                    const phy::modem_curve_point& p = fading[i].first;
                    model[i] = p.rx_bits ? mean_ber(eff[i], curve, loss_db) : 0.0;
                    if (p.rx_bits == 0 || p.rx_ber() > max_ber ||
                        !beta_channels.count(p.channel))
                        continue;
                    double r;
                    if (p.rx_errors > 0)
                        r = std::log10(model[i] / p.rx_ber());
                    else
                        r = std::max(0.0,
                                     std::log10(model[i] / (3.0 / double(p.rx_bits))));
                    sum += r * r;
                    ++n;
                }
                if (n == 0)
                    break;
                const double rms = std::sqrt(sum / double(n));
                if (rms < best_rms - 1e-12) {
                    best_rms = rms;
                    best_beta = beta;
                    best_loss = loss_db;
                    used = n;
                    fitted_ber = model;
                }
            }
        }
        mf.fitted = used > 0;
        if (verbose)
            for (size_t i = 0; i < fading.size(); ++i) {
                const phy::modem_curve_point& p = fading[i].first;
                std::fprintf(
                    stderr,
                    "%-7s %-9s %5.1f dB  measured %.2e (%llu in %llu), model %.2e\n",
                    mode.c_str(),
                    p.channel.c_str(),
                    p.snr_db,
                    p.rx_ber(),
                    (unsigned long long)p.rx_errors,
                    (unsigned long long)p.rx_bits,
                    fitted_ber[i]);
            }
        mf.fit.fading_loss_db = best_loss;
        mf.fit.eesm_beta = best_beta;
        mf.fit.beta_rms_log10 = mf.fitted ? best_rms : 0;
        mf.fit.beta_points = used;
        // Preamble detection SNR
        std::map<std::string, std::vector<double>> preamble;
        for (auto& [ch, s] : channel_samples)
            preamble[ch] = preamble_snrs_db(s, timing->preamble_s);
        double best_ll = -std::numeric_limits<double>::infinity(), best_d = -20,
               best_w = 0, best_loss_rms = 0;
        unsigned loss_points = 0;
        for (double w : { 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0 }) {
            for (double d = -20; d <= 45; d += 0.25) {
                double ll = 0, sq = 0;
                unsigned n = 0;
                auto add = [&](const phy::modem_curve_point& p, double pred) {
                    const double q = std::clamp(pred, 1e-4, 1 - 1e-4);
                    ll += double(p.lost) * std::log(q) +
                          double(p.bursts - p.lost) * std::log(1 - q);
                    sq += (pred - p.loss_rate()) * (pred - p.loss_rate());
                    ++n;
                };
                for (const auto& p : data.points_of(mode, "awgn"))
                    if (p.bursts)
                        add(p, sim::preamble_miss_probability(p.snr_db, d, w));
                for (const auto& [p, s] : fading)
                    if (p.bursts)
                        add(p, loss_rate(preamble[p.channel], p.snr_db, d, w));
                // Of equally likely values the highest detection SNR, then the narrowest.
                if (ll > best_ll + 1e-9 || (ll >= best_ll - 1e-9 && d > best_d)) {
                    best_ll = std::max(ll, best_ll);
                    best_d = d;
                    best_w = w;
                    best_loss_rms = n ? std::sqrt(sq / double(n)) : 0;
                    loss_points = n;
                }
            }
        }
        mf.fit.detect_width_db = best_w;
        mf.fit.detect_snr_db = best_d;
        for (const auto& p : data.points)
            mf.saw_losses |= p.mode == mode && p.lost > 0;
        mf.fit.loss_rms = best_loss_rms;
        mf.fit.loss_points = loss_points;
        mf.fit.source = "fitted";
        fits[mode] = mf;
    }
    // Fallbacks: beta and detection from the nearest fitted mode of the same family and
    // interleaver.
    for (const std::string& mode : order) {
        mode_fit& mf = fits[mode];
        if (mf.fitted)
            continue;
        const unsigned bps = phy::waveform_mode_by_name(mode)->user_bps;
        // The same family and interleaver first, else the same interleaver.
        const mode_fit* donor = nullptr;
        for (const bool same_family : { true, false }) {
            if (donor)
                break;
            double distance = 0;
            for (const std::string& other : order) {
                const mode_fit& of = fits[other];
                if (!of.fitted || interleaver_of(other) != interleaver_of(mode) ||
                    (same_family && family_of(other) != family_of(mode)))
                    continue;
                const double dd = std::fabs(std::log(
                    double(phy::waveform_mode_by_name(other)->user_bps) / double(bps)));
                if (!donor || dd < distance) {
                    donor = &of;
                    distance = dd;
                }
            }
        }
        if (!donor) {
            std::fprintf(
                stderr,
                "%-7s no fading points and no fitted mode to borrow from: beta 1, "
                "detection from AWGN only\n",
                mode.c_str());
            mf.fit.source = "fallback:none";
            continue;
        }
        mf.fit.eesm_beta = donor->fit.eesm_beta;
        mf.fit.fading_loss_db = donor->fit.fading_loss_db;
        // Its own points decide the detection SNR when they lost bursts; otherwise the
        // donor's, if its own points allow it.
        if (!mf.saw_losses)
            mf.fit.detect_snr_db =
                std::min(mf.fit.detect_snr_db, donor->fit.detect_snr_db);
        if (!mf.saw_losses)
            mf.fit.detect_width_db = donor->fit.detect_width_db;
        mf.fit.beta_rms_log10 = 0;
        mf.fit.beta_points = 0;
        mf.fit.source = "fallback:" + donor->fit.mode;
    }
    // Rate thresholds on the reference channel: per mode the last SNR, from the top
    // down, before its frame-error rate first exceeds `target`.
    const auto threshold_for = [&](const std::string& mode, double target) {
        const mode_fit& mf = fits[mode];
        const auto timing = phy::waveform_timing_by_name(mode);
        const double block_s = timing->whole_units() ? timing->unit_s : 0.0;
        const sim::ber_curve curve =
            sim::curve_from_points(data.points_of(mode, "awgn"), mf.fit.eesm_beta);
        const samples s = sample_channel(reference, block_s, seconds);
        const auto preamble = preamble_snrs_db(s, timing->preamble_s);
        const double block = block_s > 0 ? block_s : 0.1;
        const double frame_s = double(frame_bits) / timing->bit_rate;
        double threshold = std::numeric_limits<double>::infinity();
        for (double snr = 50; snr >= -15; snr -= 0.5) {
            const double loss =
                loss_rate(preamble, snr, mf.fit.detect_snr_db, mf.fit.detect_width_db);
            const double fer =
                loss + (1 - loss) * frame_error_rate(block_bers(s,
                                                                curve,
                                                                mf.fit.eesm_beta,
                                                                block_s,
                                                                snr,
                                                                mf.fit.fading_loss_db),
                                                     block,
                                                     frame_s,
                                                     timing->bit_rate);
            if (fer > target)
                break;
            threshold = snr;
        }
        return threshold;
    };
    const auto bit_rate = [](const std::string& mode) {
        return phy::waveform_timing_by_name(mode)->bit_rate;
    };
    // A mode's frame-error target when the link would otherwise use rate `slower` (0:
    // none slower).
    const auto target_against = [&](const std::string& mode, double slower) {
        return goodput && slower > 0 ? std::min(target_fer, 1 - slower / bit_rate(mode))
                                     : target_fer;
    };
    // First pass: R' the next lower rate among all the modes.
    std::map<std::string, double> target_of;
    for (const std::string& mode : order) {
        double slower = 0;
        for (const std::string& other : order)
            if (bit_rate(other) < bit_rate(mode))
                slower = std::max(slower, bit_rate(other));
        target_of[mode] = target_against(mode, slower);
        fits[mode].fit.rate_snr_db = threshold_for(mode, target_of[mode]);
    }
    // Then R' the entry below in the rate policy's ladder (dl::rate_table_from), the mode
    // the link would use instead: a mode the ladder leaves out (2400S needs more SNR than
    // 3200S) is not the alternative, and taking its rate held 3200S to FER 0.25 where
    // 1200S is what it competes with. The ladder is rebuilt until no target moves.
    for (unsigned pass = 0; goodput && pass < 8; ++pass) {
        phy::modem_curve_data fitted;
        for (const std::string& mode : order)
            fitted.fits.push_back(fits[mode].fit);
        const auto ladder = dl::rate_table_from(fitted);
        bool moved = false;
        for (size_t i = 1; i < ladder.size(); ++i) {
            const std::string mode = dl::to_string(ladder[i].mode);
            if (!fits.count(mode))
                continue;
            // The first entry below at a lower rate (300L below 300S is the same rate:
            // the long interleaver trades delay, not rate).
            double slower = 0;
            for (size_t j = i; j-- > 0 && slower == 0;)
                if (const double r = bit_rate(dl::to_string(ladder[j].mode));
                    r < bit_rate(mode))
                    slower = r;
            if (slower == 0)
                continue;
            const double target = target_against(mode, slower);
            if (target == target_of[mode])
                continue;
            target_of[mode] = target;
            fits[mode].fit.rate_snr_db = threshold_for(mode, target);
            moved = true;
        }
        if (!moved)
            break;
    }
    std::printf("mode,eesm_beta,fading_loss_db,beta_rms_log10,beta_points,detect_snr_db,"
                "detect_width_db,"
                "loss_rms,loss_"
                "points,rate_snr_db,"
                "rate_target,source\n");
    char target[160];
    std::snprintf(
        target,
        sizeof target,
        goodput ? "FER min(%g, 1 - next lower ladder rate / rate) of %u-bit frames on %s"
                : "FER %g of %u-bit frames on %s",
        target_fer,
        frame_bits,
        reference.c_str());
    for (const std::string& mode : order) {
        const phy::modem_curve_fit& f = fits[mode].fit;
        char rate[32];
        std::snprintf(rate,
                      sizeof rate,
                      std::isfinite(f.rate_snr_db) ? "%.1f" : "inf",
                      f.rate_snr_db);
        std::printf("%s,%.4g,%.1f,%.3f,%u,%.2f,%.2f,%.4f,%u,%s,\"%s\",%s\n",
                    f.mode.c_str(),
                    f.eesm_beta,
                    f.fading_loss_db,
                    f.beta_rms_log10,
                    f.beta_points,
                    f.detect_snr_db,
                    f.detect_width_db,
                    f.loss_rms,
                    f.loss_points,
                    rate,
                    target,
                    f.source.c_str());
    }
    return 0;
}
