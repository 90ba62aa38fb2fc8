/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "arq.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

namespace {
// Longest C_PDU the receiver reassembles before giving up on a run without END.
constexpr size_t max_reassembly = 65536;
} // namespace

void fill_data_ack(dpdu& data, const arq_ack& a)
{
    if (data.type != dpdu_type::data_only && data.type != dpdu_type::data_ack)
        throw std::invalid_argument(
            "fill_data_ack: only DATA-ONLY/DATA-ACK carry an ack");
    if (a.selective_acks.size() >
        (a.long_fsn ? max_selective_acks_lfsn : max_selective_acks))
        throw std::invalid_argument("fill_data_ack: too many selective-ack bytes");
    if (a.long_fsn != data.long_fsn)
        throw std::invalid_argument("fill_data_ack: ack and data differ in FSN length");
    data.type = dpdu_type::data_ack;
    data.rx_lwe = a.rx_lwe;
    data.selective_acks = a.selective_acks;
}

dpdu make_ack_only(const arq_ack& a, bool expedited)
{
    if (a.selective_acks.size() >
        (a.long_fsn ? max_selective_acks_lfsn : max_selective_acks))
        throw std::invalid_argument("make_ack_only: too many selective-ack bytes");
    dpdu d;
    d.long_fsn = a.long_fsn;
    d.type = expedited ? dpdu_type::expedited_ack_only : dpdu_type::ack_only;
    d.rx_lwe = a.rx_lwe;
    d.selective_acks = a.selective_acks;
    return d;
}

arq_ack ack_of(const dpdu& d)
{
    if (d.type != dpdu_type::ack_only && d.type != dpdu_type::data_ack &&
        d.type != dpdu_type::expedited_ack_only)
        throw std::invalid_argument("ack_of: D_PDU type carries no ack");
    return arq_ack{ d.rx_lwe, d.selective_acks, d.long_fsn };
}

// ---------------------------------------------------------------- sender

arq_sender::arq_sender(const arq_config& config) : d_cfg(config)
{
    if (d_cfg.window < 1 || d_cfg.window > max_window(d_cfg.long_fsn))
        throw std::invalid_argument(d_cfg.long_fsn ? "arq_config.window must be 1..32768"
                                                   : "arq_config.window must be 1..128");
    d_mask = d_cfg.long_fsn ? 0xFFFF : 0xFF;
    if (d_cfg.segment_size < 1 || d_cfg.segment_size > max_segment_size)
        throw std::invalid_argument("arq_config.segment_size must be 1..1023");
}

uint64_t arq_sender::enqueue(bytes cpdu, bool deliver_in_order, bool yielding)
{
    if (cpdu.empty())
        throw std::invalid_argument("arq_sender::enqueue: empty C_PDU");
    const uint64_t h = d_next_handle++;
    cpdu_rec c;
    c.seg_size = d_cfg.segment_size;
    c.nseg = (cpdu.size() + c.seg_size - 1) / c.seg_size;
    c.in_order = d_cfg.expedited ? false : deliver_in_order;
    c.yielding = yielding;
    d_queued_bytes += cpdu.size();
    c.data = std::move(cpdu);
    d_cpdus.emplace(h, std::move(c));
    auto at = d_queue.end();
    if (!yielding)
        while (at != d_queue.begin()) {
            const cpdu_rec& before = d_cpdus.at(*std::prev(at));
            if (!before.yielding || before.numbered > 0)
                break;
            --at;
        }
    d_queue.insert(at, h);
    ++d_counters.cpdus_enqueued;
    return h;
}

void arq_sender::set_segment_size(size_t segment_size)
{
    if (segment_size < 1 || segment_size > max_segment_size)
        throw std::invalid_argument("arq segment size must be 1..1023");
    d_cfg.segment_size = segment_size;
}

size_t arq_sender::seg_len(const cpdu_rec& c, size_t index) const
{
    const size_t off = index * c.seg_size;
    return std::min(c.seg_size, c.data.size() - off);
}

