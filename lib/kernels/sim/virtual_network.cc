/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "virtual_network.h"

#include "dl/wideband_modes.h"

#include "phy/transmission_time.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace gr {
namespace hfstack {
namespace sim {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

} // namespace

struct virtual_network::air_burst {
    dl::bytes data;
    dl::modem_mode mode;
    std::string mode_name; // as the modem names it (dl::waveform_name)
    double start = 0;      // at the transmitter
    double air_time_s = 0;
    phy::waveform_timing timing;
};

struct virtual_network::node_slot {
    dl::node_config cfg;
    std::unique_ptr<dl::node_engine> engine;
    uint64_t epoch = 0; // engine generation: tx status events of an older one are dropped
    uint64_t rx_epoch = 0;  // receptions made under an older one are lost
    uint64_t timer_gen = 0; // only the timer event carrying this generation is live
    double timer_time = inf;
    unsigned carrier = 0; // receptions whose carrier is on
    bool offline = false;
    std::vector<interval> busy; // own transmissions and receptions, for overlap checks
    std::vector<dl::client_message> messages;
    std::vector<dl::client_disconnect> disconnects;
    node_stats stats;
    dl::bytes journal; // with cfg.state_dir: what the node block would have on disk
};

radio_config ideal_radio()
{
    radio_config r;
    r.key_up_s = r.unkey_s = r.agc_settle_s = r.carrier_detect_s = r.rx_latency_s = 0;
    return r;
}

void validate(const radio_config& r)
{
    const std::pair<const char*, double> times[] = {
        { "key_up_s", r.key_up_s },         { "unkey_s", r.unkey_s },
        { "agc_settle_s", r.agc_settle_s }, { "carrier_detect_s", r.carrier_detect_s },
        { "rx_latency_s", r.rx_latency_s },
    };
    for (const auto& [name, value] : times)
        if (!(value >= 0) || !std::isfinite(value))
            throw std::invalid_argument(std::string("radio_config.") + name +
                                        " must be finite and >= 0");
}

uint64_t
path_seed(uint64_t channel_seed, uint64_t network_seed, uint64_t from, uint64_t to)
{
    return splitmix64(splitmix64(channel_seed ^ splitmix64(network_seed)) ^
                      ((from << 32) | to));
}

virtual_network::virtual_network(network_config config) : d_cfg(config)
{
    validate(d_cfg.radio);
}

virtual_network::~virtual_network() = default;

void virtual_network::check_node(size_t i, const char* what) const
{
    if (i >= d_nodes.size()) {
        std::ostringstream os;
        os << "virtual_network::" << what << ": no node " << i << " (" << d_nodes.size()
           << " nodes)";
        throw std::out_of_range(os.str());
    }
}

channel_config
virtual_network::derived(const channel_config& c, size_t from, size_t to) const
{
    channel_config d = c;
    d.seed = path_seed(c.seed, d_cfg.seed, from, to);
    return d;
}

size_t virtual_network::add_node(dl::node_config cfg)
{
    auto slot = std::make_unique<node_slot>();
    slot->engine = std::make_unique<dl::node_engine>(cfg);
    slot->cfg = std::move(cfg);
    const size_t n = d_nodes.size();
    d_nodes.push_back(std::move(slot));

    auto model = [&](size_t from, size_t to) {
        return std::make_shared<channel_model>(
            d_default_channel ? derived(*d_default_channel, from, to) : channel_config());
    };
    for (size_t from = 0; from < n; ++from)
        d_paths[from].push_back(model(from, n));
    d_paths.emplace_back();
    for (size_t to = 0; to <= n; ++to)
        d_paths[n].push_back(to == n ? nullptr : model(n, to));

    after_input(n);
    return n;
}

dl::node_engine& virtual_network::node(size_t i)
{
    check_node(i, "node");
    return *d_nodes[i]->engine;
}

const dl::node_engine& virtual_network::node(size_t i) const
{
    check_node(i, "node");
    return *d_nodes[i]->engine;
}

void virtual_network::set_channel(size_t from, size_t to, channel_config c)
{
    check_node(from, "set_channel");
    check_node(to, "set_channel");
    if (from == to)
        throw std::invalid_argument("virtual_network::set_channel: from == to");
    d_paths[from][to] = std::make_shared<channel_model>(c);
}

void virtual_network::set_channel_all(channel_config c)
{
    validate(c);
    for (size_t from = 0; from < d_nodes.size(); ++from)
        for (size_t to = 0; to < d_nodes.size(); ++to)
            if (from != to)
                d_paths[from][to] = std::make_shared<channel_model>(derived(c, from, to));
    d_default_channel = std::make_unique<channel_config>(c);
}

const channel_model& virtual_network::channel(size_t from, size_t to) const
{
    check_node(from, "channel");
    check_node(to, "channel");
    if (from == to)
        throw std::invalid_argument("virtual_network::channel: from == to");
    return *d_paths[from][to];
}

void virtual_network::client_send(size_t i, uint32_t client, const dl::sis_primitive& p)
{
    check_node(i, "client_send");
    d_nodes[i]->engine->on_sis(client, p, d_now);
    after_input(i);
}

void virtual_network::client_connect(size_t i, uint32_t client)
{
    check_node(i, "client_connect");
    d_nodes[i]->engine->on_client_connected(client, d_now);
    after_input(i);
}

void virtual_network::client_close(size_t i, uint32_t client)
{
    check_node(i, "client_close");
    d_nodes[i]->engine->on_client_closed(client, d_now);
    after_input(i);
}

std::vector<dl::client_message> virtual_network::take_client_messages(size_t i)
{
    check_node(i, "take_client_messages");
    std::vector<dl::client_message> out;
    out.swap(d_nodes[i]->messages);
    return out;
}

std::vector<dl::client_disconnect> virtual_network::take_client_disconnects(size_t i)
{
    check_node(i, "take_client_disconnects");
    std::vector<dl::client_disconnect> out;
    out.swap(d_nodes[i]->disconnects);
    return out;
}

void virtual_network::on_client_message(
    std::function<void(size_t, const dl::client_message&)> cb)
{
    d_client_cb = std::move(cb);
}

void virtual_network::on_transmission(
    std::function<void(size_t, const dl::node_transmission&)> cb)
{
    d_tx_cb = std::move(cb);
}

void virtual_network::on_reception(
    std::function<void(size_t, const dl::bytes&, double)> cb)
{
    d_rx_cb = std::move(cb);
}

void virtual_network::on_phy_status(std::function<void(size_t, dl::phy_event)> cb)
{
    d_phy_cb = std::move(cb);
}

void virtual_network::phy_status(size_t i, dl::phy_event e)
{
    if (d_phy_cb)
        d_phy_cb(i, e);
    d_nodes[i]->engine->on_phy_status(e, d_now);
}

void virtual_network::push(
    double t, event_kind k, size_t node, uint64_t tag, dl::phy_event status)
{
    d_events.push(event{ t, d_seq++, k, status, uint32_t(node), tag });
}

void virtual_network::call_at(double t, std::function<void()> fn)
{
    const uint64_t id = d_next_call++;
    d_calls.emplace(id, std::move(fn));
    push(std::max(t, d_now), event_kind::call, 0, id);
}

double virtual_network::next_event_time() const
{
    return d_events.empty() ? inf : d_events.top().time;
}

void virtual_network::run_until(double t)
{
    while (!d_events.empty() && d_events.top().time <= t) {
        const event e = d_events.top();
        d_events.pop();
        process(e);
    }
    if (t > d_now)
        d_now = t;
}

bool virtual_network::run_until(const std::function<bool()>& done, double t_max)
{
    if (done())
        return true;
    while (!d_events.empty() && d_events.top().time <= t_max) {
        const event e = d_events.top();
        d_events.pop();
        process(e);
        if (done())
            return true;
    }
    if (t_max > d_now)
        d_now = t_max;
    return done();
}

namespace {
const char* kind_name(int k)
{
    switch (k) {
    case 0:
        return "timer";
    case 1:
        return "tx status";
    case 2:
        return "carrier on";
    case 3:
        return "carrier off";
    case 5:
        return "call_at";
    case 6:
        return "burst piece delivery";
    default:
        return "burst delivery";
    }
}
} // namespace

void virtual_network::process(const event& e)
{
    if (e.time == d_same_time) {
        if (++d_same_time_events > max_events_at_one_time) {
            std::ostringstream os;
            os << "virtual_network: more than " << max_events_at_one_time
               << " events at virtual time " << e.time
               << " s (livelock?); the last was a " << kind_name(int(e.kind)) << " event";
            if (e.kind != event_kind::call)
                os << " for node " << e.node << " (address "
                   << d_nodes[e.node]->cfg.address << ")";
            if (e.kind == event_kind::timer)
                os << " whose engine keeps asking for on_timer at next_deadline() "
                   << d_nodes[e.node]->engine->next_deadline();
            throw std::runtime_error(os.str());
        }
    } else {
        d_same_time = e.time;
        d_same_time_events = 1;
    }
    if (e.time > d_now)
        d_now = e.time;
    ++d_stats.events;

    if (e.kind == event_kind::call) {
        auto it = d_calls.find(e.tag);
        std::function<void()> fn = std::move(it->second);
        d_calls.erase(it);
        fn();
        return;
    }
    const size_t i = e.node;
    node_slot& n = *d_nodes[i];
    switch (e.kind) {
    case event_kind::timer:
        if (e.tag != n.timer_gen)
            return; // replaced or cancelled
        n.timer_time = inf;
        n.engine->on_timer(d_now);
        after_input(i);
        return;

    case event_kind::tx_status:
        if (e.tag != n.epoch)
            return;
        phy_status(i, e.status);
        after_input(i);
        return;

    case event_kind::carrier_on: {
        auto it = d_receptions.find(e.tag);
        if (it == d_receptions.end() || it->second.rx_epoch != n.rx_epoch)
            return;
        it->second.carrier_seen = true;
        if (n.carrier++ == 0) {
            ++n.stats.carrier_on;
            phy_status(i, dl::phy_event::carrier_on);
            after_input(i);
        }
        return;
    }

    case event_kind::carrier_off: {
        auto it = d_receptions.find(e.tag);
        if (it == d_receptions.end() || !it->second.carrier_seen ||
            it->second.rx_epoch != n.rx_epoch)
            return;
        it->second.carrier_seen = false;
        if (n.carrier > 0 && --n.carrier == 0) {
            phy_status(i, dl::phy_event::carrier_off);
            after_input(i);
        }
        return;
    }

    case event_kind::call:
        return; // handled above
    case event_kind::piece: {
        auto it = d_receptions.find(e.tag);
        if (it == d_receptions.end() || it->second.destroyed ||
            it->second.rx_epoch != n.rx_epoch)
            return; // the last delivery counts the loss
        deliver(i, it->second, false);
        return;
    }
    case event_kind::delivery: {
        auto it = d_receptions.find(e.tag);
        if (it == d_receptions.end())
            return;
        reception r = std::move(it->second);
        d_receptions.erase(it);
        if (r.rx_epoch != n.rx_epoch) {
            if (!r.destroyed) {
                ++n.stats.lost_other;
                ++d_stats.bursts_lost;
            }
            return;
        }
        if (r.destroyed) { // counted when it was destroyed
            if (r.pieces_delivered > 0) {
                // Pieces already handed on: the engine is told the burst ended, cut.
                dl::burst_info info;
                info.mode = r.burst->mode;
                info.snr_db = r.reports.whole_db;
                info.snr_db_recent = r.reports.recent_db;
                info.bytes_bad = true;
                n.engine->on_burst(dl::bytes(), info, d_now);
                after_input(i);
            }
            return;
        }
        deliver(i, r, true);
        return;
    }
    }
}

void virtual_network::deliver(size_t i, reception& r, bool last)
{
    node_slot& n = *d_nodes[i];
    const air_burst& b = *r.burst;
    if (!r.corrupted) {
        // Drawn at the first delivery: a path's bursts do not overlap, so its error
        // processes still run forward in time.
        r.data = b.data;
        const reception_errors got =
            r.path->receive(r.data.data(),
                            r.data.size(),
                            b.start + r.path->config().propagation_s,
                            b.timing.preamble_s,
                            b.timing.bit_rate,
                            b.timing.whole_units() ? b.timing.unit_s : 0.0);
        r.corrupted = true;
        r.reports = r.path->reported_snrs(
            b.mode_name, b.start + r.path->config().propagation_s, r.end - r.start);
        if (got.preamble_missed) {
            // The modem never acquired the burst: nothing is delivered, now or later
            // (the pieces and the delivery see it destroyed).
            r.destroyed = true;
            ++n.stats.lost_preamble;
            ++d_stats.bursts_lost;
            return;
        }
        r.bits_flipped = got.bits_flipped;
    }
    const size_t from = r.bytes_delivered();
    const size_t end = last ? r.data.size() : r.piece_ends.at(r.pieces_delivered++);
    const dl::bytes piece(r.data.begin() + long(from), r.data.begin() + long(end));
    if (last) {
        ++n.stats.bursts_delivered;
        n.stats.bytes_delivered += r.data.size();
        n.stats.bits_flipped += r.bits_flipped;
        ++d_stats.bursts_delivered;
        d_stats.bits_flipped += r.bits_flipped;
        if (d_rx_cb)
            d_rx_cb(i, r.data, d_now);
    }
    dl::burst_info info;
    info.mode = b.mode;
    info.snr_db = r.reports.whole_db;
    info.snr_db_recent = r.reports.recent_db;
    info.burst_continues = !last;
    n.engine->on_burst(piece, info, d_now);
    after_input(i);
}

void virtual_network::after_input(size_t i)
{
    apply_actions(i, d_nodes[i]->engine->take_actions());
    schedule_timer(i);
    drain_callbacks();
}

void virtual_network::apply_actions(size_t i, dl::node_actions&& a)
{
    node_slot& n = *d_nodes[i];
    for (auto& m : a.to_clients) {
        ++n.stats.client_messages;
        if (d_client_cb)
            d_pending_cb.emplace_back(i, m);
        n.messages.push_back(std::move(m));
    }
    for (auto& d : a.disconnects) {
        ++n.stats.client_disconnects;
        n.disconnects.push_back(std::move(d));
    }
    if (a.journal_rewrite)
        n.journal = std::move(a.journal);
    else
        n.journal.insert(n.journal.end(), a.journal.begin(), a.journal.end());
    for (auto& tx : a.transmissions)
        transmit(i, std::move(tx));
}

void virtual_network::schedule_timer(size_t i)
{
    node_slot& n = *d_nodes[i];
    const double d = n.engine->next_deadline();
    if (!(d < inf)) {
        if (n.timer_time < inf) {
            ++n.timer_gen; // cancel
            n.timer_time = inf;
        }
        return;
    }
    const double t = std::max(d, d_now);
    if (t == n.timer_time)
        return; // already scheduled
    ++n.timer_gen;
    n.timer_time = t;
    push(t, event_kind::timer, i, n.timer_gen);
}

void virtual_network::drain_callbacks()
{
    if (d_draining || d_pending_cb.empty())
        return;
    d_draining = true;
    try {
        // Callbacks may add more (a client answering a message); index, not iterators.
        for (size_t k = 0; k < d_pending_cb.size(); ++k) {
            const auto item = std::move(d_pending_cb[k]);
            if (d_client_cb)
                d_client_cb(item.first, item.second);
        }
    } catch (...) {
        d_pending_cb.clear();
        d_draining = false;
        throw;
    }
    d_pending_cb.clear();
    d_draining = false;
}

void virtual_network::transmit(size_t i, dl::node_transmission&& tx)
{
    node_slot& n = *d_nodes[i];
    const radio_config& radio = d_cfg.radio;
    const double start = d_now + radio.key_up_s;
    const double air = tx.air_time_s > 0 ? tx.air_time_s : 0.0;
    const double end = start + air;

    ++n.stats.transmissions;
    n.stats.bytes_sent += tx.burst.size();
    n.stats.air_time_s += air;
    ++d_stats.transmissions;
    if (d_cfg.report_tx_status) {
        push(start, event_kind::tx_status, i, n.epoch, dl::phy_event::tx_started);
        push(end, event_kind::tx_status, i, n.epoch, dl::phy_event::tx_finished);
    }
    if (d_tx_cb)
        d_tx_cb(i, tx);
    if (n.offline)
        return;

    auto burst = std::make_shared<air_burst>();
    burst->data = std::move(tx.burst);
    burst->mode = tx.mode;
    burst->start = start;
    burst->air_time_s = air;
    burst->mode_name = dl::waveform_name(n.cfg.s5069_bandwidth_khz, tx.mode);
    burst->timing = n.cfg.timing
                        ? n.cfg.timing(tx.mode)
                        : dl::waveform_timing_of(n.cfg.s5069_bandwidth_khz, tx.mode);

    auto destroy = [this](uint64_t id) {
        auto it = d_receptions.find(id);
        if (it == d_receptions.end() || it->second.destroyed)
            return;
        it->second.destroyed = true;
        ++d_nodes[it->second.to]->stats.collisions;
        ++d_stats.collisions;
    };
    auto prune = [this](std::vector<interval>& busy) {
        busy.erase(std::remove_if(busy.begin(),
                                  busy.end(),
                                  [this](const interval& v) { return v.end <= d_now; }),
                   busy.end());
    };
    auto overlaps = [](const interval& v, double s, double e) {
        return v.start < e && s < v.end;
    };

    // Half duplex: the transmitter hears nothing from keying up until it has switched
    // back to receive.
    const double deaf_from = d_now, deaf_until = end + radio.unkey_s;
    prune(n.busy);
    if (d_cfg.half_duplex) {
        for (const interval& v : n.busy)
            if (v.reception != 0 && overlaps(v, deaf_from, deaf_until))
                destroy(v.reception);
        n.busy.push_back(interval{ deaf_from, deaf_until, 0 });
    }

    for (size_t j = 0; j < d_nodes.size(); ++j) {
        if (j == i)
            continue;
        node_slot& rx = *d_nodes[j];
        if (rx.offline) {
            ++rx.stats.lost_other;
            ++d_stats.bursts_lost;
            continue;
        }
        const std::shared_ptr<channel_model>& path = d_paths[i][j];
        const double prop = path->config().propagation_s;
        const double s = start + prop, e = end + prop;
        if (path->drop_in_outage(s, e)) {
            ++rx.stats.lost_outage;
            ++d_stats.bursts_lost;
            continue;
        }
        const uint64_t id = d_next_reception++;
        reception r;
        r.burst = burst;
        r.path = path;
        r.from = i;
        r.to = j;
        r.start = s;
        r.end = e;
        r.rx_epoch = rx.rx_epoch;
        d_receptions.emplace(id, std::move(r));

        prune(rx.busy);
        bool hit = false;
        for (const interval& v : rx.busy) {
            if (!overlaps(v, s, e))
                continue;
            if (v.reception == 0) {
                hit = true; // the receiver is transmitting
            } else if (d_cfg.collisions) {
                hit = true;
                destroy(v.reception);
            }
        }
        if (hit) {
            destroy(id);
        } else if (burst->timing.preamble_s < radio.agc_settle_s) {
            d_receptions[id].destroyed = true; // acquisition failed: not a collision
            ++rx.stats.lost_other;
        }
        rx.busy.push_back(interval{ s, e, id });

        const double detect = radio.agc_settle_s + radio.carrier_detect_s;
        if (air > detect) {
            push(s + detect, event_kind::carrier_on, j, id);
            push(e, event_kind::carrier_off, j, id);
        }
        if (radio.deliver_per_block) {
            auto pieces = phy::decoding_schedule(burst->timing, burst->data.size());
            pieces.pop_back(); // the last one is the delivery
            for (const phy::decoded_piece& p : pieces) {
                d_receptions[id].piece_ends.push_back(p.bytes_end);
                push(s + p.time_s + radio.rx_latency_s, event_kind::piece, j, id);
            }
        }
        push(e + radio.rx_latency_s, event_kind::delivery, j, id);
    }
}

void virtual_network::restart_node(size_t i)
{
    check_node(i, "restart_node");
    node_slot& n = *d_nodes[i];
    n.engine.reset();
    // As the node block does from the clock: a new start, a new incarnation.
    n.cfg.incarnation = uint32_t(std::max(0.0, d_now)) + uint32_t(n.epoch) + 1;
    n.engine = std::make_unique<dl::node_engine>(n.cfg);
    // As the node block does at start: its receivers go on where they were.
    if (!n.journal.empty())
        n.engine->restore_journal(n.journal, d_now);
    ++n.epoch;
    ++n.rx_epoch;
    ++n.timer_gen;
    n.timer_time = inf;
    n.carrier = 0;
    after_input(i);
}

void virtual_network::set_node_offline(size_t i, bool offline)
{
    check_node(i, "set_node_offline");
    node_slot& n = *d_nodes[i];
    if (offline == n.offline)
        return;
    n.offline = offline;
    if (!offline)
        return;
    ++n.rx_epoch; // receptions in flight are lost
    if (n.carrier > 0) {
        n.carrier = 0;
        phy_status(i, dl::phy_event::carrier_off);
        after_input(i);
    }
}

bool virtual_network::node_offline(size_t i) const
{
    check_node(i, "node_offline");
    return d_nodes[i]->offline;
}

const node_stats& virtual_network::stats(size_t i) const
{
    check_node(i, "stats");
    return d_nodes[i]->stats;
}

} // namespace sim
} // namespace hfstack
} // namespace gr
