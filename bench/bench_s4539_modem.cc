/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* STANAG 4539 and 5069 modems: coded BER against SNR (dB in the mode's bandwidth: 3 kHz,
 * or the App D mode's 3-48 kHz) through the Watterson channel, and transmitter/receiver
 * speed on one core. Modes: the 110A serial-tone ones (75S .. 2400L, 4800U), the App C
 * ones (3200US .. 9600VL, 12800U) and the App D ones at every bandwidth (WN0/3kHz/S ..
 * WN13/3kHz/L, WN0/6kHz/S .. WN12/48kHz/L; --forgetting, --decision-weight,
 * --solve-interval,
 * --passes, --detection-threshold, --interpolate and --backward apply to the App D
 * receiver too, which has no --data-power).
 *   build/bench/bench_s4539_modem [--profile awgn|poor|...] [--modes 2400S,9600L]
 *       [--snr 8,10,12] [--seconds S per point] [--seed N] [--offset-hz F] [--ppm P]
 *       [--two-path delay_ms,spread_hz]   (two equal Rayleigh paths instead of a preset)
 *       [--static-paths d1,d2,...]   (equal static paths at these delays in ms, D-LXV's
 *                                     static multipath tests)
 *       [--forgetting L] [--decision-weight W] [--detection-threshold Z] [--passes N]
 *       [--soft-feedback 0|1]   (110A: the decoder-aided passes weigh each re-encoded
 *                               symbol in the tracker by its a posteriori probability)
 *       [--solve-interval N] [--interpolate 0|1]   (App C and D: channel from the probes)
 *       [--backward 0|1]   (App C and D: suspect frames equalised again backward)
 *       [--data-power 0|1]   (App C: the equaliser weighs QAM data at their own power)
 *       (the receivers' configuration)
 *       [--reliability-threshold R]   (App C and D: bytes_bad below this block
 * reliability)
 *       [--verbose 1]   (a line per burst on stderr)
 *       [--sweep-hz-per-s R]   (the offset sweeps as a triangle between -|offset-hz| and
 *                               +|offset-hz| at R Hz/s, from -|offset-hz|: D.6.5's
 *                               +-75 Hz at 3.5 Hz/s)
 *       [--frequency-rate 1]   (App D: the second-order frequency loop, for swept
 * offsets)
 *       [--superframes M]   (App D: M preamble super-frames, 1-32; D-LXIV's rows use 20)
 *       [--integrate J]   (App D: detection integrated over up to J earlier super-frames)
 *       [--find-readings 0|1]   (App D: the preamble's PN alignment and WID parity,
 *                           scrambler and tail-biting phase found, App C: the
 *                           scrambler and tail-biting phase, the default; 0: the
 *                           transmitter's readings told; it sends the defaults)
 *       [--wn0-symbols 0|1] [--wn0-forgetting L] [--wn0-drift D] [--wn0-margin M]
 *       [--wn0-pass 0|1]   (App D WN0: Walsh symbols decided whole, the tracker's memory,
 *                           tap error, sure decisions, the decoder-aided pass)
 *       [--cpu-time 1]  (tx_x_rt and rx_x_rt from the process's CPU time instead of the
 *                        wall clock: one core's speed on a machine others load)
 *       [--threads N]   (App D: threads the receiver may use, 1 or 2; the same output)
 *       [--burst-seconds B]   (each burst carries B s of user data, default 10)
 *       [--stream 1]   (the bursts and the 10 s of noise after them go to the receiver
 *       as one stream, in chunks as a flowgraph hands them, and App D's decoding is
 *       completed only at its end, as on a live stream: the x real time columns are
 *       then over the whole stream, noise included; by default each transmission is
 *       received and, App D, its decoding completed before the next is sent)
 *       [--max-errors N]   (a point stops early at N errors)
 *       [--auto-baud 1|2]  (1: the 110A and App C receivers listen, as in s4539_rx with
 *                           listen "4539", and for a 5069 mode the App D one too; 2: all
 *                           three, as listen "both")
 *       [--snr-reference mean|unit]   (mean: the SNR is over the transmission's mean
 *       power, measured on a burst of the mode, as STANAG 4539 measures it in 3 kHz;
 *       unit: over the power of unit-amplitude symbols, the PSK probes' level and the
 *       QAM tables' peak; the two differ only for 16/32/64QAM, by 0.9/1.6/2.0 dB)
 *       [--levels 1]   (only each mode's level at the modulator's output: mean and
 *       peak power of a burst, dB relative to unit-amplitude symbols)
 *       [--delay-spread-symbols N]   (App D: the equaliser's span; by default
 *       m110d_delay_spread_symbols: 2 ms at the mode's symbol rate plus 8 symbols, 13 at
 *       3 kHz, 28 at 12 kHz, 85 at 48 kHz)
 *       [--fft-search 0|1]   (App D above 3 kHz: the search's correlations by FFT, the
 *       default, or by dot products as before)
 *       [--coherent-search 0|1]   (App D at 3 kHz: the known chips also searched for
 *       coherently between bursts, the default, or by the differential correlation
 *       alone as before)
 *       [--coherent-two-paths 0|1]   (App D at 3 kHz, with the coherent search: two
 *       paths' coherent sums combined too, the default, or one path's alone as before)
 *       [--confirm-weak 0|1]   (App D at 3 kHz, with the coherent search: a coherent
 *       peak up to 1.5 under its threshold taken once the data after it carry a frame
 *       structure's known symbols, the default, or not as before)
 *       [--wn0-data-start 0|1]   (App D at 3 kHz, with --confirm-weak: WN0's data
 *       found with no preamble peak, the burst started from them, the default, or not
 *       as before)
 *       [--probe-data-start 0|1]   (App D at 3 kHz, with --confirm-weak: WN1-WN13's
 *       mini-probes found with no preamble peak, the burst started from them, the
 *       default, or not as before)
 *       [--weak-max-offset-hz F]   (App D at 3 kHz, with --confirm-weak: such a peak
 *       taken only within F Hz of the carrier; 75 the default, 150 the search's reach)
 *       [--wn0-foreign-block 0|1]   (App D WN0: a later block read as noise before any
 *       EOM ends the burst before it, searched again; the default, or not as before)
 *       [--equaliser auto|dfe|fde]   (App D data: the block frequency-domain
 *       equaliser above 3 kHz and the MMSE-DFE at 3 kHz, the default; or either)
 *       [--time-scaled-tracking 0|1]   (App D above 3 kHz: the equaliser's solve
 *       interval, tracker memory and LMS kept in seconds, the default, or in symbols)
 *       [--sample-rate HZ]   (the channel's rate, a radio's: the modulator shapes at it
 *       and the receiver's front end resamples it to 4 samples a symbol; default 9600
 *       for 3 kHz modes and the mode's own, m110d_sample_rate, for wider ones)
 * Each point sends bursts (of --burst-seconds of data) back to back (0.5 s gaps) until
 * `seconds` of signal (or N errors), then 10 s of noise; each reported burst counts its
 * errors against the transmission it started in, and a transmission none started in
 * counts all its bits as errors (lost). Prints mode, SNR, bits, errors, BER and its 95 %
 * upper bound (Poisson), bursts lost; of the bursts received, those with errors, those
 * with errors not flagged bytes_bad (missed) and those flagged without errors (false
 * alarms); then the bits and errors of the received bursts alone (rx_bits, rx_errs: the
 * lost ones left out) and the mean and standard deviation of the SNR the receiver
 * reported for them (snr_rep, snr_rep_sd, dB; nan without a burst); last, the
 * receiver's speed as x real time by the wall clock (rx_wall_x), by the calling
 * thread's CPU alone (rx_main_x) and by all threads' CPU (rx_all_x): with --threads 2
 * on two free cores the wall clock would be about the slower of rx_main_x and twice
 * rx_all_x (the critical path's estimate on a shared machine). */
#include "chan/watterson_channel.h"
#include "phy/m110a_receiver.h"
#include "phy/m110a_transmitter.h"
#include "phy/m110c_receiver.h"
#include "phy/m110c_transmitter.h"
#include "phy/m110d_receiver.h"
#include "phy/m110d_transmitter.h"
#include "phy/psk_modulator.h"
#include "phy/serial_tone_frontend.h"
#include "phy/waveform_modes.h"

#include <time.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace gr::hfstack;
using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

std::vector<std::string> split(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        out.push_back(item);
    return out;
}

// Bits of `sent` that `got` has wrong (a missing byte: all 8).
size_t bit_errors(const std::vector<uint8_t>& sent, const std::vector<uint8_t>& got)
{
    size_t errors = 0;
    for (size_t b = 0; b < sent.size(); ++b) {
        const uint8_t x = b < got.size() ? got[b] : uint8_t(~sent[b]);
        errors += size_t(__builtin_popcount(unsigned(x ^ sent[b])));
    }
    return errors;
}

// App D transmissions' preamble (--superframes).
m110d_transmit_options wide_tx;

// Wall clock, or (--cpu-time 1) the process's CPU time, all threads' (--threads 2: the
// CPU both took, not the time one core would).
bool cpu_clock = false;

double clock_s()
{
    if (cpu_clock)
        return double(std::clock()) / CLOCKS_PER_SEC;
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double seconds_since(double t0) { return clock_s() - t0; }

// The receiver's time three ways (the last columns): wall clock, the process's CPU (all
// threads), and the calling thread's CPU alone (with --threads 2, the rest is the
// second thread's: with two free cores the wall clock would be about the larger of the
// calling thread's and half the whole).
double wall_s()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double process_cpu_s() { return double(std::clock()) / CLOCKS_PER_SEC; }

double thread_cpu_s()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// One burst as either receiver reports it.
struct received {
    std::string mode;
    bool eom = false;
    bool bytes_bad = false; // the receiver's flag (110A: cut before its EOM)
    double reliability = 0; // App C: the burst's least block reliability
    std::vector<uint8_t> bytes;
    double snr_db = 0, frequency_offset_hz = 0;
    uint64_t start_sample = 0;
};

// A mode of either family: bytes to baseband samples, and a receiver.
struct modem {
    unsigned user_bps = 0;
    std::function<std::vector<cf>(const std::vector<uint8_t>&, const psk_modulator&)>
        transmit;
    std::function<void(const cf*, size_t, std::vector<received>&)> receive;
    // App D: waits for the blocks still decoding on a second thread (--threads 2), so
    // that the receiver's time covers its whole work.
    std::function<void(std::vector<received>&)> complete;
};

void append_bursts(std::vector<m110a_burst>& got, std::vector<received>& out)
{
    for (m110a_burst& b : got)
        out.push_back({ b.mode,
                        b.eom,
                        !b.eom,
                        0.0,
                        std::move(b.bytes),
                        b.snr_db,
                        b.frequency_offset_hz,
                        b.start_sample });
    got.clear();
}

void append_bursts(std::vector<m110c_burst>& got, std::vector<received>& out)
{
    for (m110c_burst& b : got)
        out.push_back({ b.mode,
                        b.eom,
                        b.bytes_bad,
                        b.least_reliability,
                        std::move(b.bytes),
                        b.snr_db,
                        b.frequency_offset_hz,
                        b.start_sample });
    got.clear();
}

// A receiver of `config` behind modem::receive.
template <typename Receiver, typename Burst, typename Config>
std::function<void(const cf*, size_t, std::vector<received>&)>
receiving(const Config& config)
{
    auto rx = std::make_shared<Receiver>(config);
    auto got = std::make_shared<std::vector<Burst>>();
    return [rx, got](const cf* x, size_t n, std::vector<received>& out) {
        rx->process(x, n, *got);
        append_bursts(*got, out);
    };
}

// False when the name is no STANAG 4539 mode nor a STANAG 5069 one. auto_baud 1: the
// 110A and App C receivers listen (s4539_rx's listen "4539"), and for a STANAG 5069 mode
// its App D receiver too; 2: all three (listen "both"). Above 3 kHz the App D receiver
// alone, at the mode's bandwidth.
bool make_modem(const std::string& name,
                const m110a_receiver_config& a_config,
                const m110c_receiver_config& c_config,
                const m110d_receiver_config& d_config,
                unsigned auto_baud,
                modem& m)
{
    const auto named = waveform_mode_by_name(name);
    const std::optional<m110d_mode> wide_mode = named ? named->s5069 : std::nullopt;
    if (auto_baud && !(wide_mode && wide_mode->bw_khz != 3)) {
        modem serial, high, wide;
        const bool known = make_modem(name, a_config, c_config, d_config, 0, m);
        if (!known)
            return false;
        make_modem("2400S", a_config, c_config, d_config, 0, serial);
        make_modem("9600S", a_config, c_config, d_config, 0, high);
        const bool s5069 = wide_mode.has_value();
        if (s5069 || auto_baud > 1)
            make_modem("WN6/3kHz/S", a_config, c_config, d_config, 0, wide);
        m.receive =
            [serial, high, wide](const cf* x, size_t n, std::vector<received>& out) {
                serial.receive(x, n, out);
                high.receive(x, n, out);
                if (wide.receive)
                    wide.receive(x, n, out);
            };
        return true;
    }
    const std::optional<s4539_mode> narrow = named ? named->s4539 : std::nullopt;
    if (const m110a_waveform* mode = narrow ? narrow->serial : nullptr) {
        m.user_bps = mode->user_bps;
        m.transmit = [mode](const std::vector<uint8_t>& data,
                            const psk_modulator& modulator) {
            return modulator.baseband(
                m110a_transmit_symbols(*mode, data.data(), data.size()));
        };
        m.receive = receiving<m110a_receiver, m110a_burst>(a_config);
        return true;
    }
    if (const std::optional<m110c_mode> mode = narrow ? narrow->high : std::nullopt) {
        m.user_bps = mode->user_bps;
        m.transmit = [mode](const std::vector<uint8_t>& data,
                            const psk_modulator& modulator) {
            return modulator.baseband(
                m110c_transmit_points(*mode, data.data(), data.size()));
        };
        m.receive = receiving<m110c_receiver, m110c_burst>(c_config);
        return true;
    }
    if (const auto mode = wide_mode) {
        m.user_bps = mode->user_bps();
        m.transmit = [mode](const std::vector<uint8_t>& data,
                            const psk_modulator& modulator) {
            return modulator.baseband(
                m110d_transmit_points(*mode, data.data(), data.size(), wide_tx));
        };
        m110d_receiver_config at_its_bandwidth = d_config;
        at_its_bandwidth.bandwidth_khz = mode->bw_khz;
        auto rx = std::make_shared<m110d_receiver>(at_its_bandwidth);
        auto got = std::make_shared<std::vector<m110d_burst>>();
        m.receive = [rx, got](const cf* x, size_t n, std::vector<received>& out) {
            rx->process(x, n, *got);
            append_bursts(*got, out);
        };
        m.complete = [rx, got](std::vector<received>& out) {
            rx->complete_decoding(*got);
            append_bursts(*got, out);
        };
        return true;
    }
    return false;
}

// Upper 95 % bound on a Poisson mean given k events (k = 0: 3.0).
double poisson_upper(size_t k)
{
    return k == 0 ? 3.0 : double(k) + 1.96 * std::sqrt(double(k)) + 1.0;
}

} // namespace

int main(int argc, char** argv)
{
    std::string profile = "awgn";
    std::vector<std::string> modes = { "2400S" };
    std::vector<double> snrs = { 6, 8, 10 };
    double seconds = 120;
    double burst_seconds = 10; // user data a burst carries, s
    uint64_t seed = 1;
    double offset_hz = 0, ppm = 0;
    double two_path_delay_ms = -1, two_path_spread_hz = 0;
    std::vector<double> static_paths_ms; // --static-paths: equal static paths (D-LXV)
    bool verbose = false;
    bool stream = false; // --stream: one stream, decoding completed only at its end
    unsigned auto_baud = 0;
    double sweep_hz_per_s = 0;
    size_t max_errors = 0; // a point stops at this many errors (0: runs its seconds)
    bool mean_reference = true;
    bool levels = false;
    double sample_rate = 0; // --sample-rate: 0 is the mode's own
    m110a_receiver_config rx_config;
    m110c_receiver_config high_rx_config;
    m110d_receiver_config wide_rx_config; // App D (3 kHz)
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        // A value that does not read as its option's number: one line, not an abort.
        try {
            if (key == "--profile")
                profile = value;
            else if (key == "--modes")
                modes = split(value);
            else if (key == "--snr") {
                snrs.clear();
                for (const std::string& v : split(value))
                    snrs.push_back(std::atof(v.c_str()));
            } else if (key == "--seconds")
                seconds = std::atof(value.c_str());
            else if (key == "--burst-seconds") {
                burst_seconds = std::atof(value.c_str());
                if (!(burst_seconds > 0 && burst_seconds <= 3600)) {
                    std::fprintf(stderr,
                                 "bench_s4539_modem: --burst-seconds: %s is not over 0 "
                                 "and at most 3600\n",
                                 value.c_str());
                    return 2;
                }
            } else if (key == "--seed")
                seed = std::strtoull(value.c_str(), nullptr, 10);
            else if (key == "--offset-hz")
                offset_hz = std::atof(value.c_str());
            else if (key == "--ppm")
                ppm = std::atof(value.c_str());
            else if (key ==
                     "--two-path") { // "delay_ms,spread_hz": two equal Rayleigh paths
                const std::vector<std::string> v = split(value);
                if (v.size() != 2) {
                    std::fprintf(
                        stderr,
                        "bench_s4539_modem: --two-path needs delay_ms,spread_hz\n");
                    return 2;
                }
                two_path_delay_ms = std::atof(v[0].c_str());
                two_path_spread_hz = std::atof(v[1].c_str());
                profile = "two-path " + value;
            } else if (key == "--static-paths") { // "d1,d2,...": equal static paths,
                                                  // delays in ms
                static_paths_ms.clear();
                for (const std::string& d : split(value))
                    static_paths_ms.push_back(std::atof(d.c_str()));
                profile = "static " + value;
            } else if (key == "--forgetting")
                rx_config.forgetting = high_rx_config.forgetting =
                    wide_rx_config.forgetting = std::atof(value.c_str());
            else if (key == "--decision-weight")
                rx_config.decision_weight = high_rx_config.decision_weight =
                    wide_rx_config.decision_weight = std::atof(value.c_str());
            else if (key == "--solve-interval")
                rx_config.equaliser_solve_interval =
                    high_rx_config.equaliser_solve_interval =
                        high_rx_config.qam64_solve_interval =
                            wide_rx_config.equaliser_solve_interval =
                                wide_rx_config.qam64_solve_interval =
                                    unsigned(std::atoi(value.c_str()));
            else if (key == "--interpolate")
                high_rx_config.interpolate_probes = wide_rx_config.interpolate_probes =
                    value != "0";
            else if (key == "--backward")
                high_rx_config.backward_frames = wide_rx_config.backward_frames =
                    value != "0";
            else if (key == "--data-power")
                high_rx_config.weigh_data_power = value != "0";
            else if (key == "--walsh-weight")
                rx_config.walsh_coherent_weight = std::atof(value.c_str());
            else if (key == "--walsh-metric")
                rx_config.walsh_metric = unsigned(std::atoi(value.c_str()));
            else if (key == "--soft-feedback")
                rx_config.soft_decoder_feedback = value != "0";
            else if (key == "--passes")
                rx_config.decoder_passes = high_rx_config.decoder_passes =
                    high_rx_config.qam64_decoder_passes = wide_rx_config.decoder_passes =
                        unsigned(std::atoi(value.c_str()));
            else if (key == "--detection-threshold")
                rx_config.detection_threshold = high_rx_config.detection_threshold =
                    wide_rx_config.detection_threshold = std::atof(value.c_str());
            else if (key == "--reliability-threshold")
                high_rx_config.reliability_threshold =
                    wide_rx_config.reliability_threshold = std::atof(value.c_str());
            else if (key == "--max-errors")
                max_errors = size_t(std::atoll(value.c_str()));
            else if (key == "--auto-baud")
                auto_baud = unsigned(std::stoul(value));
            else if (key == "--snr-reference") {
                if (value != "mean" && value != "unit") {
                    std::fprintf(stderr,
                                 "bench_s4539_modem: --snr-reference is mean or unit\n");
                    return 2;
                }
                mean_reference = value == "mean";
            } else if (key == "--levels")
                levels = value != "0";
            else if (key == "--verbose")
                verbose = value != "0";
            else if (key == "--sweep-hz-per-s")
                sweep_hz_per_s = std::stod(value);
            else if (key == "--frequency-rate")
                wide_rx_config.follow_frequency_rate = value != "0";
            else if (key == "--integrate")
                wide_rx_config.integrate_superframes = unsigned(std::stoul(value));
            else if (key == "--wn0-symbols")
                wide_rx_config.wn0_symbol_decisions = value != "0";
            else if (key == "--wn0-forgetting")
                wide_rx_config.wn0_forgetting = std::stod(value);
            else if (key == "--find-readings")
                wide_rx_config.find_scrambler = wide_rx_config.find_tail_biting =
                    wide_rx_config.find_preamble_readings =
                        high_rx_config.find_tail_biting = high_rx_config.find_scrambler =
                            value != "0";
            else if (key == "--wn0-pass")
                wide_rx_config.wn0_decoder_pass = value != "0";
            else if (key == "--wn0-margin")
                wide_rx_config.wn0_sure_margin = std::stod(value);
            else if (key == "--wn0-drift")
                wide_rx_config.wn0_tap_drift = std::stod(value);
            else if (key == "--superframes")
                wide_tx.timing.preamble.superframes = unsigned(std::stoul(value));
            else if (key == "--delay-spread-symbols")
                wide_rx_config.max_delay_spread_symbols = unsigned(std::stoul(value));
            else if (key == "--sample-rate")
                sample_rate = std::stod(value);
            else if (key == "--fft-search")
                wide_rx_config.fft_search = value != "0";
            else if (key == "--coherent-search")
                wide_rx_config.coherent_search = value != "0";
            else if (key == "--coherent-two-paths")
                wide_rx_config.coherent_two_paths = value != "0";
            else if (key == "--confirm-weak")
                wide_rx_config.confirm_weak_with_data = value != "0";
            else if (key == "--wn0-data-start")
                wide_rx_config.start_wn0_from_data = value != "0";
            else if (key == "--probe-data-start")
                wide_rx_config.start_from_mini_probes = value != "0";
            else if (key == "--weak-max-offset-hz")
                wide_rx_config.weak_max_offset_hz = std::stod(value);
            else if (key == "--wn0-foreign-block")
                wide_rx_config.wn0_end_at_foreign_block = value != "0";
            else if (key == "--time-scaled-tracking")
                wide_rx_config.time_scaled_tracking = value != "0";
            else if (key == "--equaliser") {
                if (value == "auto")
                    wide_rx_config.data_equaliser = phy::m110d_data_equaliser::automatic;
                else if (value == "dfe")
                    wide_rx_config.data_equaliser = phy::m110d_data_equaliser::mmse_dfe;
                else if (value == "fde")
                    wide_rx_config.data_equaliser = phy::m110d_data_equaliser::block_fde;
                else {
                    std::fprintf(
                        stderr,
                        "bench_s4539_modem: --equaliser takes auto, dfe or fde\n");
                    return 2;
                }
            } else if (key == "--cpu-time")
                cpu_clock = value != "0";
            else if (key == "--threads")
                wide_rx_config.threads = unsigned(std::max(1, std::atoi(value.c_str())));
            else if (key == "--stream")
                stream = value != "0";
            else {
                std::fprintf(
                    stderr, "bench_s4539_modem: unknown option %s\n", key.c_str());
                return 2;
            }
        } catch (const std::logic_error&) {
            std::fprintf(stderr,
                         "bench_s4539_modem: %s: %s is not a number\n",
                         key.c_str(),
                         value.c_str());
            return 2;
        }
    }
    if (argc % 2 == 0) {
        std::fprintf(
            stderr, "bench_s4539_modem: option %s needs a value\n", argv[argc - 1]);
        return 2;
    }
    // A mode's modulator at the channel's rate (--sample-rate, else the mode's own) and
    // its bandwidth (the SNR's noise band and the front end's symbol rate).
    struct shaping {
        double fs = 9600;
        unsigned bw_khz = 3;
        psk_modulator_config modulator;
    };
    const auto shaping_of = [&](const std::string& name) {
        shaping sh;
        if (const auto named = waveform_mode_by_name(name); named && named->s5069) {
            const m110d_mode* mode = &*named->s5069;
            sh.bw_khz = mode->bw_khz;
            sh.modulator =
                m110d_modulator_config(*mode, sample_rate > 0 ? sample_rate : 0);
        } else {
            sh.modulator.sample_rate = sample_rate > 0 ? sample_rate : 9600;
        }
        sh.fs = sh.modulator.sample_rate;
        return sh;
    };
    // A 10 s burst of random data in a mode: the level it leaves the modulator at.
    const auto burst_power =
        [&](const modem& m, const psk_modulator& modulator, double& mean, double& peak) {
            std::mt19937 rng{ 12345 };
            std::vector<uint8_t> data(std::max<size_t>(16, size_t(m.user_bps * 10 / 8)));
            for (auto& b : data)
                b = uint8_t(rng());
            const std::vector<cf> x = m.transmit(data, modulator);
            mean = peak = 0;
            for (const cf& v : x) {
                mean += std::norm(v);
                peak = std::max(peak, double(std::norm(v)));
            }
            mean /= double(x.size());
        };
    if (levels) {
        std::printf(
            "%-6s %14s %14s %10s\n", "mode", "mean_power_db", "peak_power_db", "papr_db");
        for (const std::string& name : modes) {
            modem m;
            if (!make_modem(name, rx_config, high_rx_config, wide_rx_config, false, m)) {
                std::fprintf(
                    stderr, "bench_s4539_modem: unknown mode %s\n", name.c_str());
                return 2;
            }
            double mean = 0, peak = 0;
            burst_power(m, psk_modulator(shaping_of(name).modulator), mean, peak);
            std::printf("%-6s %14.2f %14.2f %10.2f\n",
                        name.c_str(),
                        10 * std::log10(mean),
                        10 * std::log10(peak),
                        10 * std::log10(peak / mean));
        }
        return 0;
    }
    std::printf("profile %s, offset %.1f Hz, %.0f ppm, %.0f s of signal per point, SNR "
                "over the %s\n",
                profile.c_str(),
                offset_hz,
                ppm,
                seconds,
                mean_reference ? "transmission's mean power"
                               : "power of unit-amplitude symbols");
    std::printf(
        "%-6s %6s %10s %8s %10s %10s %6s %8s %8s %7s %7s %6s %6s %10s %8s %8s %10s "
        "%9s %9s %9s\n",
        "mode",
        "snr_db",
        "bits",
        "errors",
        "ber",
        "ber_95up",
        "lost",
        "tx_x_rt",
        "rx_x_rt",
        "bursts",
        "w_errs",
        "missed",
        "f_alarm",
        "rx_bits",
        "rx_errs",
        "snr_rep",
        "snr_rep_sd",
        "rx_wall_x",
        "rx_main_x",
        "rx_all_x");
    for (const std::string& name : modes) {
        modem probe;
        try {
            if (!make_modem(
                    name, rx_config, high_rx_config, wide_rx_config, auto_baud, probe)) {
                std::fprintf(
                    stderr, "bench_s4539_modem: unknown mode %s\n", name.c_str());
                return 2;
            }
        } catch (const std::invalid_argument& e) {
            std::fprintf(stderr, "bench_s4539_modem: %s\n", e.what());
            return 2;
        }
        shaping sh;
        std::unique_ptr<psk_modulator> modulator_ptr;
        try {
            sh = shaping_of(name);
            modulator_ptr = std::make_unique<psk_modulator>(sh.modulator);
        } catch (const std::invalid_argument& e) {
            std::fprintf(stderr, "bench_s4539_modem: %s: %s\n", name.c_str(), e.what());
            return 2;
        }
        const psk_modulator& modulator = *modulator_ptr;
        const double fs = sh.fs;
        for (double snr : snrs) {
            modem m;
            make_modem(name, rx_config, high_rx_config, wide_rx_config, auto_baud, m);
            std::mt19937 rng{ uint32_t(seed) };
            chan::watterson_config cc;
            try {
                cc = two_path_delay_ms >= 0 || !static_paths_ms.empty()
                         ? chan::watterson_preset("awgn", fs, snr, seed)
                         : chan::watterson_preset(profile, fs, snr, seed);
                if (two_path_delay_ms >= 0)
                    cc.paths = {
                        { 0.5, two_path_spread_hz, 0.0, 0.0 },
                        { 0.5, two_path_spread_hz, 0.0, two_path_delay_ms * 1e-3 }
                    };
                if (!static_paths_ms.empty()) {
                    cc.paths.clear();
                    for (double d : static_paths_ms)
                        cc.paths.push_back(
                            { 1.0 / double(static_paths_ms.size()), 0.0, 0.0, d * 1e-3 });
                }
                cc.frequency_offset_hz = offset_hz;
                cc.noise_bandwidth_hz = 1000.0 * sh.bw_khz;
                cc.sample_rate_offset_ppm = ppm;
                // The noise is set against this power while a signal is present.
                double mean = 1, peak = 1;
                if (mean_reference)
                    burst_power(m, modulator, mean, peak);
                cc.signal_power = mean;
            } catch (const std::exception& e) {
                std::fprintf(stderr, "bench_s4539_modem: %s\n", e.what());
                return 2;
            }
            chan::watterson_channel channel(cc);
            // Samples through the channel; with a sweep, in 10 ms pieces, each at the
            // triangle's offset for its start (the channel keeps the phase continuous).
            uint64_t channel_samples = 0;
            const auto through_channel = [&](const std::vector<cf>& in,
                                             std::vector<cf>& out) {
                if (sweep_hz_per_s <= 0) {
                    channel.process(in.data(), in.size(), out);
                    return;
                }
                const double a = std::abs(offset_hz);
                const size_t piece = size_t(fs / 100);
                for (size_t k = 0; k < in.size(); k += piece) {
                    const double p =
                        std::fmod(sweep_hz_per_s * double(channel_samples) / fs, 4 * a);
                    channel.set_frequency_offset_hz(p < 2 * a ? -a + p : 3 * a - p);
                    const size_t n = std::min(piece, in.size() - k);
                    channel.process(in.data() + k, n, out);
                    channel_samples += n;
                }
            };
            serial_tone_frontend_config fc;
            fc.real_input = false;
            fc.sample_rate = fs;
            fc.symbol_rate = sh.modulator.symbol_rate;
            std::unique_ptr<serial_tone_frontend> front_ptr;
            try {
                front_ptr = std::make_unique<serial_tone_frontend>(fc);
            } catch (const std::invalid_argument& e) {
                std::fprintf(
                    stderr, "bench_s4539_modem: %s: %s\n", name.c_str(), e.what());
                return 2;
            }
            serial_tone_frontend& front = *front_ptr;
            // Burst start samples are at the receiver's rate (4 a symbol).
            const double rx_rate = front.output_rate();
            const size_t burst_bytes =
                std::max<size_t>(16, size_t(m.user_bps * burst_seconds / 8));
            size_t bits = 0, errors = 0, lost = 0;
            size_t received_bursts = 0, bursts_with_errors = 0, missed = 0,
                   false_alarms = 0;
            size_t received_bits = 0, received_errors = 0;
            double snr_sum = 0,
                   snr_square_sum = 0; // reported SNR (dB) of the received bursts
            double signal_s = 0, tx_cpu = 0, rx_cpu = 0;
            double rx_wall = 0, rx_all_cpu = 0, rx_main_cpu = 0;
            std::vector<cf> air, noisy, bb;
            std::vector<received> bursts;
            // Transmissions not yet matched with a burst: a burst belongs to the one its
            // start lies in, whenever it is reported (a burst whose EOM was missed ends
            // at the next preamble or on lost signal, after the next transmission began).
            struct transmission {
                uint64_t start, end; // baseband samples
                std::vector<uint8_t> data;
            };
            std::deque<transmission> unmatched;
            uint64_t sent_samples = 0;
            const auto receive = [&](const std::vector<cf>& samples) {
                bursts.clear();
                for (size_t k = 0; k < samples.size(); k += 4096) {
                    bb.clear();
                    front.process(samples.data() + k,
                                  std::min<size_t>(4096, samples.size() - k),
                                  bb);
                    m.receive(bb.data(), bb.size(), bursts);
                }
                // A stream's decoding is completed once, at its end (the whole stream is
                // one call with --stream).
                if (m.complete)
                    m.complete(bursts);
                for (const received& r : bursts) {
                    const auto t = std::find_if(
                        unmatched.begin(), unmatched.end(), [&](const transmission& x) {
                            const uint64_t at =
                                uint64_t(double(r.start_sample) * fs / rx_rate);
                            return at + uint64_t(fs / 10) >= x.start && at < x.end;
                        });
                    if (t == unmatched.end()) {
                        if (verbose)
                            std::fprintf(stderr,
                                         "  burst of no transmission: %s at sample %llu, "
                                         "%zu bytes\n",
                                         r.mode.c_str(),
                                         (unsigned long long)r.start_sample,
                                         r.bytes.size());
                        continue;
                    }
                    const size_t burst_errors = bit_errors(t->data, r.bytes);
                    errors += burst_errors;
                    received_bits += 8 * t->data.size();
                    received_errors += burst_errors;
                    snr_sum += r.snr_db;
                    snr_square_sum += r.snr_db * r.snr_db;
                    ++received_bursts;
                    bursts_with_errors += burst_errors > 0;
                    missed += burst_errors > 0 && !r.bytes_bad;
                    false_alarms += burst_errors == 0 && r.bytes_bad;
                    if (verbose)
                        std::fprintf(
                            stderr,
                            "  burst at sample %llu (of %llu): eom %d, %zu of %zu bytes, "
                            "%zu bit errors, snr %.1f dB, offset %.1f Hz, bytes_bad %d, "
                            "reliability %.2f\n",
                            (unsigned long long)(double(r.start_sample) * fs / rx_rate),
                            (unsigned long long)t->start,
                            int(r.eom),
                            r.bytes.size(),
                            t->data.size(),
                            burst_errors,
                            r.snr_db,
                            r.frequency_offset_hz,
                            int(r.bytes_bad),
                            r.reliability);
                    unmatched.erase(t);
                }
            };
            const auto timed_receive = [&](const std::vector<cf>& samples) {
                const double t0 = clock_s();
                const double wall0 = wall_s(), all0 = process_cpu_s(),
                             main0 = thread_cpu_s();
                receive(samples);
                rx_cpu += seconds_since(t0);
                rx_wall += wall_s() - wall0;
                rx_all_cpu += process_cpu_s() - all0;
                rx_main_cpu += thread_cpu_s() - main0;
            };
            std::vector<cf> whole; // --stream: every transmission and the noise after
            while (signal_s < seconds && (max_errors == 0 || errors < max_errors)) {
                std::vector<uint8_t> data(burst_bytes);
                for (auto& b : data)
                    b = uint8_t(rng());
                double t0 = clock_s();
                air = m.transmit(data, modulator);
                tx_cpu += seconds_since(t0);
                unmatched.push_back({ sent_samples, sent_samples + air.size(), data });
                air.resize(air.size() + size_t(0.5 * fs));
                sent_samples += air.size();
                signal_s += double(air.size()) / fs;
                bits += 8 * data.size();
                noisy.clear();
                through_channel(air, noisy);
                if (stream) {
                    whole.insert(whole.end(), noisy.begin(), noisy.end());
                    continue;
                }
                timed_receive(noisy);
            }
            // A burst still open may end on lost signal: 10 s of noise more.
            air.assign(size_t(10 * fs), cf());
            noisy.clear();
            through_channel(air, noisy);
            if (stream) {
                whole.insert(whole.end(), noisy.begin(), noisy.end());
                // The speeds are over the whole stream, the noise after the bursts too.
                signal_s = double(whole.size()) / fs;
                timed_receive(whole);
            } else
                receive(noisy);
            for (const transmission& t : unmatched) {
                if (verbose)
                    std::fprintf(stderr,
                                 "  burst at sample %llu: none received\n",
                                 (unsigned long long)t.start);
                ++lost;
                errors += 8 * t.data.size();
            }
            const double n = double(received_bursts);
            const double snr_mean = received_bursts ? snr_sum / n : std::nan("");
            const double snr_sd =
                received_bursts
                    ? std::sqrt(std::max(0.0, snr_square_sum / n - snr_mean * snr_mean))
                    : std::nan("");
            std::printf("%-6s %6.1f %10zu %8zu %10.2e %10.2e %6zu %8.1f %8.1f %7zu %7zu "
                        "%6zu %6zu %10zu %8zu %8.2f "
                        "%10.2f %9.1f %9.1f %9.1f\n",
                        name.c_str(),
                        snr,
                        bits,
                        errors,
                        double(errors) / double(bits),
                        poisson_upper(errors) / double(bits),
                        lost,
                        signal_s / tx_cpu,
                        signal_s / rx_cpu,
                        received_bursts,
                        bursts_with_errors,
                        missed,
                        false_alarms,
                        received_bits,
                        received_errors,
                        snr_mean,
                        snr_sd,
                        signal_s / rx_wall,
                        signal_s / rx_main_cpu,
                        signal_s / rx_all_cpu);
            std::fflush(stdout);
        }
    }
    return 0;
}