dpdu arq_sender::make_frame(const seg& s, uint16_t fsn) const
{
    const cpdu_rec& c = d_cpdus.at(s.handle);
    dpdu d;
    d.type = d_cfg.expedited ? dpdu_type::expedited_data_only : dpdu_type::data_only;
    d.cpdu_start = s.index == 0;
    d.cpdu_end = s.index + 1 == c.nseg;
    d.tx_sequence = fsn;
    d.long_fsn = d_cfg.long_fsn;
    if (d_cfg.expedited) {
        d.cpdu_id = c.cpdu_id;
    } else {
        d.deliver_in_order = c.in_order;
        d.drop_cpdu = s.drop;
    }
    if (!s.drop) {
        const size_t off = s.index * c.seg_size;
        d.segment.assign(c.data.begin() + off,
                         c.data.begin() + off + seg_len(c, s.index));
    }
    return d;
}

bool arq_sender::can_start_new() const
{
    if (d_queue.empty() || d_window.size() >= d_cfg.window)
        return false;
    if (!d_cfg.expedited)
        return true;
    // Expedited: C_PDU-level stop and wait.
    return d_active == d_queue.front() || (d_active == 0 && d_window.empty());
}

// Returns the C_PDU whose next segment is numbered now (can_start_new() is true).
uint64_t arq_sender::new_source()
{
    const uint64_t h = d_queue.front();
    if (d_cfg.expedited && d_active == 0) {
        // A new expedited C_PDU: FSN restarts at 0, the C_PDU ID moves on (C.6.1).
        d_active = h;
        d_lwe = 0;
        d_cpdus.at(h).cpdu_id = d_next_id;
        d_next_id = uint8_t((d_next_id + 1) & 0xF);
    }
    return h;
}

std::vector<dpdu> arq_sender::next_transmission(size_t max_dpdus,
                                                size_t max_bytes,
                                                size_t per_dpdu_overhead)
{
    std::vector<dpdu> out;
    size_t used = 0;
    const uint64_t serial = d_transmissions + 1; // this one's, if it carries anything
    // 1. Due retransmissions, oldest FSN first.
    for (size_t i = 0; i < d_window.size() && out.size() < max_dpdus; ++i) {
        seg& s = d_window[i];
        if (s.state != seg_state::due)
            continue;
        const size_t len =
            (s.drop ? 0 : seg_len(d_cpdus.at(s.handle), s.index)) + per_dpdu_overhead;
        if (used + len > max_bytes)
            continue;
        out.push_back(make_frame(s, fsn_of(d_lwe + i)));
        s.state = seg_state::awaiting;
        s.reported_missing = false;
        s.sent_in = serial;
        used += len;
        if (s.drop)
            ++d_counters.drop_frames;
        else
            ++d_counters.retransmissions;
    }
    // 2. New segments while the window allows.
    while (out.size() < max_dpdus && can_start_new()) {
        const uint64_t h = d_queue.front();
        cpdu_rec& c = d_cpdus.at(h);
        if (c.numbered == 0) { // the size in force now: the latest loss estimate
            c.seg_size = d_cfg.segment_size;
            c.nseg = (c.data.size() + c.seg_size - 1) / c.seg_size;
        }
        const size_t len = seg_len(c, c.numbered);
        if (used + len + per_dpdu_overhead > max_bytes)
            break;
        new_source();
        seg s{ h, c.numbered, seg_state::awaiting, false };
        s.sent_in = serial;
        const uint16_t fsn = fsn_of(d_lwe + d_window.size());
        d_window.push_back(s);
        out.push_back(make_frame(s, fsn));
        ++c.numbered;
        d_queued_bytes -= len;
        used += len + per_dpdu_overhead;
        ++d_counters.new_segments;
        if (c.numbered == c.nseg)
            d_queue.pop_front();
    }
    // 3. Window-edge flags (regular class only), from the window after this batch.
    if (!d_cfg.expedited && !d_window.empty()) {
        const uint16_t uwe = fsn_of(d_lwe + d_window.size() - 1);
        for (auto& d : out) {
            d.tx_win_lwe = d.tx_sequence == d_lwe;
            d.tx_win_uwe = d.tx_sequence == uwe;
        }
    }
    if (!out.empty())
        d_transmissions = serial;
    d_counters.dpdus_sent += out.size();
    for (const auto& d : out)
        d_counters.bytes_sent += d.segment.size();
    return out;
}

void arq_sender::mark_acked(seg& s, std::vector<uint64_t>& confirmed)
{
    if (s.state == seg_state::acked)
        return;
    s.state = seg_state::acked;
    s.reported_missing = false;
    auto it = d_cpdus.find(s.handle);
    if (it == d_cpdus.end())
        return;
    cpdu_rec& c = it->second;
    ++c.acked;
    if (c.dropping) {
        if (c.acked == c.numbered)
            finish_dropped(s.handle);
    } else if (c.acked == c.nseg) {
        if (d_active == s.handle)
            d_active = 0;
        d_cpdus.erase(it);
        confirmed.push_back(s.handle);
        ++d_counters.cpdus_confirmed;
    }
}

