/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The STANAG 5066 node engine: composition of the sub-layer pieces. See node_engine.h
 * and docs/node-design.md. */
#include "node_engine_impl.h"

#include "cpdu.h"
#include "phy/s4539_modes.h"
#include "segment_size_policy.h"
#include "spdu.h"

#include <unordered_map>
#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <tuple>

namespace gr {
namespace hfstack {
namespace dl {

bytes node_engine::impl::data_cpdu(const spdu& s)
{
    cpdu c;
    c.type = cpdu_type::data;
    c.spdu = encode(s);
    return encode(c);
}

spdu node_engine::impl::data_spdu(const updu_request& r)
{
    spdu s;
    s.type = spdu_type::data;
    s.priority = r.priority;
    s.source_sap = r.source_sap;
    s.destination_sap = r.destination_sap;
    // Client-level confirmation only means something where an ack comes back (ARQ).
    s.client_delivery_confirm_required =
        needs_arq(r.service) &&
        r.service.delivery_confirmation == sis_delivery_confirmation::client;
    s.updu = r.updu;
    return s;
}

phy::waveform_timing default_waveform_timing(const modem_mode& mode)
{
    if (auto w = phy::s4539_timing(to_string(mode)))
        return *w;
    const unsigned bps = data_rate_bps(mode.data_rate);
    const bool serial_tone = bps <= 2400;
    const char* interleaver = mode.interleaving == interleaving_long    ? "L"
                              : mode.interleaving == interleaving_short ? "S"
                              : serial_tone                             ? "Z"
                                                                        : "US";
    if (auto w = phy::s4539_timing(std::to_string(bps) + interleaver))
        return *w;
    // Table C-5 rates STANAG 4539 lacks (3600, 7200 bps): a linear model with the
    // serial-tone preamble and interleaver figures.
    phy::waveform_timing w;
    w.bit_rate = bps ? double(bps) : 2400.0;
    const double block_s = mode.interleaving == interleaving_long ? 4.8 : 0.6;
    w.preamble_s = block_s;
    w.tail_s = mode.interleaving == interleaving_none ? 0.0 : block_s;
    return w;
}

const char* to_string(phy_event e)
{
    switch (e) {
    case phy_event::tx_started:
        return "tx_started";
    case phy_event::tx_finished:
        return "tx_finished";
    case phy_event::carrier_on:
        return "carrier_on";
    case phy_event::carrier_off:
        return "carrier_off";
    }
    return "unknown";
}

std::vector<std::pair<std::string, double>> counter_list(const node_counters& c)
{
    return {
        { "transmissions", double(c.transmissions) },
        { "bytes_sent", double(c.bytes_sent) },
        { "dpdus_sent", double(c.dpdus_sent) },
        { "air_time_s", c.air_time_s },
        { "bursts_received", double(c.bursts_received) },
        { "bytes_received", double(c.bytes_received) },
        { "dpdus_received", double(c.dpdus_received) },
        { "dpdus_not_for_us", double(c.dpdus_not_for_us) },
        { "header_crc_errors", double(c.header_crc_errors) },
        { "segment_crc_errors", double(c.segment_crc_errors) },
        { "junk_bytes", double(c.junk_bytes) },
        { "arq_bytes_received", double(c.arq_bytes_received) },
        { "arq_segments_sent", double(c.arq_segments_sent) },
        { "arq_retransmissions", double(c.arq_retransmissions) },
        { "response_timeouts", double(c.response_timeouts) },
        { "resets_sent", double(c.resets_sent) },
        { "resets_received", double(c.resets_received) },
        { "warnings_sent", double(c.warnings_sent) },
        { "warnings_received", double(c.warnings_received) },
        { "snr_reports_unattributed", double(c.snr_reports_unattributed) },
        { "answers_unattributed", double(c.answers_unattributed) },
        { "rate_step_ups", double(c.rate_step_ups) },
        { "rate_step_downs_snr", double(c.rate_step_downs_snr) },
        { "rate_step_downs_held", double(c.rate_step_downs_held) },
        { "rate_step_downs_retx", double(c.rate_step_downs_retx) },
        { "rate_step_downs_unanswered", double(c.rate_step_downs_unanswered) },
        { "rate_probes", double(c.rate_probes) },
        { "data_with_link_request", double(c.data_with_link_request) },
        { "dpdus_dropped_unsynced", double(c.dpdus_dropped_unsynced) },
        { "link_setups", double(c.link_setups) },
        { "link_failures", double(c.link_failures) },
        { "links_down", double(c.links_down) },
        { "links_yielded", double(c.links_yielded) },
        { "exchanges_yielded", double(c.exchanges_yielded) },
        { "turns_served", double(c.turns_served) },
        { "collisions_heard", double(c.collisions_heard) },
        { "turnaround_calls", double(c.turnaround_calls) },
        { "clients_connected", double(c.clients_connected) },
        { "clients_accepted", double(c.clients_accepted) },
        { "updus_accepted", double(c.updus_accepted) },
        { "updus_rejected", double(c.updus_rejected) },
        { "ttl_expired", double(c.ttl_expired) },
        { "ttl_awaiting_verdict", double(c.ttl_awaiting_verdict) },
        { "updus_discarded", double(c.updus_discarded) },
        { "updus_confirmed", double(c.updus_confirmed) },
        { "updus_delivered", double(c.updus_delivered) },
        { "updus_undeliverable", double(c.updus_undeliverable) },
        { "non_arq_discarded", double(c.non_arq_discarded) },
        { "deliveries_owed", double(c.deliveries_owed) },
        { "deliveries_repeated", double(c.deliveries_repeated) },
        { "deliveries_unsettled_dropped", double(c.deliveries_unsettled_dropped) },
        { "queued_updus", double(c.queued_updus) },
        { "queued_bytes", double(c.queued_bytes) },
        { "links_up", double(c.links_up) },
    };
}

// ------------------------------------------------------------------------- impl

updu_queue_limits node_engine::impl::queue_limits(const node_config& c)
{
    updu_queue_limits q = c.queue;
    if (q.flow_off_bytes == 0) {
        const auto w = c.timing ? c.timing(c.mode)
                                : waveform_timing_of(c.s5069_bandwidth_khz, c.mode);
        q.flow_off_bytes = std::max<size_t>(
            64 * 1024, 2 * phy::max_bytes_within(w, c.max_transmission_s));
    }
    if (q.flow_on_bytes == 0)
        q.flow_on_bytes = q.flow_off_bytes / 2;
    return q;
}

cas_config node_engine::impl::without_idle_timers(cas_config c)
{
    c.idle_timeout = inf;
    c.first_data_timeout = inf;
    return c;
}

non_arq_receiver_config node_engine::impl::receiver_config()
{
    non_arq_receiver_config r;
    // Every SAP decides for itself: incomplete C_PDUs come out and are dropped
    // unless their SAP asked for non-ARQ delivery with errors.
    r.deliver_with_errors = true;
    return r;
}

node_engine::impl::peer_state& node_engine::impl::peer(uint32_t addr)
{
    auto it = peers.find(addr);
    if (it != peers.end())
        return *it->second;
    auto p = std::make_unique<peer_state>(cfg, addr, segment_for(cfg.mode));
    rate_change_config rc = cfg.rate_change;
    rc.own_address = cfg.address;
    rc.peer_address = addr;
    rc.initial_mode = cfg.mode;
    // The timer runs from the moment the MANAGEMENT D_PDU is handed over, which may
    // open a burst of up to max_transmission_s, and the answer may follow the peer's
    // own burst of that length.
    rc.ack_timeout += 2 * cfg.max_transmission_s;
    if (!cfg.rate_adaptation) {
        // A fixed-mode node refuses every change ("not equipped") and advises none.
        rc.supported = { cfg.mode };
        rc.follow_advisory = false;
    } else {
        rc.supported.insert(cfg.mode);
    }
    p->drc = std::make_unique<rate_change>(rc);
    if (cfg.rate_adaptation) {
        rate_policy_config pc = cfg.rate_policy;
        p->policy = std::make_unique<rate_policy>(pc);
        p->policy->set_current(cfg.mode, now);
    }
    return *peers.emplace(addr, std::move(p)).first->second;
}

modem_mode node_engine::impl::tx_mode_for(const peer_state* p) const
{
    return p ? p->drc->tx_mode() : cfg.mode;
}

// ------------------------------------------------------------------------- engine

uint32_t derived_backoff_seed(uint32_t address, uint64_t salt)
{
    return 0x5066u ^ (address * 2654435761u) ^
           uint32_t((salt * 0x9E3779B97F4A7C15ull) >> 32);
}

namespace {
// The modes of a node at a STANAG 5069 bandwidth (wideband_modes.h): WNs of it, the
// ladder with US, S or L and autobaud. Throws std::invalid_argument naming the problem.
void check_s5069_modes(const node_config& c)
{
    const unsigned bw = c.s5069_bandwidth_khz;
    const std::string name = waveform_name(bw, c.mode);
    auto fail = [](const std::string& what) {
        throw std::invalid_argument("node_config." + what);
    };
    if (!s5069_mode_of(bw, c.mode))
        fail("mode " + name + " is no STANAG 5069 mode");
    if (c.rate_adaptation && !is_valid_mode(c.mode))
        fail(
            "mode " + name +
            " cannot be used with rate_adaptation: STANAG 5069 rate adaptation runs with "
            "the US, S or L interleaver; set rate_adaptation=false or pick one");
    if (c.rate_adaptation && !c.rate_change.autobaud)
        fail("mode " + name +
             ": STANAG 5069 rate adaptation needs rate_change.autobaud=true (a data rate "
             "change procedure cannot announce STANAG 5069 modes)");
    if (c.answer_mode &&
        !(is_valid_mode(*c.answer_mode) && s5069_mode_of(bw, *c.answer_mode)))
        fail("answer_mode " + waveform_name(bw, *c.answer_mode) +
             " must be a STANAG 5069 mode at " + std::to_string(bw) +
             " kHz with the US, S or L interleaver");
}

node_config validated(node_config c)
{
    auto fail = [](const std::string& what) {
        throw std::invalid_argument("node_config." + what);
    };
    if (c.address > node_address_mask)
        fail("address must be an individual node address (0.0.0.0-15.255.255.255)");
    for (uint32_t g : c.groups)
        if ((g & group_address_flag) == 0 || g > broadcast_address)
            fail("groups: " + address_to_string(g) +
                 " is not a group address (16.0.0.0-31.255.255.255)");
    if (c.mtu < 1 || (!c.broadcast_only && c.mtu > default_mtu) ||
        c.mtu > broadcast_only_max_mtu)
        fail("mtu must be 1..2048 (up to 4096 on a broadcast-only node)");
    if (c.arq_window < 1 || c.arq_window > max_window(c.large_windows))
        fail(c.large_windows ? "arq_window must be 1..32768"
                             : "arq_window must be 1..128 "
                               "(up to 32768 with large_windows)");
    c.cas.large_windows = c.large_windows;
    if (c.segment_size > max_segment_size)
        fail("segment_size must be 0 (by data rate) or 1..1023");
    if (c.non_arq_segment_size > max_segment_size)
        fail("non_arq_segment_size must be 0 (as ARQ) or 1..1023");
    if (c.non_arq_repeats > 15)
        fail("non_arq_repeats must be 0..15");
    if (!(c.max_transmission_s > 0) || c.max_transmission_s > max_eot_seconds)
        fail("max_transmission_s must be in (0, 127.5]");
    if (!(c.segment_probe_s > 0) || !std::isfinite(c.segment_probe_s))
        fail("segment_probe_s must be a positive number of seconds");
    if (!(c.unanswered_probe_s >= 0) || !std::isfinite(c.unanswered_probe_s))
        fail("unanswered_probe_s must be 0 (off) or a positive number of seconds");
    if (!(c.segment_prior_ber >= 0) || !(c.segment_prior_ber < 0.5))
        fail("segment_prior_ber must be in [0, 0.5)");
    if (!(c.segment_probe_ber >= 0) || !(c.segment_probe_ber < 0.5))
        fail("segment_probe_ber must be in [0, 0.5)");
    if (!(c.turnaround_s >= 0) || !(c.response_margin_s >= 0) || !(c.link_retry_s >= 0) ||
        !(c.non_arq_window_margin_s >= 0))
        fail("turnaround_s, response_margin_s, link_retry_s and non_arq_window_margin_s "
             "must be >= 0");
    if (!(c.serve_in_turn_s > 0))
        fail("serve_in_turn_s must be a positive number of seconds (inf: off)");
    if (!(c.sender_turn_min_burst_s >= 0))
        fail("sender_turn_min_burst_s must be >= 0");
    if (!(c.ack_turn_answer_wait_s >= 0) || std::isinf(c.ack_turn_answer_wait_s))
        fail("ack_turn_answer_wait_s must be a number of seconds, 0 or more");
    if (!(c.serve_in_turn_catch_up_s >= 0) || std::isinf(c.serve_in_turn_catch_up_s))
        fail("serve_in_turn_catch_up_s must be a number of seconds, 0 or more");
    if (!(c.serve_in_turn_lag_max_s >= 0) || std::isinf(c.serve_in_turn_lag_max_s))
        fail("serve_in_turn_lag_max_s must be a number of seconds, 0 or more");
    if (!(c.serve_in_turn_service_floor >= 0 && c.serve_in_turn_service_floor <= 1))
        fail("serve_in_turn_service_floor must be between 0 and 1");
    if (!(c.serve_in_turn_alike_turns >= 0) || std::isinf(c.serve_in_turn_alike_turns))
        fail("serve_in_turn_alike_turns must be a number of turns, 0 or more");
    if (!(c.network_round_s > 0))
        fail("network_round_s must be a positive number of seconds (inf: off)");
    if (!(c.serve_in_turn_round_s > 0))
        fail("serve_in_turn_round_s must be a positive number of seconds (inf: off)");
    if (c.max_response_timeouts < 1)
        fail("max_response_timeouts must be at least 1");
    const bool announceable =
        is_valid_mode(c.mode) && data_rate_bps(c.mode.data_rate) != 0;
    if (c.s5069_bandwidth_khz)
        check_s5069_modes(c);
    else if (!announceable && !phy::s4539_mode_by_name(to_string(c.mode)))
        fail("mode is not a valid data rate / interleaving pair");
    // A data rate change names the new mode by Table C-5/C-6 codes, which have no App C
    // interleaver other than S and L, nor 12800 bps: such a mode cannot be left or
    // returned to, so it is a fixed mode only.
    if (c.rate_adaptation && !announceable && !c.s5069_bandwidth_khz)
        fail("mode " + to_string(c.mode) +
             " cannot be used with rate_adaptation: a data rate change " +
             "announces only STANAG 5066 Table C-6 interleavers (S, L, 4800U) up to 9600 "
             "bps; " +
             "set rate_adaptation=false or pick such a mode");
    if (c.answer_mode && !is_valid_mode(*c.answer_mode) && !c.s5069_bandwidth_khz)
        fail("answer_mode " + to_string(*c.answer_mode) +
             " must be a mode a data rate change can announce (75-9600 bps, S or L)");
    if (c.rate_adaptation) {
        try {
            rate_policy check(c.rate_policy); // throws naming what is wrong
        } catch (const std::invalid_argument& e) {
            fail(std::string(e.what()));
        }
    }
    c.cas.own_address = c.address;
    c.cas.broadcast_only = c.broadcast_only;
    if (c.channel_access.seed == 0)
        c.channel_access.seed = derived_backoff_seed(c.address);
    return c;
}
} // namespace

node_engine::node_engine(node_config config)
    : d_cfg(validated(std::move(config))), d(std::make_unique<impl>(d_cfg))
{
}

node_engine::~node_engine() = default;

void node_engine::on_client_connected(uint32_t client, double now, bool reports_written)
{
    d->begin_input(now);
    d->ensure_client(client);
    if (reports_written)
        d->clients_reporting_writes.insert(client);
    d->service();
}

void node_engine::on_delivery_settled(uint64_t delivery, bool written, double now)
{
    d->begin_input(now);
    d->settle_delivery(delivery, written);
    d->service();
}

void node_engine::on_client_closed(uint32_t client, double now)
{
    d->begin_input(now);
    d->clients_reporting_writes.erase(client);
    if (d->clients.erase(client)) {
        d->forget_client(client);
        d->supervision.on_closed(client);
    }
    d->service();
}

void node_engine::on_sis(uint32_t client, const sis_primitive& p, double now)
{
    d->begin_input(now);
    d->on_sis(client, p);
    d->service();
}

void node_engine::on_client_invalid(uint32_t client,
                                    const std::string& why,
                                    bool fatal,
                                    double now)
{
    d->begin_input(now);
    d->ensure_client(client);
    if (fatal)
        d->supervision.expel(client, sis_unbind_reason::too_many_invalid_primitives, why);
    else
        d->supervision.on_invalid(client, why, now);
    d->service();
}

void node_engine::on_burst(const uint8_t* data,
                           size_t size,
                           const burst_info& info,
                           double now)
{
    d->begin_input(now);
    d->on_burst(data, size, info);
    d->service();
}

void node_engine::on_phy_status(phy_event e, double now)
{
    d->begin_input(now);
    switch (e) {
    case phy_event::tx_started:
        d->modem_busy_until = now + d_cfg.max_transmission_s;
        break;
    case phy_event::tx_finished:
        d->modem_busy_until = -impl::inf;
        d->transmitting_until = now; // the real end, earlier or later than estimated
        for (auto& [addr, p] : d->peers)
            if (p->asked.transmission == d->counters.transmissions)
                p->asked.until = now;
        // Answers are timed from the real end of our burst when the modem reports it.
        d->hold_answers([&](const impl::peer_state& p) {
            return now + d->answer_wait(p, d->timing(d->tx_mode_for(&p)));
        });
        break;
    case phy_event::carrier_on:
        d->cs.on_carrier(true, now);
        d->carrier_began(now);
        break;
    case phy_event::carrier_off:
        d->cs.on_carrier(false, now);
        d->carrier_ended = now;
        d->carrier_finished(now);
        // An answer may have been in what we just heard: give the modem time to
        // deliver it before counting the peer as silent.
        d->hold_answers([&](const impl::peer_state&) {
            return now + d_cfg.turnaround_s + d_cfg.response_margin_s;
        });
        break;
    }
    d->service();
}

void node_engine::on_timer(double now)
{
    d->now = now;
    d->service();
}

node_actions node_engine::take_actions()
{
    d->journal_compact();
    node_actions a;
    std::swap(a, d->actions);
    return a;
}

size_t node_engine::restore_journal(const bytes& journal, double now)
{
    d->now = now;
    return d->restore_journal(journal);
}

double node_engine::next_deadline() const { return d->next_deadline_cache; }

node_counters node_engine::counters() const
{
    node_counters c = d->counters;
    for (auto& [addr, p] : d->peers) {
        c.arq_segments_sent +=
            p->tx.counters().new_segments + p->tx_exp.counters().new_segments;
        c.arq_retransmissions +=
            p->tx.counters().retransmissions + p->tx_exp.counters().retransmissions;
        if (p->policy) {
            const auto& r = p->policy->counters();
            c.rate_step_ups += r.step_ups;
            c.rate_step_downs_snr += r.step_downs_snr;
            c.rate_step_downs_held += r.step_downs_held;
            c.rate_step_downs_retx += r.step_downs_retx;
        }
        if (p->drc)
            c.rate_step_downs_unanswered += p->drc->counters().unanswered_step_downs;
    }
    c.header_crc_errors = d->deframer.counters().header_crc_errors;
    c.junk_bytes = d->deframer.counters().junk_bytes;
    c.queued_updus = d->queue.size();
    c.queued_bytes = d->queue.total_bytes();
    c.links_up = d->cas.up_peers().size();
    c.link_setups = d->cas.counters().link_setups;
    c.link_failures = d->cas.counters().link_failures;
    c.links_down = d->cas.counters().links_down;
    c.links_yielded += d->cas.counters().links_yielded;
    c.clients_connected = d->clients.size();
    return c;
}

std::vector<sap_binding> node_engine::bindings() const { return d->saps.bindings(); }

std::vector<link_status> node_engine::links() const
{
    std::vector<link_status> out;
    for (auto& [addr, p] : d->peers) {
        link_status l;
        l.peer = addr;
        l.state = d->cas.state(addr);
        l.tx_mode = p->drc ? p->drc->tx_mode() : d_cfg.mode;
        l.rx_mode = p->drc ? p->drc->rx_mode() : d_cfg.mode;
        out.push_back(l);
    }
    return out;
}

cas_link_state node_engine::link_state(uint32_t peer) const { return d->cas.state(peer); }

std::vector<uint32_t> node_engine::bound_clients() const
{
    std::vector<uint32_t> out;
    for (auto& b : d->saps.bindings())
        out.push_back(b.client);
    return out;
}

bool node_engine::transmitting(double now) const { return now < d->busy_until(); }

bool node_engine::channel_busy() const { return d->cs.carrier(); }

} // namespace dl
} // namespace hfstack
} // namespace gr
