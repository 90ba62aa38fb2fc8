/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// The App D receiver's data equalised in the frequency domain, a frame at a time
// (m110d_receiver_config::data_equaliser; the receiver's state: m110d_receiver_state.h).
// Per frame: the probes before and after it measured (probe_channel_estimator, each on
// its last cyclic period), their taps above the noise kept as the channel's paths,
// averaged between the two at the frame's middle (their common turn taken out of the
// samples as a steady rotation across the frame), the frame equalised by
// block_frequency_equaliser (on fast fading after each path's change from that mean,
// a line between the probes bent as the decisions show, is taken out with the
// frame's decisions), its data demapped as the MMSE-DFE's are, its probes'
// estimates and prediction scores given to the presence watch. The carrier's residual
// turn from probe to probe is followed by a rotation of the samples read, the paths'
// place by the window's precursor and, past it, the sample grid. Decoder-aided passes
// cancel the decoded symbols' interference from the kept spectra.

#include "block_frequency_equaliser.h"
#include "helper_threads.h"
#include "m110d_receiver_state.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

namespace gr {
namespace hfstack {
namespace phy {

using namespace m110d_rx;

namespace {

// A tap holds a path where its power (over both probes and phases) is this many times
// the taps' noise (a mean of four exponentials: noise alone passes 5x its mean about
// 3e-6 of the time), or this share of the strongest (weak pulse tails at high SNR).
constexpr double path_over_noise = 5.0;
constexpr double path_share = 1e-3;
// The lower quartile of four exponentials' mean, over their mean (a quartile: up to
// three taps in four may hold paths or their pulse tails).
constexpr double quartile_of_mean_of_four = 0.668;
// Symbols of pulse before the first path the window keeps.
constexpr int pulse_precursor = 3;
// Iterative block DFE steps per frame before its data are demapped, where the linear
// estimate's variance exceeds the matched filter bound's by this factor (1 dB).
constexpr unsigned fde_iterations = 2;
constexpr double worth_iterating = 1.26;
// 256QAM takes the MMSE-DFE where this share of the channel's energy lies apart from
// its strongest path (choose_fde).
constexpr double multipath_share = 0.1;
// Windows tried at the first frame, from mostly after the grid's reference to mostly
// before it.
constexpr int placement_tries = 8;
// The first frame's windows this close to the cleanest (median over strongest tap)
// count as clean.
constexpr double alias_tolerance = 1.5;
// Of the residual turn measured across a frame, the share the rotation follows.
constexpr double turn_gain = 0.5;
// The paths' first delay beyond this many symbols moves the sample grid to them.
constexpr int grid_slack = 8;
// The paths' long-term power profile: its memory, and the share of its peak a tap needs
// to place the window.
constexpr double profile_s = 2.0;
constexpr double profile_share = 0.03;
// The reported SNR's matched filter: the paths' energy over both T/2 phases over the
// noise per sample overstates it by about this much, as measured on AWGN (12 and 48
// kHz, 8 and 18 dB: 1.1-1.35 dB over the SNR set): the front end's filter leaves the
// two phases' noise correlated.
constexpr double matched_filter_excess = 1.3;
// A frame's paths are followed across it (a straight line between its probes) where
// the change's mean error would be this share of the noise and the change this many
// times its measurement noise (none on AWGN or slow fading: the mean suffices).
constexpr double change_share = 0.05;
constexpr double change_over_noise = 3.0;
// A path's gains across the frame less the mean equalise() takes, at block symbol i:
// at + slope i (both T/2 phases).
struct path_change {
    int delay = 0;
    std::complex<double> at0, at1, slope0, slope1;
    // The bend from the line, times (i - before)(i - after) / N^2 (zero at the probes'
    // measurements), estimated from the frame's decisions.
    std::complex<double> bend0, bend1;
};
// split_work: fewer items than twice this are not worth a thread.
constexpr size_t min_split_items = 32;
// decode_passes: frames per piece the threads share (any number gives the same results).
constexpr size_t frames_per_piece = 4;
// Two threads: a frame whose probe scores under this (serial_tone_presence's matched
// mean: noise alone averages 1) is likely past the burst's end, so the calling thread
// waits for the blocks still decoding before it equalises more frames that would
// likely be dropped (waiting changes nothing of the results, only when they come).
constexpr double probe_unmatched_score = 4.0;

} // namespace

m110d_receiver::state::~state()
{
    // Blocks still decoding on their threads (threads > 1, let go mid-burst without
    // complete_decoding): those threads use this state, and an unjoined std::thread
    // ends the process.
    join_jobs();
    join_dropped_jobs();
    if (deferred_judge)
        deferred_judge->join_helping();
}

void m110d_receiver::state::split_work(
    size_t n, const std::function<void(size_t, size_t)>& work) const
{
    run_ranges(n, min_split_items, work, cfg.threads > 1);
}

bool m110d_receiver::state::fde_chosen()
{
    if (fde_choice < 0)
        fde_choice = choose_fde() ? 1 : 0;
    return fde_choice == 1;
}

bool m110d_receiver::state::choose_fde() const
{
    if (!mode || mode->wn == 0)
        return false;
    switch (cfg.data_equaliser) {
    case m110d_data_equaliser::mmse_dfe:
        return false;
    case m110d_data_equaliser::block_fde:
        return true;
    case m110d_data_equaliser::automatic:
        break;
    }
    if (cfg.bandwidth_khz <= 3)
        return false;
    if (demapper->bits_per_symbol() < 8)
        return true;
    // 256QAM through more than one path: the MMSE-DFE (its feedback cancels what the
    // linear frequency-domain estimate, too poor near the paths' spectral nulls for
    // 256QAM's decisions to start its iterations, cannot: two equal static paths 1.5
    // ms apart at 6 and 9 kHz lost half the bits). A path is more than a tenth of the
    // channel's energy beyond two symbols of the strongest tap, as the preamble measured.
    const std::vector<cd>& taps = equaliser->taps();
    std::vector<double> energy(taps.size() / 2);
    for (size_t i = 0; i < energy.size(); ++i)
        energy[i] = std::norm(taps[2 * i]) + std::norm(taps[2 * i + 1]);
    const size_t peak =
        size_t(std::max_element(energy.begin(), energy.end()) - energy.begin());
    double total = 0, apart = 0;
    for (size_t i = 0; i < energy.size(); ++i) {
        total += energy[i];
        if (i + 2 < peak || i > peak + 2)
            apart += energy[i];
    }
    return !(apart > multipath_share * total);
}

namespace {

// weigh_decision's rule on a block's own LLRs and segment (a block decoding on a thread
// of its own).
struct llr_segment {
    double error = 0, variance = 0;
    unsigned symbols = 0;
};

void weigh_segment(llr_segment& segment,
                   std::vector<float>& llr,
                   size_t llr_end,
                   unsigned bits_per_symbol,
                   cd z,
                   cd decision,
                   double variance)
{
    segment.error += std::norm(z - decision);
    segment.variance += variance;
    if (++segment.symbols < reliability_symbols && llr_end < llr.size())
        return;
    const float scale = serial_tone_llr_scale(segment.error, segment.variance);
    if (scale < 1)
        for (size_t b = llr_end - size_t(segment.symbols) * bits_per_symbol; b < llr_end;
             ++b)
            llr[b] *= scale;
    segment = llr_segment();
}

} // namespace

std::vector<uint8_t>
m110d_receiver::state::block_job::coded_again(bool concurrently) const
{
    std::vector<uint8_t> user;
    decoder->decode(llr.data(), user, concurrently);
    return m110d_block_channel_bits(mode,
                                    user.data(),
                                    fetch_order,
                                    constraint_length,
                                    tail_biting,
                                    k7_newest_bit_lsb,
                                    concurrently);
}

void m110d_receiver::state::block_job::start_thread(std::function<void()> work)
{
    board.begin();
    thread = std::thread([this, work = std::move(work)] {
        const piece_board::sharing shared(board);
        work();
        board.finish();
    });
}

void m110d_receiver::state::block_job::join_helping()
{
    if (!thread.joinable())
        return;
    board.help_until_finished();
    thread.join();
}

void m110d_receiver::state::decode_passes(block_job& j) const
{
    const unsigned nb = j.demapper->bits_per_symbol();
    const unsigned data = j.mode.data_symbols, probe = j.mode.probe_symbols;
    const bool concurrently = cfg.threads > 1;
    if (concurrently && j.kept_frames > frames_per_piece && !j.second_canceller)
        j.second_canceller =
            std::make_unique<block_frequency_equaliser>(j.cancel_with->block_symbols());
    // Per frame: its estimates again, their decisions and error variance.
    std::vector<cd> z(j.kept_frames * data), decided(j.kept_frames * data);
    std::vector<double> variance(j.kept_frames);
    // By worker: a frame's decisions and estimates (probes included).
    std::vector<cd> decisions[2], frame_z[2];
    for (unsigned pass = 2; pass <= cfg.decoder_passes; ++pass) {
        if (j.dropped.load(std::memory_order_relaxed))
            return;
        const std::vector<uint8_t> channel = j.coded_again(concurrently);
        // The frames' cancellation and demapping depend on the channel bits alone
        // (pieces of frames shared between the threads); the LLRs weighed after, in
        // order (a weighing segment runs across frames).
        const auto frames = [&](size_t piece, unsigned worker) {
            block_frequency_equaliser* canceller =
                worker == 0 ? j.cancel_with : j.second_canceller.get();
            std::vector<cd>&d = decisions[worker], &zf = frame_z[worker];
            d.resize(data + probe);
            zf.resize(data + probe);
            const size_t last = std::min(j.kept_frames, (piece + 1) * frames_per_piece);
            for (size_t f = piece * frames_per_piece; f < last; ++f) {
                if (j.dropped.load(std::memory_order_relaxed))
                    return;
                const size_t frame_bit = f * data * nb;
                for (unsigned i = 0; i < data; ++i) {
                    unsigned label = 0;
                    for (unsigned b = 0; b < nb; ++b)
                        label = (label << 1) | channel[frame_bit + size_t(i) * nb + b];
                    d[i] = j.demapper->point_of(label, i);
                }
                const std::vector<cf>& after = j.probes[m110d_probe_is_boundary(
                    j.mode, int64_t(f % j.mode.frames_per_block))];
                for (unsigned i = 0; i < probe; ++i)
                    d[data + i] = cd(after[i]);
                variance[f] =
                    std::max(1e-3, canceller->cancel(j.kept[f], d.data(), zf.data()));
                for (unsigned i = 0; i < data; ++i) {
                    const size_t at = frame_bit + size_t(i) * nb;
                    z[f * data + i] = zf[i];
                    decided[f * data + i] = j.demapper->demap_to(
                        zf[i], i, variance[f], &channel[at], &j.llr[at]);
                }
            }
        };
        run_pieces((j.kept_frames + frames_per_piece - 1) / frames_per_piece,
                   frames,
                   concurrently);
        if (j.dropped.load(std::memory_order_relaxed))
            return;
        llr_segment segment;
        size_t bit = 0;
        for (size_t f = 0; f < j.kept_frames; ++f)
            for (unsigned i = 0; i < data; ++i) {
                bit += nb;
                weigh_segment(segment,
                              j.llr,
                              bit,
                              nb,
                              z[f * data + i],
                              decided[f * data + i],
                              variance[f]);
            }
    }
    if (j.judge)
        j.agreement = agreement_of(j.llr, j.coded_again(concurrently));
}

void m110d_receiver::state::decode_final(block_job& j) const
{
    if (j.dropped.load(std::memory_order_relaxed))
        return;
    if (cfg.reliability_threshold > -std::numeric_limits<double>::infinity())
        j.reliability =
            j.decoder->decode_with_reliability(j.llr.data(), j.bits, cfg.threads > 1);
    else
        j.decoder->decode(j.llr.data(), j.bits);
}

std::shared_ptr<m110d_receiver::state::block_job>
m110d_receiver::state::hand_to_decoding()
{
    join_dropped_jobs();
    auto j = std::make_shared<block_job>();
    j->mode = *mode;
    j->demapper = demapper;
    j->probes[0] = fde->probes[0];
    j->probes[1] = fde->probes[1];
    j->fetch_order = fetch_order;
    j->constraint_length = constraint_length;
    j->tail_biting = data_readings.tail_biting;
    j->k7_newest_bit_lsb = cfg.k7_newest_bit_lsb;
    j->judge = readings_open && burst_blocks == 0;
    j->reading = data_readings.scrambler;
    ++burst_blocks;
    j->llr.swap(block_llr);
    j->kept.swap(fde->kept);
    fde->kept.swap(fde->spare_kept);
    j->kept_frames = fde->kept_frames;
    fde->kept_frames = 0;
    if (j->judge)
        j->llr_in = j->llr;
    // Once a burst has told the readings apart, a first block's reading is kept far
    // more often than not (it fits on sure LLRs): its passes, agreement and decoding
    // run on a thread as any block's, judged later in order (where the judgement takes
    // the other reading, the frames after it are dropped).
    const bool judged_from_thread = j->judge && scrambler_judge.settled();
    if (!pipelined() || (j->judge && !judged_from_thread)) {
        // In order: the decoding is commit_job's, on the burst's own decoder. So are
        // the passes of a burst's first block whose scrambler reading is judged before
        // the readings are told apart (the stream's first burst goes over it under both
        // readings: the blocks after it would be lost work), its final decoding then on
        // a thread.
        j->decoder = decoder;
        j->cancel_with = &fde->equaliser;
        return j;
    }
    // A decoder and a canceller of its own (the block before may still be decoding on
    // the other pair).
    const size_t slot = burst_blocks % 2;
    auto& own_decoder = job_decoders[slot];
    if (!own_decoder || own_decoder.use_count() > 1)
        own_decoder = std::make_shared<m110d_block_decoder>(
            *mode, constraint_length, data_readings.tail_biting, cfg.k7_newest_bit_lsb);
    auto& own_canceller = job_cancellers[slot];
    if (!own_canceller || own_canceller.use_count() > 1 ||
        own_canceller->block_symbols() != fde->block_symbols)
        own_canceller = std::make_shared<block_frequency_equaliser>(fde->block_symbols);
    j->decoder = own_decoder;
    j->canceller = own_canceller;
    j->cancel_with = own_canceller.get();
    block_job* job = j.get();
    j->start_thread([this, job] {
        decode_passes(*job);
        decode_final(*job);
        job->finished.store(true, std::memory_order_release);
    });
    return j;
}

bool m110d_receiver::state::reused_first_attempt(block_job& j) const
{
    const block_job* f = first_attempt[j.reading == x9_orientation::a ? 0 : 1].get();
    if (!f || f->mode.wn != j.mode.wn || f->mode.interleaver != j.mode.interleaver ||
        f->constraint_length != j.constraint_length || f->tail_biting != j.tail_biting ||
        f->k7_newest_bit_lsb != j.k7_newest_bit_lsb || f->kept_frames != j.kept_frames ||
        f->llr_in != j.llr)
        return false;
    for (size_t k = 0; k < j.kept_frames; ++k) {
        const block_frequency_equaliser::block &a = f->kept[k], &b = j.kept[k];
        if (a.noise != b.noise || a.y0 != b.y0 || a.y1 != b.y1 || a.g0 != b.g0 ||
            a.g1 != b.g1)
            return false;
    }
    j.llr = f->llr;
    j.agreement = f->agreement;
    return true;
}

std::optional<x9_orientation> m110d_receiver::state::settle_deferred_judge()
{
    if (!deferred_judge)
        return std::nullopt;
    deferred_judge->join_helping();
    deferred_judge->passes_done = true;
    const x9_orientation best =
        scrambler_judge.judge(deferred_judge->reading, deferred_judge->agreement);
    first_attempt[deferred_judge->reading == x9_orientation::a ? 0 : 1] =
        std::move(deferred_judge);
    return best;
}

m110d_receiver::state::committed
m110d_receiver::state::commit_job(const std::shared_ptr<block_job>& job)
{
    block_job& j = *job;
    bool judged_already = false;
    if (j.judge && !j.judged) {
        const std::optional<x9_orientation> best = settle_deferred_judge();
        if (best && *best != data_readings.scrambler) {
            // The judgement deferred kept its reading: one thread went on under it.
            j.judged = true;
            judged_kept = *best;
            begin_again_with_scrambler(*best);
            return committed::begun_again;
        }
        judged_already = judged_kept == data_readings.scrambler;
        judged_kept.reset();
        if (!j.passes_done && !j.thread.joinable())
            j.passes_done = reused_first_attempt(j);
        if (!judged_already && !j.passes_done && pipelined() &&
            !scrambler_judge.settled() &&
            !scrambler_judge.tried(data_readings.scrambler)) {
            // Its passes and agreement on a thread, with a decoder and canceller of
            // its own (the burst's are made anew), beside the burst under the other.
            j.judged = true;
            j.decoder = std::make_shared<m110d_block_decoder>(*mode,
                                                              constraint_length,
                                                              data_readings.tail_biting,
                                                              cfg.k7_newest_bit_lsb);
            j.canceller = std::make_shared<block_frequency_equaliser>(fde->block_symbols);
            j.cancel_with = j.canceller.get();
            block_job* deferred = &j;
            j.start_thread([this, deferred] { decode_passes(*deferred); });
            deferred_judge = job;
            begin_again_with_scrambler(data_readings.scrambler == x9_orientation::a
                                           ? x9_orientation::b
                                           : x9_orientation::a);
            return committed::begun_again;
        }
    }
    if (j.judge && !j.judged && j.thread.joinable()) {
        // Passed, judged for agreement and decoded on a thread (hand_to_decoding).
        j.join_helping();
        j.passes_done = true;
        j.decoded = true;
    }
    if (!j.passes_done && !j.thread.joinable())
        decode_passes(j); // in order
    j.passes_done = true;
    if (j.judge && !j.judged) {
        j.judged = true;
        // The burst's first block under this scrambler reading: the decoded bits coded
        // again against the channel LLRs (decode_block's rule).
        const x9_orientation best =
            judged_already ? data_readings.scrambler
                           : scrambler_judge.judge(data_readings.scrambler, j.agreement);
        if (best != data_readings.scrambler) {
            // Kept: the burst may come back to this reading.
            first_attempt[j.reading == x9_orientation::a ? 0 : 1] = job;
            begin_again_with_scrambler(best);
            return committed::begun_again;
        }
        readings_open = false;
        if (pipelined() && !j.decoded) {
            // Kept: its final decoding beside the next block's frames.
            block_job* job = &j;
            j.finished.store(false, std::memory_order_relaxed);
            j.start_thread([this, job] {
                decode_final(*job);
                job->finished.store(true, std::memory_order_release);
            });
            return committed::decoding;
        }
    }
    if (j.thread.joinable())
        j.join_helping();
    else if (!j.decoded)
        decode_final(j); // in order
    if (cfg.reliability_threshold > -std::numeric_limits<double>::infinity()) {
        least_reliability = std::min(least_reliability, j.reliability);
        unreliable_blocks += j.reliability < cfg.reliability_threshold;
    }
    bits.insert(bits.end(), j.bits.begin(), j.bits.end());
    // (The tail-biting phase changes only at an EOM, which ends the burst: no block
    // after this one decodes under the old one.)
    block_bits_in();
    if (block_llr.empty()) { // its LLRs' buffer for the next block (one thread)
        block_llr.swap(j.llr);
        block_llr.clear();
    }
    if (fde) { // its buffers for the frames to come
        if (fde->kept.empty())
            fde->kept.swap(j.kept);
        else if (fde->spare_kept.empty())
            fde->spare_kept.swap(j.kept);
    }
    return committed::done;
}

void m110d_receiver::state::apply_frame(const frame_record& r)
{
    if (symbol_tap)
        for (const cf& t : r.taps) {
            symbol_tap->push_back(t);
            ++tapped;
            ++held_symbols;
        }
    for (double p : r.window_power)
        presence.add_window_power(p);
    const std::vector<cf>& after = fde->probes[r.boundary_probe];
    for (size_t j = 0; j < r.probe_z.size(); ++j) {
        const cd z = r.probe_z[j], sent(after[j]);
        presence.add_probe(z, sent);
        presence.add_known(z, sent);
        snr_report.add(r.reported_error, double(r.probe_first + j) / symbol_rate);
    }
    presence.add_prediction_score(r.score);
}

void m110d_receiver::state::join_jobs()
{
    for (frame_record& r : unapplied)
        if (r.job)
            r.job->join_helping();
}

void m110d_receiver::state::join_dropped_jobs()
{
    for (const std::shared_ptr<block_job>& j : dropped_jobs)
        j->join_helping();
    dropped_jobs.clear();
}

void m110d_receiver::state::change_course(bool from_front)
{
    // The blocks after the front one were handed to decoding on the burst's old course
    // (at an EOM, the frames after it): their results are never read, so they are told
    // to stop rather than waited for.
    for (frame_record& r : unapplied)
        if (r.job && r.job->thread.joinable()) {
            r.job->dropped.store(true, std::memory_order_relaxed);
            dropped_jobs.push_back(std::move(r.job));
        }
    replay_limits.clear();
    bool first = true;
    for (const frame_record& r : unapplied) {
        if (r.boundary && (from_front || !first))
            replay_limits.push_back(r.total);
        first = false;
    }
    unapplied.clear();
    watch_in_log = false;
    if (replay_limits.empty())
        input.unlimit();
    else
        input.limit_to(replay_limits.front());
}

bool m110d_receiver::state::apply_unapplied(waiting wait, std::vector<m110d_burst>& done)
{
    if (unapplied.empty())
        return false;
    const uint64_t live_symbol = symbol;
    const double live_residual = fde ? fde->residual_hz : 0.0;
    const block_job* newest = nullptr;
    for (const frame_record& r : unapplied)
        if (r.job)
            newest = r.job.get();
    while (!unapplied.empty()) {
        frame_record& r = unapplied.front();
        // A block whose decoding has finished is committed now, whatever `wait` says:
        // the burst's last block tells of its EOM before the frames after it have
        // filled another block (records apply in the same order whenever they do; the
        // frames after a change of course are dropped and the input gone over again).
        if (r.job && r.job->thread.joinable() &&
            !r.job->finished.load(std::memory_order_acquire)) {
            const bool may_wait =
                wait == waiting::all ||
                (wait == waiting::all_but_newest && r.job.get() != newest);
            if (!may_wait)
                break;
        }
        symbol = r.symbol_after;
        if (fde)
            fde->residual_hz = r.residual_hz;
        if (r.boundary) {
            // The watch as one thread runs it at this chunk's end, on its input.
            input.limit_to(r.total);
            const bool cut = watch_now(done);
            if (cut) {
                change_course(true);
                return true;
            }
            if (r.trim)
                trim_now();
            input.unlimit();
            unapplied.pop_front();
            continue;
        }
        if (!r.applied) {
            apply_frame(r);
            r.applied = true;
        }
        if (r.job) {
            const committed c = commit_job(r.job);
            if (c == committed::begun_again) {
                r.job.reset();        // kept (first_attempt, deferred_judge), not joined
                change_course(false); // from its preamble, under the other reading
                return true;
            }
            if (c == committed::decoding)
                continue; // waited for as the newest block's
        }
        const bool matched = r.block_end && presence.probes_match();
        if (burst_ended(r.block_end, matched, done)) {
            change_course(false);
            return true;
        }
        unapplied.pop_front();
    }
    symbol = live_symbol;
    if (fde)
        fde->residual_hz = live_residual;
    return false;
}

bool m110d_receiver::state::fde_data(std::vector<m110d_burst>& done)
{
    if (!fde)
        fde.reset(new fde_state(*mode));
    fde_state& s = *fde;
    const unsigned n = s.block_symbols, k = s.probe, l = s.base;
    // The probe after the preamble is the first frame's cyclic prefix.
    if (symbol < uint64_t(preamble_end) + k)
        symbol = uint64_t(preamble_end) + k;
    const double sample_rate = sps * symbol_rate;
    watch_in_log = pipelined();
    // The input's new samples derotated at once, half on the second thread (the frames
    // read them in order; nothing changes the derotation within the block FDE's burst).
    if (cfg.threads > 1 && input.total() > 0)
        input.derotate_through(input.total() - 1, true);
    for (;;) {
        const uint64_t first = symbol; // the frame's first data symbol
        const int64_t frame = int64_t((first - preamble_end - k) / n);
        if (double(first - preamble_end) / mode->symbol_rate() > cfg.max_burst_s) {
            // Everything before applied first, as one thread would have.
            if (apply_unapplied(waiting::all, done))
                return true;
            end_burst(false, done);
            return true;
        }
        // Samples from the probe before's measurement window to the end of the block's
        // observations (the probe after's window lies within).
        const int64_t from_symbol = int64_t(first) - int64_t(k);
        const int64_t from =
            int64_t(start) + from_symbol * int64_t(sps) + timing_shift; // phase 0
        const size_t count = size_t(k + n);
        const int64_t last = from + int64_t(count - 1) * sps + 2;
        if (last >= int64_t(input.total())) {
            if (!watch_in_log)
                return false;
            // The watch for a new preamble runs here once what comes before is applied.
            frame_record at_end;
            at_end.boundary = true;
            at_end.total = input.total();
            at_end.symbol_after = symbol;
            at_end.residual_hz = s.residual_hz;
            unapplied.push_back(std::move(at_end));
            return apply_unapplied(waiting::none, done);
        }
        s.y0.resize(count);
        s.y1.resize(count);
        const double turn = -2 * M_PI * s.residual_hz / sample_rate;
        for (size_t i = 0; i < count; ++i)
            for (int p = 0; p < 2; ++p) {
                const int64_t at = from + int64_t(i) * sps + 2 * p;
                cd x = at >= int64_t(input.base()) ? cd(input.derotated(uint64_t(at)))
                                                   : cd();
                if (s.residual_hz != 0)
                    x *= std::polar(1.0, turn * double(at - int64_t(start)));
                (p == 0 ? s.y0 : s.y1)[i] = x;
            }
        const bool boundary_before = m110d_probe_is_boundary(*mode, frame - 1);
        const bool boundary_after = m110d_probe_is_boundary(*mode, frame);
        // The two probes measured, each on its last base period taken `precursor`
        // symbols early (offsets from the probe before's first symbol): per tap the
        // power over both probes and phases, the taps holding paths, the noise.
        std::vector<double> power(l);
        std::vector<size_t> paths;
        double noise_tap = 0, strongest = 0;
        const auto delay_of = [&](size_t m) {
            return int(m) < int(l) - s.precursor ? int(m) : int(m) - int(l);
        };
        const auto measure = [&](int precursor) {
            s.set_precursor(precursor);
            const size_t before_at = size_t(k - l - unsigned(s.precursor));
            const size_t after_at = before_at + n;
            s.estimator[boundary_before]->estimate(
                &s.y0[before_at], &s.y1[before_at], s.g[0], s.g[1]);
            s.estimator[boundary_after]->estimate(
                &s.y0[after_at], &s.y1[after_at], s.g[2], s.g[3]);
            for (size_t m = 0; m < l; ++m)
                power[m] = 0.25 * (std::norm(s.g[0][m]) + std::norm(s.g[1][m]) +
                                   std::norm(s.g[2][m]) + std::norm(s.g[3][m]));
            // Taps past the reach see the data around the probe: not paths. The noise
            // from the lower quartile (the mean of the taps without a path would count
            // the paths' pulse tails under the threshold as noise).
            std::vector<double> valid;
            for (size_t m = 0; m < l; ++m)
                if (delay_of(m) <= s.reach())
                    valid.push_back(power[m]);
            std::nth_element(
                valid.begin(), valid.begin() + long(valid.size() / 4), valid.end());
            const double quartile = valid[valid.size() / 4];
            std::nth_element(
                valid.begin(), valid.begin() + long(valid.size() / 2), valid.end());
            const double median = valid[valid.size() / 2];
            strongest = *std::max_element(power.begin(), power.end());
            noise_tap = quartile / quartile_of_mean_of_four;
            const double threshold =
                std::max(path_over_noise * noise_tap, path_share * strongest);
            paths.clear();
            for (size_t m = 0; m < l; ++m)
                if (delay_of(m) <= s.reach() && power[m] > threshold)
                    paths.push_back(m);
            // A window the paths do not fit in (some beyond it, their probe symbols
            // mixed with data) spreads them over every tap.
            return strongest > 0 ? median / strongest : 1.0;
        };
        if (!s.placed) {
            // The first frame: the preamble's timing may sit on any of the paths, so
            // the window is tried from mostly after the grid's reference to mostly
            // before it, the cleanest kept.
            const int widest = int(k - l);
            int best = s.precursor;
            double cleanest = 2;
            std::vector<std::pair<int, double>> tried;
            for (int step = 0; step < placement_tries; ++step) {
                const int p = pulse_precursor + 1 +
                              step * std::max(0, widest - 2 * (pulse_precursor + 1)) /
                                  (placement_tries - 1);
                const double spread = measure(p);
                tried.push_back({ s.precursor, spread });
                if (spread < cleanest) {
                    cleanest = spread;
                    best = s.precursor;
                }
            }
            // A path beyond the window's reach reads as another delay: taps are
            // delays modulo L, so a path d after the reference reads as d - L before
            // it once the window starts less than d into the probe (and one before it
            // as L later once the window starts too far in), where only the few
            // symbols between let data in: such a window measures about as clean as
            // the true one, and at low SNR, where the data let in are under the
            // noise, as clean as any (F.1487 poor at 48 kHz, paths 77 symbols apart:
            // 181 symbols early as clean as 145, the later path placed 179 before
            // the first and the burst lost; at 12 kHz, WN2 at 4 dB, seed 2: the path
            // 20 symbols late read 80 early from the first frame on, followed by the
            // window ever after, and a burst of three decoded wrong). The windows
            // clean for the true delays are a run of precursors with the aliases' at
            // its ends: the middle of the clean ones.
            std::vector<int> clean;
            for (const auto& [p, spread] : tried)
                if (spread <= alias_tolerance * cleanest)
                    clean.push_back(p);
            best = clean[clean.size() / 2];
            s.placed = true;
            measure(best);
        } else {
            measure(s.precursor);
        }
        // The paths' long-term power per tap (about profile_s): where the window and
        // the grid sit follows it, not a path's fades.
        const double frame_s = double(n) / symbol_rate;
        const double weight =
            s.profile.empty() ? 1.0 : std::min(1.0, frame_s / profile_s);
        s.profile.resize(l, 0.0);
        for (size_t m = 0; m < l; ++m)
            s.profile[m] += weight * (power[m] - s.profile[m]);
        const double profile_peak = *std::max_element(s.profile.begin(), s.profile.end());
        int first_path = s.reach() + 1, last_path = -s.precursor - 1;
        for (size_t m = 0; m < l; ++m)
            if (delay_of(m) <= s.reach() &&
                s.profile[m] >= profile_share * profile_peak &&
                s.profile[m] > path_over_noise * noise_tap) {
                first_path = std::min(first_path, delay_of(m));
                last_path = std::max(last_path, delay_of(m));
            }
        if (first_path <= s.reach()) {
            // Paths all later than the grid's reference (a clock offset moving them)
            // move the grid (between frames, so that every frame is on one grid), once
            // a frame. Where the probe reaches a whole base period (aliased delays) the
            // window sits a few symbols of pulse before the first path, and neither the
            // grid nor the window leaves the first frame's placement before the profile
            // remembers profile_s, where the paths fit the window as it is: the path
            // the preamble's timing sat on may be in a fade (F.1487 poor at 12 kHz, WN3
            // at 6 dB and WN4 at 9, seeds 1 and 2: a grid or window moved to the later
            // path on the first frames read the earlier one, back, as an alias after
            // it). Elsewhere the window lacks a few taps of a base period and is
            // centred on the paths (below); holding there cost bursts shorter than
            // profile_s (WN8/24kHz/S, two paths 1 ms apart fading at 1 Hz, 24 dB).
            const int wanted = pulse_precursor - first_path;
            const bool settled =
                k + 1 < 2 * l || double(frame + 1) * frame_s >= profile_s;
            const bool fits = first_path >= pulse_precursor - s.precursor &&
                              last_path <= s.reach() - pulse_precursor;
            if (wanted < 0 && first_path > grid_slack && s.moved_frame != frame &&
                (settled || !fits)) {
                s.moved_frame = frame;
                const int moved = first_path - pulse_precursor;
                timing_shift += int64_t(moved) * sps;
                std::rotate(
                    s.profile.begin(), s.profile.begin() + moved, s.profile.end());
                return true; // read again on the new grid
            }
            if (k + 1 < 2 * l) {
                // The window centred on the paths, moved once a margin is under a
                // quarter of the room they leave: taps are delays modulo L, so a path
                // farther than the few taps the window lacks of a base period before
                // it (or after) reads as L after it (before). A window a few symbols
                // before the first path read the earlier path, back from a fade, 80
                // symbols late (F.1487 poor at 12 kHz, WN2 at 4 dB, paths 20 symbols
                // apart, the window reaching 92 of a base of 100).
                const int room = int(k - l);
                const int margin =
                    std::min(first_path + s.precursor, s.reach() - last_path);
                const int spare = room - (last_path - first_path);
                const int centred = (room - first_path - last_path) / 2;
                if (margin < std::max(pulse_precursor, spare / 4) &&
                    std::abs(centred - s.precursor) > 1)
                    measure(centred);
            } else if (std::abs(std::max(wanted, 0) - s.precursor) > 1 &&
                       (settled || !fits)) {
                measure(std::max(wanted, 0));
            }
        }
        // The channel at the frame's middle: the two measurements turned to meet there.
        cd turn_sum;
        for (size_t m : paths)
            turn_sum +=
                s.g[2][m] * std::conj(s.g[0][m]) + s.g[3][m] * std::conj(s.g[1][m]);
        const double across = paths.empty() ? 0.0 : std::arg(turn_sum);
        const cd half = std::polar(1.0, across / 2);
        std::vector<channel_path> channel;
        for (size_t m : paths) {
            const int d = int(m) < int(l) - s.precursor ? int(m) : int(m) - int(l);
            channel.push_back({ d,
                                0.5 * (s.g[0][m] * half + s.g[2][m] / half),
                                0.5 * (s.g[1][m] * half + s.g[3][m] / half) });
        }
        double channel_energy = 1e-9;
        for (const channel_path& path : channel)
            channel_energy += std::norm(path.g0) + std::norm(path.g1);
        // The noise per sample; the paths' own measurement noise adds to it.
        const double gain = s.estimator[0]->tap_noise_gain();
        const double noise =
            std::max(1e-9, noise_tap / gain * (1.0 + 0.5 * gain * double(paths.size())));
        // The block's observations (from `precursor` symbols before its first symbol),
        // the frame's turn taken out (zero at its middle).
        const size_t block_at = size_t(k) - size_t(s.precursor);
        const double middle = double(n) / 2;
        for (size_t i = 0; i < n; ++i) {
            const cd r = std::polar(1.0, -across * (double(i) - middle) / double(n));
            s.y0[block_at + i] *= r;
            s.y1[block_at + i] *= r;
        }
        const unsigned nb = demapper->bits_per_symbol();
        double power_scale = 1;
        if (nb > 3) {
            power_scale = 0;
            for (cf p : m110d_constellation(nb))
                power_scale += std::norm(p);
            power_scale /= double(m110d_constellation(nb).size());
        }
        const size_t in_block = size_t(frame % int64_t(mode->frames_per_block));
        if (in_block == 0)
            s.kept_frames = 0;
        block_frequency_equaliser::block* kept = nullptr;
        if (cfg.decoder_passes > 1) {
            if (s.kept.size() <= s.kept_frames)
                s.kept.resize(s.kept_frames + 1);
            kept = &s.kept[s.kept_frames++];
        }
        block_frequency_equaliser::block local;
        if (!kept)
            kept = &local;
        // The frame equalised from T/2 observations (as received, or with the paths'
        // change across it taken out below).
        const auto equalise_frame = [&](const cd* y0, const cd* y1) {
            return s.equaliser.equalise(y0,
                                        y1,
                                        s.precursor,
                                        channel,
                                        s.probes[boundary_before],
                                        s.probes[boundary_after],
                                        noise,
                                        power_scale,
                                        s.z.data(),
                                        kept);
        };
        double linear = equalise_frame(&s.y0[block_at], &s.y1[block_at]);
        // The paths' change across the frame: equalise() takes the channel as it is at
        // the frame's middle, the two probes' mean; on 1 Hz fading the paths move too
        // far across a frame (120 ms at 12 kHz) for 64QAM. Each path is taken as a
        // straight line between the probes' measurements (each at its window's middle,
        // turned as the samples were), and what the line adds to the mean is taken out
        // of the observations with the frame's decisions (probes known), then the frame
        // equalised again; the iterations below do it again with their decisions.
        std::vector<path_change> changes;
        double change_energy = 0;
        {
            const double before_at = -0.5 * double(l + 1), middle = double(n) / 2;
            const cd turn_before =
                std::polar(1.0, -across * (before_at - middle) / double(n));
            const cd turn_after =
                std::polar(1.0, -across * (before_at + double(n) - middle) / double(n));
            for (size_t q = 0; q < paths.size(); ++q) {
                const size_t m = paths[q];
                const cd b0 = s.g[0][m] * turn_before, b1 = s.g[1][m] * turn_before;
                const cd a0 = s.g[2][m] * turn_after, a1 = s.g[3][m] * turn_after;
                path_change c;
                c.delay = channel[q].delay;
                c.slope0 = (a0 - b0) / double(n);
                c.slope1 = (a1 - b1) / double(n);
                c.at0 = b0 - channel[q].g0 - before_at * c.slope0;
                c.at1 = b1 - channel[q].g1 - before_at * c.slope1;
                change_energy += std::norm(a0 - b0) + std::norm(a1 - b1);
                changes.push_back(c);
            }
        }
        // Worth it where the change's mean error (a line's square over the frame: a
        // twelfth of the ends' difference, per phase) reaches change_share of the noise
        // and the change is beyond the measurements' own noise (two per phase and path).
        const bool changing =
            change_energy * power_scale / 24.0 > change_share * noise &&
            change_energy > change_over_noise * 4.0 * noise_tap * double(paths.size());
        std::vector<cd> moved0, moved1;
        const double line_from = -0.5 * double(l + 1);
        const auto bend_at = [&](size_t i) {
            const double from = double(i) - line_from;
            return from * (from - double(n)) / (double(n) * double(n));
        };
        // Each path's bend from its line, from the observations' departure from the
        // line's model on the decisions in s.decisions: the symbols are independent, so
        // each path's share is its own correlation (the others' averages out).
        const auto bend_from_decisions = [&]() {
            const std::vector<cf>& before = s.probes[boundary_before];
            const auto symbol_at = [&](long t) {
                return t < 0 ? cd(before[size_t(long(k) + t)]) : s.decisions[size_t(t)];
            };
            moved0.resize(n);
            moved1.resize(n);
            split_work(n, [&](size_t from, size_t to) {
                for (size_t i = from; i < to; ++i) {
                    cd e0, e1;
                    for (size_t q = 0; q < changes.size(); ++q) {
                        const path_change& c = changes[q];
                        const cd x =
                            symbol_at(long(i) - long(s.precursor) - long(c.delay));
                        e0 += (channel[q].g0 + c.at0 + c.slope0 * double(i)) * x;
                        e1 += (channel[q].g1 + c.at1 + c.slope1 * double(i)) * x;
                    }
                    moved0[i] = s.y0[block_at + i] - e0;
                    moved1[i] = s.y1[block_at + i] - e1;
                }
            });
            const auto bend_of = [&](path_change& c) {
                cd in0, in1;
                double energy = 1e-12;
                for (size_t i = 0; i < n; ++i) {
                    const cd x = bend_at(i) *
                                 symbol_at(long(i) - long(s.precursor) - long(c.delay));
                    in0 += std::conj(x) * moved0[i];
                    in1 += std::conj(x) * moved1[i];
                    energy += std::norm(x);
                }
                c.bend0 = in0 / energy;
                c.bend1 = in1 / energy;
            };
            // Each path's sums are its own: with two threads, half the paths beside.
            const size_t half = cfg.threads > 1 ? changes.size() / 2 : 0;
            const auto bends = [&](size_t from, size_t to) {
                for (size_t q = from; q < to; ++q)
                    bend_of(changes[q]);
            };
            if (half > 0)
                run_beside([&] { bends(half, changes.size()); }, [&] { bends(0, half); });
            else
                bends(0, changes.size());
        };
        const auto equalise_moved = [&]() {
            // The observations less the change, on the decisions in s.decisions (data
            // then the probe after) and the probe before.
            const std::vector<cf>& before = s.probes[boundary_before];
            moved0.resize(n);
            moved1.resize(n);
            split_work(n, [&](size_t from, size_t to) {
                for (size_t i = from; i < to; ++i) {
                    cd e0, e1;
                    const double q = bend_at(i);
                    for (const path_change& c : changes) {
                        const long t = long(i) - long(s.precursor) - long(c.delay);
                        const cd x = t < 0 ? cd(before[size_t(long(k) + t)])
                                           : s.decisions[size_t(t)];
                        e0 += (c.at0 + c.slope0 * double(i) + c.bend0 * q) * x;
                        e1 += (c.at1 + c.slope1 * double(i) + c.bend1 * q) * x;
                    }
                    moved0[i] = s.y0[block_at + i] - e0;
                    moved1[i] = s.y1[block_at + i] - e1;
                }
            });
            return equalise_frame(moved0.data(), moved1.data());
        };
        if (changing) {
            for (unsigned j = 0; j < s.data; ++j)
                s.decisions[j] = demapper->decide(s.z[j], j);
            for (unsigned j = 0; j < k; ++j)
                s.decisions[s.data + j] = cd(s.probes[boundary_after][j]);
            linear = equalise_moved();
            for (unsigned j = 0; j < s.data; ++j)
                s.decisions[j] = demapper->decide(s.z[j], j);
            bend_from_decisions();
            linear = equalise_moved();
        }
        double variance = std::max(1e-3, linear);
        // Iterative block DFE: the frame's own decisions cancel their interference, as
        // far as their error (from the variance against the nearest points' distance)
        // lets them be trusted; the probes are known.
        // Not where the linear estimate is already near the channel's matched-filter
        // bound (little interference to cancel: AWGN, one path).
        const double bound = noise / channel_energy;
        // The SNR reported is the channel's (the matched filter's: its energy over the
        // noise per sample, each path's measurement noise taken out of its energy), not
        // the linear estimate's error: on a channel with spectral nulls (two F.1487
        // paths) that error is ruled by the nulls' bins and read 4-8 dB under the SNR
        // set, where the MMSE-DFE and the narrow receivers read the channel's.
        const double noise_per_sample =
            std::max(1e-12, matched_filter_excess * noise_tap / gain);
        const double heard_energy =
            channel_energy - 1e-9 - double(paths.size()) * noise_tap;
        const double reported_error =
            heard_energy > 0 ? noise_per_sample / heard_energy : 1.0;
        for (unsigned iteration = 0;
             iteration < fde_iterations && linear > worth_iterating * bound;
             ++iteration) {
            const double rho =
                std::clamp(1.0 - 2.0 * variance / nearest_points, 0.0, 0.95);
            if (rho <= 0)
                break;
            for (unsigned j = 0; j < s.data; ++j)
                s.decisions[j] = demapper->decide(s.z[j], j);
            for (unsigned j = 0; j < k; ++j)
                s.decisions[s.data + j] = cd(s.probes[boundary_after][j]);
            if (changing)
                equalise_moved();
            const double again = s.equaliser.iterate(
                *kept, s.decisions.data(), rho, power_scale, s.z.data());
            // The probes' own error, where larger (a channel that moved across the
            // frame).
            double probe_error = 0;
            for (unsigned j = 0; j < k; ++j)
                probe_error += std::norm(s.z[s.data + j] - s.decisions[s.data + j]);
            variance = std::max({ 1e-3, again, probe_error / double(k) });
        }
        // Data symbols, as the MMSE-DFE's.
        const size_t llr_at = block_llr.size();
        block_llr.resize(llr_at + size_t(s.data) * nb);
        s.decided.resize(s.data);
        split_work(s.data, [&](size_t from, size_t to) {
            for (size_t j = from; j < to; ++j)
                s.decided[j] = demapper->demap(
                    s.z[j], unsigned(j), variance, &block_llr[llr_at + j * nb]);
        });
        // What the frame feeds back, applied in order (apply_frame).
        frame_record record;
        for (unsigned j = 0; j < s.data; ++j) {
            const cd z = s.z[j];
            if (symbol_tap)
                record.taps.push_back(cf(demapper->unscrambled(z, j)));
            weigh_decision(z, s.decided[j], variance, llr_at + size_t(j + 1) * nb);
        }
        // The window power the presence watch compares with the preamble's, and the
        // probe after: its estimates and how well the probe before's channel predicts
        // its samples (nothing of it went into that channel).
        record.window_power.resize(n);
        for (size_t i = 0; i < n; ++i)
            record.window_power[i] =
                0.5 * (std::norm(s.y0[block_at + i]) + std::norm(s.y1[block_at + i]));
        record.probe_z.assign(s.z.begin() + s.data, s.z.begin() + s.data + k);
        record.boundary_probe = boundary_after;
        record.probe_first = first + s.data;
        record.reported_error = reported_error;
        if (!paths.empty()) {
            // The probe after's window predicted from the probe before's taps.
            const size_t after_at = size_t(k - l - unsigned(s.precursor)) + n;
            const std::vector<cf>& probe_after = s.probes[boundary_after];
            const size_t ref_from = size_t(k - l - unsigned(s.precursor));
            cd inner;
            double predicted = 0, observed = 0;
            for (size_t i = 0; i < l; ++i) {
                cd p0, p1;
                for (size_t m : paths) {
                    const int d =
                        int(m) < int(l) - s.precursor ? int(m) : int(m) - int(l);
                    const long idx = ((long(i) - d) % long(l) + long(l)) % long(l);
                    const cd c(probe_after[ref_from + size_t(idx)]);
                    p0 += s.g[0][m] * c;
                    p1 += s.g[1][m] * c;
                }
                const cd o0 = s.y0[after_at + i], o1 = s.y1[after_at + i];
                inner += std::conj(p0) * o0 + std::conj(p1) * o1;
                predicted += std::norm(p0) + std::norm(p1);
                observed += std::norm(o0) + std::norm(o1);
            }
            // (No score where either is zero: nothing is added then.)
            if (predicted > 0 && observed > 0)
                record.score = std::norm(inner) / (predicted * observed) * double(2 * l);
        } else {
            // No path above the noise: the probe before predicts nothing of this one
            // (its estimates are zeros, which the correlation test would let pass).
            record.score = 0.0;
        }
        // The rotation follows the residual turn.
        s.residual_hz += turn_gain * across / (2 * M_PI * double(n) / symbol_rate);
        symbol = first + n;
        record.symbol_after = symbol;
        record.residual_hz = s.residual_hz;
        record.block_end = (frame + 1) % int64_t(mode->frames_per_block) == 0;
        if (block_llr.size() == decoder->channel_bits())
            record.job = hand_to_decoding();
        const bool handed = record.job != nullptr;
        unapplied.push_back(std::move(record));
        // One thread: at once. Two: up to the block decoding before this one (the
        // frames after a block wait for its decoding only here; a first block whose
        // reading is judged is judged at once).
        const bool probe_unmatched =
            unapplied.back().score && *unapplied.back().score < probe_unmatched_score;
        const waiting wait = !pipelined() || probe_unmatched ? waiting::all
                             : handed                        ? waiting::all_but_newest
                                                             : waiting::none;
        if (apply_unapplied(wait, done))
            return true;
    }
}

} // namespace phy
} // namespace hfstack
} // namespace gr