void arq_sender::finish_dropped(uint64_t handle)
{
    d_cpdus.erase(handle);
    if (d_active == handle)
        d_active = 0;
    d_dropped.push_back(handle);
    ++d_counters.cpdus_dropped;
}

void arq_sender::pop_acked()
{
    while (!d_window.empty() && d_window.front().state == seg_state::acked) {
        d_window.pop_front();
        d_lwe = fsn_of(d_lwe + 1u);
    }
}

std::vector<uint64_t> arq_sender::on_ack(uint16_t rx_lwe,
                                         const bytes& selective_acks,
                                         uint64_t answered_transmission)
{
    std::vector<uint64_t> confirmed;
    ++d_counters.acks_received;
    const size_t n = d_window.size();
    const size_t lwe_dist = fsn_of(size_t(rx_lwe) - d_lwe);
    // Equation 4: TX LWE <= RX LWE <= TX UWE + 1.
    if (lwe_dist > n) {
        ++d_counters.acks_ignored;
        return confirmed;
    }
    // Segments that were awaiting this answer: acked now, or lost.
    auto answered = [&](seg& s) {
        if (s.state != seg_state::awaiting)
            return;
        ++d_outcome.frames;
        d_outcome.segment_bytes += s.drop ? 0 : seg_len(d_cpdus.at(s.handle), s.index);
    };
    for (size_t i = 0; i < lwe_dist; ++i) {
        answered(d_window[i]);
        mark_acked(d_window[i], confirmed);
    }
    const size_t map_limit =
        d_cfg.long_fsn ? max_selective_acks_lfsn : max_selective_acks;
    const size_t nbits = std::min(selective_acks.size(), map_limit) * 8;
    // LFSN: a bitmap of the largest size may stop short of RX UWE (the receiver could
    // not say more), so frames past its last bit are undecided, not lost. A shorter
    // one reaches RX UWE, as in Edition 3.
    const size_t decided =
        d_cfg.long_fsn && selective_acks.size() >= map_limit ? lwe_dist + 1 + nbits : n;
    for (size_t k = 0; k < nbits; ++k) {
        if (!((selective_acks[k / 8] >> (k % 8)) & 1))
            continue;
        const size_t idx = lwe_dist + 1 + k; // window index of FSN rx_lwe + 1 + k
        if (idx < n) {
            answered(d_window[idx]);
            mark_acked(d_window[idx], confirmed);
        } else {
            ++d_counters.ack_bits_ignored; // equation 5
        }
    }
    // Whatever the peer heard whole and still lacks was lost: send it again.
    for (size_t i = 0; i < std::min(n, decided); ++i) {
        seg& s = d_window[i];
        if (s.state == seg_state::awaiting && s.sent_in <= answered_transmission) {
            answered(s);
            ++d_outcome.lost_frames;
            s.state = seg_state::due;
            s.reported_missing = true;
        }
    }
    pop_acked();
    return confirmed;
}

arq_sender::ack_outcome arq_sender::take_ack_outcome()
{
    ack_outcome o = d_outcome;
    d_outcome = ack_outcome{};
    return o;
}

void arq_sender::on_ack_timeout()
{
    ++d_counters.ack_timeouts;
    for (auto& s : d_window)
        if (s.state == seg_state::awaiting)
            s.state = seg_state::due;
}

bool arq_sender::drop(uint64_t handle)
{
    auto it = d_cpdus.find(handle);
    if (it == d_cpdus.end() || it->second.dropping)
        return false;
    cpdu_rec& c = it->second;
    // Segments never numbered will not be sent.
    auto q = std::find(d_queue.begin(), d_queue.end(), handle);
    if (q != d_queue.end()) {
        for (size_t i = c.numbered; i < c.nseg; ++i)
            d_queued_bytes -= seg_len(c, i);
        d_queue.erase(q);
    }
    c.dropping = true;
    if (c.numbered == 0) {
        finish_dropped(handle);
        return true;
    }
    if (d_cfg.expedited) {
        // No DROP flag in EXPEDITED DATA-ONLY: abandon the C_PDU and its window.
        d_window.clear();
        d_lwe = 0;
        finish_dropped(handle);
        return true;
    }
    for (auto& s : d_window) {
        if (s.handle == handle && s.state != seg_state::acked) {
            s.drop = true;
            s.state = seg_state::due;
        }
    }
    if (c.acked == c.numbered)
        finish_dropped(handle);
    return true;
}

