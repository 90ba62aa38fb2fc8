/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Bursts into the node engine: D_PDUs, ARQ and non-ARQ delivery to clients, delivery
 * confirmations, the RESET/WIN-RESYNC exchange, acknowledgements. See node_engine_impl.h.
 */
#include "node_engine_impl.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gr {
namespace hfstack {
namespace dl {

bool node_engine::impl::deliver_data(uint32_t source,
                                     uint32_t destination,
                                     const spdu& s,
                                     bool expedited,
                                     sis_tx_mode mode,
                                     const non_arq_delivery* partial)
{
    const sap_binding* b = saps.by_sap(s.destination_sap);
    // Reassembly admits C_PDUs far above any MTU; a U_PDU larger than the largest MTU a
    // node may announce comes from a broken or hostile peer (and might not even fit
    // the 16-bit SIS size field).
    if (!b || !hard.may_use(s.destination_sap, source, s.source_sap) ||
        s.updu.size() > broadcast_only_max_mtu) {
        counters.updus_undeliverable += 1;
        return false;
    }
    sis_primitive p;
    p.type =
        expedited ? sis_type::expedited_unidata_indication : sis_type::unidata_indication;
    p.priority = s.priority;
    p.destination_sap = s.destination_sap;
    p.destination = sis_addr(destination);
    p.service_type.tx_mode = mode;
    p.source_sap = s.source_sap;
    p.source = sis_addr(source);
    p.payload = s.updu;
    if (partial) {
        // Block offsets count C_PDU bytes; the U_PDU starts after C_PCI and S_PCI.
        const size_t skip = cpdu_header_size + spdu_header_size(s);
        auto shift = [&](const std::vector<sis_block_range>& in) {
            std::vector<sis_block_range> out;
            for (auto r : in) {
                size_t a = r.offset, e = size_t(r.offset) + r.size;
                a = std::max(a, skip);
                if (e <= a)
                    continue;
                out.push_back({ uint16_t(a - skip), uint16_t(e - a) });
            }
            return out;
        };
        p.errored_blocks = shift(partial->errored);
        p.non_received_blocks = shift(partial->non_received);
    }
    counters.updus_delivered += 1;
    if (mode == sis_tx_mode::arq)
        deliver_journaled(b->client, std::move(p));
    else
        to_client(b->client, std::move(p));
    return true;
}

void node_engine::impl::deliver_journaled(uint32_t client, sis_primitive p)
{
    if (client == departed_client)
        return;
    if (!journaling() || !clients_reporting_writes.count(client)) {
        to_client(client, std::move(p));
        return;
    }
    const uint64_t number = ++last_delivery;
    bytes indication = encode(p);
    journal_append(journal_delivery_record(number, indication));
    unsettled_bytes += indication.size();
    unsettled.emplace(number, std::move(indication));
    while (unsettled_bytes > max_unsettled_bytes) {
        const auto oldest = unsettled.begin();
        counters.deliveries_unsettled_dropped += 1;
        settle_delivery(oldest->first, false);
    }
    actions.to_clients.push_back(client_message{ client, std::move(p), number });
}

void node_engine::impl::settle_delivery(uint64_t delivery, bool written)
{
    const auto it = unsettled.find(delivery);
    if (it == unsettled.end())
        return;
    unsettled_bytes -= it->second.size();
    unsettled.erase(it);
    owed.erase(delivery);
    journal_append(journal_settled_record(delivery, written));
}

void node_engine::impl::deliver_owed(uint32_t client, uint8_t sap)
{
    for (auto it = owed.begin(); it != owed.end();) {
        if (it->second != sap) {
            ++it;
            continue;
        }
        const uint64_t number = it->first;
        it = owed.erase(it);
        const auto p = decode_sis(unsettled.at(number));
        counters.deliveries_repeated += 1;
        if (clients_reporting_writes.count(client)) {
            actions.to_clients.push_back(client_message{ client, p.value, number });
        } else {
            to_client(client, p.value);
            settle_delivery(number, true);
        }
    }
}

void node_engine::impl::queue_delivery_answer(uint32_t addr, const spdu& s)
{
    peer_state& p = peer(addr);
    // Yielding: what the client answers to the delivered U_PDU goes ahead of it.
    p.flights.emplace(p.tx.enqueue(data_cpdu(s), true, true), in_flight{});
}

void node_engine::impl::on_arq_cpdu(uint32_t source, const bytes& c, bool expedited)
{
    const auto cp = decode_cpdu(c);
    if (!cp || cp.value.type != cpdu_type::data)
        return;
    const auto sp = decode_spdu(cp.value.spdu);
    if (!sp)
        return;
    const spdu& s = sp.value;
    note_activity(source, now);
    switch (s.type) {
    case spdu_type::data: {
        const bool ok =
            deliver_data(source, cfg.address, s, expedited, sis_tx_mode::arq, nullptr);
        if (s.client_delivery_confirm_required) {
            spdu answer;
            answer.type =
                ok ? spdu_type::data_delivery_confirm : spdu_type::data_delivery_fail;
            answer.reason =
                ok ? 0 : uint8_t(data_delivery_fail_reason::destination_sap_not_bound);
            answer.source_sap = s.source_sap;
            answer.destination_sap = s.destination_sap;
            answer.updu.assign(s.updu.begin(),
                               s.updu.begin() +
                                   std::min(s.updu.size(), cfg.confirm_prefix_bytes));
            queue_delivery_answer(source, answer);
        }
        break;
    }
    case spdu_type::data_delivery_confirm:
    case spdu_type::data_delivery_fail:
        on_delivery_answer(source, s);
        break;
    default:
        hard.on_spdu(source, s, now);
        break;
    }
}

namespace {

bool answers(const spdu& s, const updu_request& r)
{
    return r.source_sap == s.source_sap && r.destination_sap == s.destination_sap &&
           s.updu.size() <= r.updu.size() &&
           std::equal(s.updu.begin(), s.updu.end(), r.updu.begin());
}

} // namespace

void node_engine::impl::answer_client(const updu_request& r, const spdu& s)
{
    if (s.type == spdu_type::data_delivery_confirm)
        confirm(r);
    else
        reject(r, sis_unidata_rejected_reason::destination_sap_not_bound);
}

void node_engine::impl::on_delivery_answer(uint32_t source, const spdu& s)
{
    peer_state& p = peer(source);
    auto& a = p.awaiting_client;
    for (auto it = a.begin(); it != a.end(); ++it) {
        if (!answers(s, *it))
            continue;
        answer_client(*it, s);
        a.erase(it);
        return;
    }
    // Not acknowledged yet (its ack lost, the data delivered): kept for the ack.
    auto& early = p.early_client_answers;
    if (early.size() >= max_awaiting_client_confirm)
        early.pop_front();
    early.push_back(s);
}

bool node_engine::impl::answered_early(peer_state& p, const updu_request& r)
{
    auto& early = p.early_client_answers;
    for (auto it = early.begin(); it != early.end(); ++it) {
        if (!answers(*it, r))
            continue;
        answer_client(r, *it);
        early.erase(it);
        return true;
    }
    return false;
}

void node_engine::impl::on_non_arq_delivery(const non_arq_delivery& d)
{
    const auto cp = decode_cpdu(d.data);
    if (!cp) {
        counters.non_arq_discarded += !d.complete;
        return;
    }
    const cpdu& c = cp.value;
    if (c.type != cpdu_type::data) {
        // CAS-1 is point to point: link C_PDUs sent to a group are not for us.
        if (d.complete && d.expedited && d.destination == cfg.address) {
            if (c.type == cpdu_type::physical_link_request)
                rx_burst.link_requested.insert(d.source);
            if (c.type == cpdu_type::physical_link_accepted)
                rx_burst.link_accepted.insert(d.source);
            cas.on_cpdu(d.source, c, now);
            // Part of an exchange with that node: what we send it next (data on a
            // link just accepted) follows at once.
            peer_state& p = peer(d.source);
            p.last_heard = p.last_exchange = now;
        }
        return;
    }
    const auto sp = decode_spdu(c.spdu);
    if (!sp || sp.value.type != spdu_type::data) {
        counters.non_arq_discarded += !d.complete;
        return;
    }
    const spdu& s = sp.value;
    if (!d.complete) {
        const sap_binding* b = saps.by_sap(s.destination_sap);
        if (!b || b->service.tx_mode != sis_tx_mode::non_arq_with_errors) {
            counters.non_arq_discarded += 1;
            return;
        }
        deliver_data(d.source,
                     d.destination,
                     s,
                     d.expedited,
                     sis_tx_mode::non_arq_with_errors,
                     &d);
        return;
    }
    deliver_data(d.source, d.destination, s, d.expedited, sis_tx_mode::non_arq, nullptr);
}

bool node_engine::impl::for_us(uint32_t destination) const
{
    if (destination == cfg.address)
        return true;
    if (!is_group(destination))
        return false;
    return destination == broadcast_address ||
           std::find(cfg.groups.begin(), cfg.groups.end(), destination) !=
               cfg.groups.end();
}

void node_engine::impl::handle_reset(peer_state& p, const dpdu& d)
{
    counters.resets_received += d.reset_ack ? 0 : 1;
    if (d.reset_ack) {
        if (p.resync.on_reset_ack(d.reset_frame_id))
            reset_windows(p); // else reset as the request went, data numbered since
        return;
    }
    if (d.full_reset) {
        // S5066-EP5: the windows a FULL RESET sets up take its FSN form.
        if (cfg.large_windows && d.long_fsn != p.lfsn)
            set_long_fsn(p, d.long_fsn);
        // A repeated request (our RESET-ACK was lost) is only acknowledged again:
        // data exchanged since the first copy must not be reset.
        if (p.resync.on_full_reset(d.reset_frame_id))
            reset_windows(p);
        return;
    }
    if (d.reset_rx_win_command) {
        if (p.resync.on_rx_win_command(d.reset_frame_id)) {
            p.rx.reset(d.new_rx_lwe);
            journal_state(p);
        }
        return;
    }
    // (RESET-TX-WIN-RQST alone: acknowledged, our sender keeps its window.)
    p.resync.owe_ack(d.reset_frame_id);
}

void node_engine::impl::end_exchange(peer_state& p,
                                     bool regular_acked,
                                     bool expedited_acked)
{
    p.awaiting_response = false;
    p.response_deadline = inf;
    if (!regular_acked)
        p.tx.on_ack_timeout();
    if (!expedited_acked)
        p.tx_exp.on_ack_timeout();
    // A RESET still unacknowledged is asked again.
    p.resync.send_again();
}

void node_engine::impl::reset_windows(peer_state& p)
{
    p.tx.reset(0, true);
    p.tx_exp.reset(0, true);
    p.rx.reset(0);
    p.rx_exp.reset(0);
    journal_state(p);
}

void node_engine::impl::journal_append(const bytes& record)
{
    actions.journal.insert(actions.journal.end(), record.begin(), record.end());
    journal_appended += record.size();
}

void node_engine::impl::journal_state(const peer_state& p)
{
    if (!journaling())
        return;
    for (const auto* rx : { &p.rx, &p.rx_exp })
        journal_append(journal_state_record(p.address, rx->state()));
}

void node_engine::impl::journal_frame(const peer_state& p, const dpdu& d, bool segment_ok)
{
    journal_append(journal_frame_record(p.address, d, segment_ok));
}

void node_engine::impl::journal_compact()
{
    if (!journaling() ||
        (!journal_rewrite_due && journal_appended < journal_rewrite_bytes))
        return;
    // The whole journal anew: every synchronised peer's receivers as they are now, and
    // the deliveries not yet settled.
    actions.journal = journal_header(cfg.address);
    actions.journal_rewrite = true;
    const auto add = [&](const bytes& r) {
        actions.journal.insert(actions.journal.end(), r.begin(), r.end());
    };
    for (const auto& [addr, p] : peers)
        if (p->resync.synced())
            for (const auto* rx : { &p->rx, &p->rx_exp })
                add(journal_state_record(addr, rx->state()));
    for (const auto& [number, indication] : unsettled)
        add(journal_delivery_record(number, indication));
    journal_rewrite_due = false;
    journal_appended = 0;
}

size_t node_engine::impl::restore_journal(const bytes& journal)
{
    auto replay = replay_journal(journal, cfg.address);
    journal_restored = !replay.peers.empty();
    for (const auto& [addr, held] : replay.peers) {
        peer_state& p = peer(addr);
        if (held.regular.long_fsn != p.lfsn)
            set_long_fsn(p, held.regular.long_fsn);
        p.rx.restore(held.regular);
        p.rx_exp.restore(held.expedited);
        start_tx_resync(p);
    }
    for (auto& [number, indication] : replay.unsettled) {
        owed[number] = decode_sis(indication).value.destination_sap;
        unsettled_bytes += indication.size();
    }
    unsettled = std::move(replay.unsettled);
    last_delivery = replay.last_delivery;
    counters.deliveries_owed += owed.size();
    journal_rewrite_due = true; // compacted at the first actions
    return replay.peers.size();
}

void node_engine::impl::start_tx_resync(peer_state& p)
{
    start_reset(p); // draws the frame ID as a FULL RESET would
    p.resync.restore_synced(p.resync.request_id());
}

void node_engine::impl::set_long_fsn(peer_state& p, bool lfsn)
{
    // The windows restart at 0 in the new form. The caller takes the long form for
    // the FULL RESET of its link request (and any data riding with it); the called
    // node takes a FULL RESET's form; both take the form the link agreed at link-up
    // (the caller on ACCEPTED, the called node as it sends it).
    p.lfsn = lfsn;
    const size_t window =
        lfsn ? cfg.arq_window : std::min(cfg.arq_window, arq_max_window);
    p.tx.set_long_fsn(lfsn, window);
    p.tx_exp.set_long_fsn(lfsn, window);
    p.rx.set_long_fsn(lfsn);
    p.rx_exp.set_long_fsn(lfsn);
    if (p.resync.synced())
        journal_state(p);
}

bool node_engine::impl::long_fsn_from(uint32_t source) const
{
    auto it = peers.find(source);
    return it != peers.end() && it->second->lfsn;
}

void node_engine::impl::start_reset(peer_state& p)
{
    if (p.resync.outstanding())
        return;
    if ((cfg.data_with_link_request || journal_restored) && !reset_ids_drawn) {
        // A peer keeps the frame ID of a reset that brought data, or of a RESET-RX-WIN
        // command, to know repeats; a restarted node must not start from the same one
        // (see window_resync.h).
        uint64_t x;
        std::memcpy(&x, &now, sizeof x);
        x ^= uint64_t(cfg.address) << 32;
        x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdULL;
        x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ULL;
        next_reset_id = uint8_t(x ^ (x >> 33));
        reset_ids_drawn = true;
    }
    p.resync.start(next_reset_id++);
}

void node_engine::impl::note_heard_frame(const received_dpdu& rf)
{
    const dpdu& d = rf.frame;
    // A DROP frame carries no segment, so says nothing of the segments' losses.
    if (!cfg.segment_from_heard_frames || cfg.segment_size || !is_arq_data(d.type) ||
        d.segment.empty())
        return;
    auto it = heard_frame_losses.find(d.source);
    if (it == heard_frame_losses.end()) {
        segment_size_policy_config c;
        c.prior_ber = cfg.segment_prior_ber;
        it = heard_frame_losses.emplace(d.source, segment_size_policy(c)).first;
    }
    it->second.on_outcome(1, rf.length, rf.segment_ok ? 0 : 1);
    heard_from_all.on_outcome(1, rf.length, rf.segment_ok ? 0 : 1);
}

void node_engine::impl::on_burst(const uint8_t* data, size_t size, const burst_info& info)
{
    counters.bytes_received += size;
    bursts_delivered += 1;
    if (receiving_until == -inf)
        rx_burst_began = now;
    last_rx_end = now;
    gap_burst_answer_by = -inf; // heard: our gap burst was answered, or a caller read
    std::vector<received_dpdu> frames;
    deframer.push(data, size, frames);
    std::set<uint32_t> heard; // in this piece
    auto& acked = rx_burst.acked;
    auto& snr_reported = rx_burst.snr_reported;
    for (auto& rf : frames) {
        const dpdu& d = rf.frame;
        if (d.source == cfg.address)
            continue; // our own burst heard back
        stations_heard[d.source] = now;
        rx_burst.sources.insert(d.source);
        note_heard_frame(rf);
        // ARQ data, or a link C_PDU (expedited non-ARQ), to a node: its answer is due.
        if ((is_arq_data(d.type) ||
             (d.type == dpdu_type::expedited_non_arq_data && !for_us(d.destination))) &&
            !is_group(d.destination))
            (for_us(d.destination) ? rx_burst.sent_us_data : rx_burst.served_others)
                .insert(d.source);
        if (!for_us(d.destination)) {
            counters.dpdus_not_for_us += 1;
            if (!is_group(d.destination))
                rx_burst.addressed_others.insert(d.source);
            continue;
        }
        // A waiting station got the channel and calls us: answer it at once (the
        // answer decides whether our link makes way for it).
        if (!link_up(d.source) && !cas.up_peers().empty())
            yielding = false;
        counters.dpdus_received += 1;
        if (!rf.segment_ok)
            counters.segment_crc_errors += 1;
        const uint32_t src = d.source;
        if (d.type == dpdu_type::non_arq_data ||
            d.type == dpdu_type::expedited_non_arq_data) {
            nonarq_rx.on_dpdu(d, rf.segment_ok, now);
            // At once: a PHYSICAL LINK REQUEST must make the link before a RESET
            // later in the same burst is judged.
            for (auto& nd : nonarq_rx.take_delivered())
                on_non_arq_delivery(nd);
            continue;
        }
        if (is_group(d.destination) || is_group(src))
            continue; // connection D_PDUs are point to point
        peer_state& p = peer(src);
        if (p.drc) {
            // An answer to our last burst: the advice it carries is current, also for
            // a less robust mode just after an unanswered step down (which the answer
            // would otherwise only lift at the burst's end, its advice discarded).
            if (p.awaiting_response && !burst_began_while_asking(p))
                p.drc->on_peer_answered();
            if (info.mode)
                p.drc->on_burst_mode(*info.mode);
            p.drc->on_dpdu(d, now);
            if (p.policy)
                snr_reported.insert(src); // reported at the burst's end
        }
        if (d.type == dpdu_type::warning) {
            counters.warnings_received += 1;
            if (d.warning_reason == warning_not_connected && p.sent_data_with_request) {
                // The data that rode with our link request, refused: the link stands.
                p.refuses_data_with_request = true;
                continue;
            }
            if (d.warning_reason == warning_not_connected && link_up(src))
                cas.release(src, physical_link_break_reason::unknown, now);
            continue;
        }
        if (d.type == dpdu_type::management) {
            heard.insert(src);
            continue;
        }
        if (!link_up(src)) {
            // A RESET may ride with a link request we refused; it needs no warning.
            if (d.type != dpdu_type::reset_win_resync)
                p.warning_owed = true;
            continue;
        }
        heard.insert(src);
        p.last_heard = now;
        p.last_exchange = std::max(p.last_exchange, now);
        if (d.type == dpdu_type::reset_win_resync) {
            if (d.full_reset && !d.reset_ack)
                rx_burst.reset_by.insert(src);
            if (d.reset_rx_win_command && !d.reset_ack)
                rx_burst.rx_win_reset_by.insert(src);
            handle_reset(p, d);
            continue;
        }
        if (!p.resync.synced()) {
            // We hold no agreed windows with this node (we restarted, or it is new
            // to us): its sequence numbers mean nothing until a FULL RESET.
            start_reset(p);
            continue;
        }
        if (rx_burst.reset_by.count(src)) {
            // Data riding with a FULL RESET (data_with_link_request): numbered in the
            // windows it set up, or, for a repeated reset, in the ones it set up
            // before. Its frame ID is kept (see window_resync.h).
            if (is_arq_data(d.type))
                p.resync.on_data_with_reset();
        } else if (rx_burst.link_requested.count(src)) {
            // With a link request whose reset was lost: our windows may be an older
            // link's. Dropped; they follow the reset.
            if (is_arq_data(d.type)) {
                counters.dpdus_dropped_unsynced += 1;
                continue;
            }
        } else if (!rx_burst.rx_win_reset_by.count(src)) {
            // Regular traffic after a reset: the peer has our RESET-ACK, so a later
            // FULL RESET with the same frame ID is a new one (the peer restarted).
            // (Data beside a RESET-RX-WIN command is not: the command may be a repeat.)
            p.resync.on_regular_traffic();
        }
        if (is_arq_data(d.type)) {
            (rf.segment_ok ? rx_burst.data_frames[src].good
                           : rx_burst.data_frames[src].damaged) += 1;
            rx_burst.data_bytes[src] += rf.length;
        }
        const auto receive_data = [&](arq_receiver& rx) {
            const uint64_t before = rx.counters().segment_bytes_received;
            const uint64_t duplicates = rx.counters().duplicates;
            const uint64_t advances = rx.counters().lwe_advances;
            const bool taken = rx.on_data(d, rf.segment_ok);
            counters.arq_bytes_received += rx.counters().segment_bytes_received - before;
            count_service(p.service_from_s,
                          rx.counters().segment_bytes_received - before,
                          rx_burst.mode.value_or(cfg.mode));
            // Written down before its C_PDU (if it completes one) or our ack leaves.
            if (journaling() && taken &&
                (rx.counters().duplicates == duplicates ||
                 rx.counters().lwe_advances != advances))
                journal_frame(p, d, rf.segment_ok);
        };
        switch (d.type) {
        case dpdu_type::data_only:
            receive_data(p.rx);
            break;
        case dpdu_type::data_ack:
            receive_data(p.rx);
            on_ack(p, ack_of(d), false);
            acked[src].first = true;
            break;
        case dpdu_type::ack_only:
            on_ack(p, ack_of(d), false);
            acked[src].first = true;
            break;
        case dpdu_type::expedited_data_only:
            receive_data(p.rx_exp);
            break;
        case dpdu_type::expedited_ack_only:
            on_ack(p, ack_of(d), true);
            acked[src].second = true;
            break;
        default:
            break;
        }
    }
    rx_burst.heard.insert(heard.begin(), heard.end());
    if (!std::isnan(info.snr_db)) {
        rx_burst.snr_db = info.snr_db;
        rx_burst.snr_db_recent = info.snr_db_recent;
        rx_burst.mode = info.mode;
    }
    if (info.burst_continues)
        receiving_until = now + cfg.max_transmission_s;
    else
        end_received_burst();
    // Complete C_PDUs, at once: a piece's data need not wait for the burst's end.
    for (uint32_t src : heard) {
        peer_state& p = peer(src);
        p.consecutive_timeouts = 0;
        note_activity(src, now);
        for (auto& c : p.rx_exp.take_delivered())
            on_arq_cpdu(src, c, true);
        for (auto& c : p.rx.take_delivered())
            on_arq_cpdu(src, c, false);
    }
    nonarq_rx.poll(now);
    for (auto& d : nonarq_rx.take_delivered())
        on_non_arq_delivery(d);
}

void node_engine::impl::end_received_burst()
{
    counters.bursts_received += 1;
    deframer.end_of_burst();
    receiving_until = -inf;
    // The burst's unreadable bytes, as D_PDUs of its sender's mean size (one sender of
    // data only: with several, whose they were is unknown).
    const uint64_t junk = deframer.counters().junk_bytes - junk_counted;
    junk_counted = deframer.counters().junk_bytes;
    if (junk > 0 && rx_burst.data_frames.size() == 1) {
        auto& [src, frames] = *rx_burst.data_frames.begin();
        const unsigned read = frames.good + frames.damaged;
        if (read > 0 && rx_burst.data_bytes[src] > 0)
            frames.unreadable = unsigned(
                std::ceil(double(junk) * read / double(rx_burst.data_bytes[src])));
    }
    // The modem's SNR of the whole burst (its last piece's report) goes to the rate
    // policy of each peer that sent connection D_PDUs in it, as covering the burst.
    const double span = now - rx_burst_began;
    if (!std::isnan(rx_burst.snr_db))
        for (uint32_t src : rx_burst.snr_reported)
            report_snr(peer(src),
                       rx_burst.snr_db,
                       rx_burst.snr_db_recent,
                       rx_burst.mode,
                       span,
                       rx_burst.data_frames[src]);
    if (rx_burst.snr_reported.empty() && !std::isnan(rx_burst.snr_db)) {
        // No D_PDU header of the burst survived (or none was for us): a burst too damaged
        // to name its sender still says how the channel is, and a link that loses every
        // header must step down all the same. It is the peer's we await, if one alone;
        // awaiting none, the one linked peer's, if one alone.
        peer_state *awaited = nullptr, *linked = nullptr;
        size_t awaiting = 0, linked_peers = 0;
        for (auto& [addr, p] : peers) {
            if (!p->policy || !link_up(addr))
                continue;
            ++linked_peers;
            linked = p.get();
            if (p->awaiting_response) {
                awaited = p.get();
                ++awaiting;
            }
        }
        peer_state* from = awaiting == 1                        ? awaited
                           : awaiting == 0 && linked_peers == 1 ? linked
                                                                : nullptr;
        if (from) {
            const modem_mode advised = from->policy->recommended();
            report_snr(
                *from, rx_burst.snr_db, rx_burst.snr_db_recent, rx_burst.mode, span);
            counters.snr_reports_unattributed += 1;
            // Its sender waits for an answer that will not come: answer (a repeated
            // ack) now, so the advice for a more robust mode reaches it before it sends
            // another whole transmission in the mode that just failed.
            if (!from->awaiting_response && from->resync.synced() &&
                less_robust(advised, from->policy->recommended())) {
                from->rx.ack_again();
                counters.answers_unattributed += 1;
            }
        }
    }
    for (uint32_t src : rx_burst.heard) {
        peer_state& p = peer(src);
        if (!p.awaiting_response || burst_began_while_asking(p))
            continue; // the answer to our last burst is still to come
        if (p.drc)
            p.drc->on_peer_answered();
        end_exchange(p, rx_burst.acked[src].first, rx_burst.acked[src].second);
    }
    turn_held_until = -inf; // whoever spoke, the turn's answer is no longer awaited
    // A peer that served another node alone in this burst has turned to it; one that
    // sent us data has turned (back) to us. So has one that serves us in turn and sent
    // another node acknowledgements alone, nothing for us: that is how it turns to a
    // node it has no data for.
    const bool turns_by_acks = cfg.turns_by_acknowledgement &&
                               cfg.exchange_bound_per_turn &&
                               std::isfinite(cfg.serve_in_turn_s);
    for (uint32_t src : rx_burst.addressed_others) { // served_others among them
        auto it = peers.find(src);
        if (it == peers.end())
            continue;
        peer_state& p = *it->second;
        const bool acked_another =
            turns_by_acks && p.serves_us && link_up(src) && !rx_burst.heard.count(src);
        if (!rx_burst.served_others.count(src) && !acked_another)
            continue;
        p.turned_away = !rx_burst.sent_us_data.count(src);
        if (p.turned_away)
            p.turned_away_at = now;
        if (p.turned_away && link_up(src))
            note_activity(src, now); // alive, and serving another: the link waits
    }
    for (uint32_t src : rx_burst.sent_us_data) {
        auto it = peers.find(src);
        if (it != peers.end()) {
            peer_state& p = *it->second;
            p.turned_away = false;
            p.serves_us = p.serves_us || link_up(src);
            p.last_data_burst_s = air_time(timing(rx_burst.mode.value_or(cfg.mode)),
                                           rx_burst.data_bytes[src]);
            const double bound = cfg.channel_access.network_burst_s;
            if (!cfg.network_from_peer_bursts || p.last_data_burst_s < bound / 2 ||
                p.last_data_burst_s > bound)
                p.net_bound_bursts = 0;
            else if (++p.net_bound_bursts >= 2)
                peer_kept_network_at = now;
        }
    }
    // Whether it has data for us: its call or its data say so; a burst of its to us
    // alone without data says it has none (one that served another says nothing).
    for (uint32_t src : rx_burst.link_requested)
        peer(src).sends_to_us = true;
    for (uint32_t src : rx_burst.heard) {
        peer_state& p = peer(src);
        if (rx_burst.sent_us_data.count(src))
            p.sends_to_us = true;
        else if (!rx_burst.served_others.count(src) &&
                 !rx_burst.link_requested.count(src))
            p.sends_to_us = false;
    }
    // Serving in turn, a burst to us alone from a peer that has turned away from us
    // before turns to us, though it carries no data (it gives us our turn to send):
    // we answer it at once, and wait for it to turn back to us again.
    if (cfg.exchange_bound_per_turn && std::isfinite(cfg.serve_in_turn_s))
        for (uint32_t src : rx_burst.heard) {
            auto it = peers.find(src);
            if (it == peers.end() || rx_burst.addressed_others.count(src) ||
                rx_burst.sent_us_data.count(src) || !link_up(src) ||
                it->second->turned_away_at == -inf)
                continue;
            it->second->turned_away = false;
            it->second->serves_us = true;
        }
    // A burst to us alone asks us alone, whatever an earlier one beside another node
    // asked: we answer it at once (a hub's turn to us by its acknowledgement alone went
    // unanswered, and the hub gave us no more turns). So does one with data for us
    // after a call accepted beside another's: the hub serves us now.
    for (uint32_t src : rx_burst.heard)
        if (!rx_burst.addressed_others.count(src) ||
            (cfg.accepted_beside_others_contends && rx_burst.sent_us_data.count(src)))
            peer(src).asked_beside_others = false;
    // The burst asked another node for an answer, and us for none with data.
    const auto asked_another_too = [&](uint32_t src) {
        return rx_burst.served_others.count(src) && !rx_burst.sent_us_data.count(src);
    };
    for (uint32_t src : rx_burst.link_requested)
        peer(src).asked_beside_others = asked_another_too(src);
    // A burst that accepts our call and asks another node for an answer too (accepts
    // its call as well, or serves it): each caller would follow it at once with its
    // data, and the two would collide. We contend.
    if (cfg.accepted_beside_others_contends && network_in_use())
        for (uint32_t src : rx_burst.link_accepted)
            if (asked_another_too(src))
                peer(src).asked_beside_others = true;
    // Serving in turn, a burst with acknowledgements alone for us and for another node
    // turns to one of us, and neither can tell which: both answering at once would
    // collide, so we answer after a back-off.
    if (cfg.exchange_bound_per_turn && std::isfinite(cfg.serve_in_turn_s))
        for (uint32_t src : rx_burst.addressed_others) {
            auto it = peers.find(src);
            if (it != peers.end() && !rx_burst.sent_us_data.count(src) &&
                !rx_burst.served_others.count(src) &&
                !rx_burst.link_requested.count(src) &&
                it->second->last_heard >= rx_burst_began && link_up(src))
                it->second->asked_beside_others = true;
        }
    break_link_of_peer_that_did_not_wait();
    note_pair_burst();
    rx_burst = burst_in_progress();
}

void node_engine::impl::note_pair_burst()
{
    // A gap a contender could use, or a third station, ends the pair's hold.
    const auto& ca = cfg.channel_access;
    std::set<uint32_t> both = pair_sources;
    both.insert(rx_burst.sources.begin(), rx_burst.sources.end());
    if (pair_since == -inf || both.size() > 2 ||
        carrier_now.began - pair_last_end >= ca.idle_holdoff_s + ca.backoff_min_s) {
        pair_since = carrier_now.began;
        both = rx_burst.sources;
    }
    pair_sources = std::move(both);
    pair_last_end = now;
}

void node_engine::impl::break_link_of_peer_that_did_not_wait()
{
    // A peer that knows of the network waits contention_wait_max for our answer
    // before it repeats (answer_contends); one that does not repeats at once.
    if (!yielding || rx_burst_began - yielding_since >= contention_wait_max() ||
        !network_in_use())
        return;
    for (uint32_t src : rx_burst.sent_us_data) {
        if (!link_up(src) || has_expedited_work(src))
            continue;
        // Only where a collision is all we know of the others: a peer that has heard
        // them as we have waits for contended answers, and a repeat of its comes from
        // its own count of the exchange, not from ignorance.
        bool heard_others = false;
        for (auto& [addr, t] : stations_heard)
            heard_others =
                heard_others || (addr != src && now - t <= cfg.network_memory_s);
        if (heard_others || cfg.network_assumed)
            continue;
        cas.release(
            src, physical_link_break_reason::higher_priority_link_request_pending, now);
        // Its next call would come at once, with its BREAK CONFIRM: the waiting
        // stations get the length of a contention to call first.
        cas.refuse_requests_until(src, now + contention_wait_max());
        peer(src).made_way_at = now;
        counters.links_yielded += 1;
        yielding = false;
        // It goes at once, as the answer the peer awaits: contending, it would lose
        // the channel to the peer's next repeat.
        break_at_once = true;
    }
}

void node_engine::impl::report_snr(peer_state& p,
                                   double snr_db,
                                   double snr_db_recent,
                                   const std::optional<modem_mode>& mode,
                                   double span_s,
                                   const burst_frames& frames)
{
    if (!p.policy)
        return;
    p.policy->on_snr_report(
        snr_db, mode ? *mode : p.drc->rx_mode(), now, span_s, frames, snr_db_recent);
    p.drc->advise_rx(p.policy->recommended(), now);
}

bool node_engine::impl::is_arq_data(dpdu_type t)
{
    return t == dpdu_type::data_only || t == dpdu_type::data_ack ||
           t == dpdu_type::expedited_data_only;
}

bool node_engine::impl::burst_began_while_asking(const peer_state& p) const
{
    double asked_until = p.asked.until;
    if (p.asked.transmission == counters.transmissions)
        asked_until = std::max(asked_until, modem_busy_until); // may still be on the air
    return rx_burst_began < asked_until;
}

void node_engine::impl::count_service(double& service_s,
                                      size_t bytes,
                                      const modem_mode& mode) const
{
    service_s += 8.0 * double(bytes) / timing(mode).bit_rate;
}

void node_engine::impl::on_ack(peer_state& p, const arq_ack& a, bool expedited)
{
    auto& sender = expedited ? p.tx_exp : p.tx;
    auto& flights = expedited ? p.flights_exp : p.flights;
    const uint64_t answered = !burst_began_while_asking(p)
                                  ? arq_sender::every_transmission
                              : expedited ? p.asked.expedited_before
                                          : p.asked.regular_before;
    const auto confirmed = sender.on_ack(a, answered);
    const auto outcome = sender.take_ack_outcome();
    if (outcome.frames > 0)
        count_service(p.service_to_s,
                      outcome.segment_bytes * (outcome.frames - outcome.lost_frames) /
                          outcome.frames,
                      tx_mode_for(&p));
    const size_t overhead = frame_overhead(
        expedited ? dpdu_type::expedited_data_only : dpdu_type::data_only, p.address);
    p.segments.on_outcome(outcome.frames,
                          outcome.segment_bytes + outcome.frames * overhead,
                          outcome.lost_frames);
    for (uint64_t h : confirmed) {
        auto it = flights.find(h);
        if (it == flights.end())
            continue;
        if (it->second.from_client) {
            const updu_request& r = it->second.request;
            switch (r.service.delivery_confirmation) {
            case sis_delivery_confirmation::node:
                confirm(r);
                break;
            case sis_delivery_confirmation::client:
                if (answered_early(p, r))
                    break;
                if (p.awaiting_client.size() >= max_awaiting_client_confirm) {
                    reject(p.awaiting_client.front(),
                           sis_unidata_rejected_reason::unknown);
                    p.awaiting_client.pop_front();
                }
                p.awaiting_client.push_back(r);
                break;
            default:
                break;
            }
        }
        flights.erase(it);
    }
}

} // namespace dl
} // namespace hfstack
} // namespace gr