bool arq_sender::may_be_complete_at_peer(uint64_t handle) const
{
    auto it = d_cpdus.find(handle);
    if (it == d_cpdus.end() || it->second.dropping || it->second.nseg == 0 ||
        it->second.numbered < it->second.nseg)
        return false;
    for (const auto& s : d_window)
        if (s.handle == handle && s.reported_missing)
            return false;
    return true;
}

std::vector<uint64_t> arq_sender::take_dropped()
{
    std::vector<uint64_t> out;
    out.swap(d_dropped);
    return out;
}

std::vector<uint64_t> arq_sender::reset(uint16_t new_tx_lwe, bool requeue)
{
    std::vector<uint64_t> lost;
    std::vector<uint64_t> dropping;
    for (auto& kv : d_cpdus) { // std::map: ascending handles = queue order
        if (kv.second.numbered == 0)
            continue;
        if (kv.second.dropping)
            dropping.push_back(kv.first);
        else
            lost.push_back(kv.first);
    }
    d_window.clear();
    d_active = 0;
    d_lwe = d_cfg.expedited ? 0 : fsn_of(new_tx_lwe);
    for (uint64_t h : dropping)
        finish_dropped(h);
    for (uint64_t h : lost) {
        cpdu_rec& c = d_cpdus.at(h);
        auto q = std::find(d_queue.begin(), d_queue.end(), h);
        if (q != d_queue.end()) {
            for (size_t i = c.numbered; i < c.nseg; ++i)
                d_queued_bytes -= seg_len(c, i);
            d_queue.erase(q);
        }
        ++d_counters.cpdus_lost;
    }
    if (requeue) {
        for (auto it = lost.rbegin(); it != lost.rend(); ++it) {
            cpdu_rec& c = d_cpdus.at(*it);
            c.numbered = 0;
            c.acked = 0;
            d_queued_bytes += c.data.size();
            d_queue.push_front(*it);
        }
    } else {
        for (uint64_t h : lost)
            d_cpdus.erase(h);
    }
    return lost;
}

void arq_sender::set_long_fsn(bool long_fsn, size_t window)
{
    if (window < 1 || window > max_window(long_fsn))
        throw std::invalid_argument(long_fsn ? "arq window must be 1..32768"
                                             : "arq window must be 1..128");
    reset(0, true);
    d_cfg.long_fsn = long_fsn;
    d_cfg.window = window;
    d_mask = long_fsn ? 0xFFFF : 0xFF;
}

size_t arq_sender::in_flight() const
{
    size_t n = 0;
    for (const auto& s : d_window)
        n += s.state != seg_state::acked;
    return n;
}

bool arq_sender::has_pending_transmission() const
{
    for (const auto& s : d_window)
        if (s.state == seg_state::due)
            return true;
    return can_start_new();
}

// ---------------------------------------------------------------- receiver

bool arq_receiver::on_data(const dpdu& d, bool segment_ok)
{
    ++d_counters.frames;
    const bool regular = d.type == dpdu_type::data_only || d.type == dpdu_type::data_ack;
    if (d_expedited ? d.type != dpdu_type::expedited_data_only : !regular) {
        ++d_counters.wrong_type;
        return false;
    }
    const bool drop = !d_expedited && d.drop_cpdu;
    if (d_expedited && int(d.cpdu_id) != d_cpdu_id) {
        // A new expedited C_PDU: the sender restarted FSN 0 (C.6.1); anything
        // still partial belongs to a C_PDU it abandoned.
        reset(0);
        d_cpdu_id = d.cpdu_id;
    }
    if (d.long_fsn != d_long_fsn || d.tx_sequence > d_mask) {
        ++d_counters.wrong_type; // FSN form of the other mode: not ours
        return false;
    }
    const uint16_t fsn = d.tx_sequence;
    const size_t fwd = fsn_of(size_t(fsn) - d_lwe);
    if (fwd >= d_window_max) {
        // Behind RX LWE: a copy of something already received unless it lies more
        // than a window behind RX UWE (equation 3).
        if (fsn_of(size_t(d_uwe) - fsn) <= d_window_max - 1) {
            ++d_counters.duplicates;
            d_ack_due = true;
            return true;
        }
        ++d_counters.out_of_window;
        return false;
    }
    d_ack_due = true;
    slot& s = d_slots[fsn];
    if (s.received) {
        ++d_counters.duplicates;
    } else if (!segment_ok && !drop) {
        ++d_counters.damaged;
    } else {
        s.received = true;
        s.start = d.cpdu_start;
        s.end = d.cpdu_end;
        s.in_order = d_expedited ? true : d.deliver_in_order;
        s.drop = drop;
        s.consumed = false;
        if (!drop)
            s.data = d.segment;
        else
            s.data.clear();
        ++d_counters.segments_received;
        d_counters.segment_bytes_received += s.data.size();
        if (drop)
            ++d_counters.drop_frames;
        if (fwd + 1 > span())
            d_uwe = fsn;
    }
    // TX-WIN-LWE: the sender will never send anything before this FSN again.
    if (!d_expedited && d.tx_win_lwe && fwd > 0) {
        ++d_counters.lwe_advances;
        while (d_lwe != fsn) {
            if (d_slots[d_lwe].received) {
                pass_below(d_slots[d_lwe]);
            } else {
                skip_missing();
            }
            d_slots[d_lwe] = slot();
            d_lwe = fsn_of(d_lwe + 1u);
        }
        if (span() > d_window_max) // nothing left pending above the new RX LWE
            d_uwe = fsn_of(d_lwe + d_mask);
    }
    advance();
    if (d_slots[fsn].received && fsn_of(size_t(fsn) - d_lwe) < d_window_max &&
        !d_slots[fsn].in_order && !d_slots[fsn].drop)
        try_early_delivery(fsn);
    return true;
}

void arq_receiver::advance()
{
    while (d_slots[d_lwe].received && span() > 0) {
        pass_below(d_slots[d_lwe]);
        d_slots[d_lwe] = slot();
        d_lwe = fsn_of(d_lwe + 1u);
    }
}

void arq_receiver::discard_open()
{
    if (d_open.active)
        ++d_counters.cpdus_discarded;
    d_open = open_run();
}

void arq_receiver::skip_missing()
{
    // A segment that will never come: the run it belongs to cannot complete.
    discard_open();
}

void arq_receiver::pass_below(slot& s)
{
    if (s.consumed) { // an as-arrived C_PDU already delivered from the window
        if (s.start)
            discard_open();
        return;
    }
    if (s.start) {
        discard_open(); // a previous run without END can never complete
        d_open.active = true;
        d_open.drop = false;
    } else if (!d_open.active) {
        return; // middle of a C_PDU whose start was lost to a reset or a skip
    }
    d_open.drop = d_open.drop || s.drop;
    if (!d_open.drop) {
        d_open.data.insert(d_open.data.end(), s.data.begin(), s.data.end());
        if (d_open.data.size() > max_reassembly)
            d_open.drop = true;
    }
    if (s.end) {
        if (d_open.drop) {
            discard_open();
        } else {
            d_delivered.push_back(std::move(d_open.data));
            ++d_counters.cpdus_delivered;
            d_open = open_run();
        }
    }
}

void arq_receiver::try_early_delivery(uint16_t fsn)
{
    // Find START at or before fsn and END at or after it, all received, inside the
    // window, as-arrived, not dropped and not already delivered.
    auto usable = [&](const slot& s) {
        return s.received && !s.consumed && !s.drop && !s.in_order;
    };
    uint16_t b = fsn;
    while (true) {
        if (!usable(d_slots[b]))
            return;
        if (d_slots[b].start)
            break;
        if (b == d_lwe)
            return;
        b = fsn_of(b + d_mask);
        if (d_slots[b].end) // the previous C_PDU ends here: no START for ours
            return;
    }
    uint16_t e = fsn;
    while (true) {
        if (!usable(d_slots[e]))
            return;
        if (d_slots[e].end)
            break;
        if (e == d_uwe)
            return;
        e = fsn_of(e + 1u);
        if (e != fsn && d_slots[e].start)
            return;
    }
    bytes out;
    for (uint16_t i = b;; i = fsn_of(i + 1u)) {
        out.insert(out.end(), d_slots[i].data.begin(), d_slots[i].data.end());
        d_slots[i].consumed = true;
        d_slots[i].data.clear();
        if (i == e)
            break;
    }
    d_delivered.push_back(std::move(out));
    ++d_counters.cpdus_delivered;
}

std::vector<bytes> arq_receiver::take_delivered()
{
    std::vector<bytes> out;
    out.swap(d_delivered);
    return out;
}

arq_ack arq_receiver::ack()
{
    arq_ack a;
    a.rx_lwe = d_lwe;
    a.long_fsn = d_long_fsn;
    size_t nbits = span() > 0 ? span() - 1 : 0; // FSNs RX LWE+1 .. RX UWE
    if (d_long_fsn) // the header size field bounds the map; see arq_sender::on_ack
        nbits = std::min(nbits, max_selective_acks_lfsn * 8);
    a.selective_acks.assign((nbits + 7) / 8, 0);
    for (size_t k = 0; k < nbits; ++k)
        if (d_slots[fsn_of(d_lwe + 1 + k)].received)
            a.selective_acks[k / 8] |= uint8_t(1u << (k % 8));
    d_ack_due = false;
    ++d_counters.acks_taken;
    return a;
}

arq_receiver::arq_receiver(bool expedited, bool long_fsn)
    : d_expedited(expedited),
      d_long_fsn(long_fsn),
      d_mask(long_fsn ? 0xFFFF : 0xFF),
      d_window_max(max_window(long_fsn)),
      d_slots(size_t(d_mask) + 1),
      d_uwe(d_mask)
{
}

void arq_receiver::set_long_fsn(bool long_fsn)
{
    d_long_fsn = long_fsn;
    d_mask = long_fsn ? 0xFFFF : 0xFF;
    d_window_max = max_window(long_fsn);
    d_slots.assign(size_t(d_mask) + 1, slot());
    reset(0);
}

void arq_receiver::reset(uint16_t new_rx_lwe)
{
    for (auto& s : d_slots)
        s = slot();
    discard_open();
    d_lwe = fsn_of(new_rx_lwe);
    d_uwe = fsn_of(d_lwe + d_mask);
    d_cpdu_id = -1;
}

arq_receiver_state arq_receiver::state() const
{
    arq_receiver_state st;
    st.expedited = d_expedited;
    st.long_fsn = d_long_fsn;
    st.rx_lwe = d_lwe;
    st.rx_uwe = d_uwe;
    st.cpdu_id = d_cpdu_id;
    for (size_t k = 0; k < span() && k < d_window_max; ++k) {
        const uint16_t fsn = fsn_of(d_lwe + k);
        const slot& s = d_slots[fsn];
        if (!s.received)
            continue;
        st.segments.push_back(
            { fsn, s.start, s.end, s.in_order, s.drop, s.consumed, s.data });
    }
    st.open_active = d_open.active;
    st.open_drop = d_open.drop;
    st.open_data = d_open.data;
    return st;
}

void arq_receiver::restore(const arq_receiver_state& st)
{
    if (st.expedited != d_expedited)
        throw std::invalid_argument("arq_receiver: state of the other class");
    set_long_fsn(st.long_fsn);
    reset(st.rx_lwe);
    const uint16_t mask = d_mask;
    const auto ahead = [&](uint16_t fsn) {
        return size_t(uint16_t(fsn - st.rx_lwe) & mask);
    };
    if (st.rx_lwe > mask || st.rx_uwe > mask ||
        (ahead(st.rx_uwe) >= d_window_max &&
         uint16_t((st.rx_uwe + 1) & mask) != st.rx_lwe))
        throw std::invalid_argument("arq_receiver: window edges outside the FSN range");
    if (st.open_data.size() > max_reassembly || st.cpdu_id < -1 || st.cpdu_id > 15)
        throw std::invalid_argument("arq_receiver: reassembly state out of range");
    for (const auto& g : st.segments) {
        if (g.fsn > mask || ahead(g.fsn) >= d_window_max ||
            ahead(g.fsn) > ahead(st.rx_uwe) || g.data.size() > 1023) {
            reset(0);
            throw std::invalid_argument("arq_receiver: a segment outside the window");
        }
        slot& s = d_slots[g.fsn];
        s.received = true;
        s.start = g.start;
        s.end = g.end;
        s.in_order = g.in_order;
        s.drop = g.drop;
        s.consumed = g.consumed;
        s.data = g.data;
    }
    d_uwe = st.rx_uwe;
    d_cpdu_id = st.cpdu_id;
    d_open.active = st.open_active;
    d_open.drop = st.open_drop;
    d_open.data = st.open_data;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
