/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "burst_metadata.h"
#include "fault_guard.h"
#include "modem_status.h"
#include "node_impl.h"

#include <gnuradio/hfstack/metadata.h>
#include <gnuradio/io_signature.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace gr {
namespace hfstack {

namespace {

const pmt::pmt_t port_to_phy = pmt::mp("to_phy");
const pmt::pmt_t port_from_phy = pmt::mp("from_phy");
const pmt::pmt_t port_phy_status = pmt::mp("phy_status");
const pmt::pmt_t port_sis_in = pmt::mp("sis_in");
const pmt::pmt_t port_sis_out = pmt::mp("sis_out");
const pmt::pmt_t port_stats = pmt::mp("stats");

dl::node_config make_config(const std::string& address, const std::string& options)
{
    dl::node_config c;
    dl::set_node_option(c, "address", address);
    dl::set_node_options(c, options);
    return c;
}

uint64_t wall_clock_us()
{
    return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count());
}

} // namespace

node::sptr node::make(const std::string& address,
                      const std::string& options,
                      double time_scale,
                      const std::string& pcap_file,
                      double stats_interval)
{
    return gnuradio::make_block_sptr<node_impl>(
        address, options, time_scale, pcap_file, stats_interval);
}

std::string node_option_help()
{
    std::ostringstream o;
    for (auto& opt : dl::node_options())
        o << opt.name << " (default "
          << (opt.default_value.empty() ? "none" : opt.default_value) << "): " << opt.help
          << "\n";
    return o.str();
}

node_impl::node_impl(const std::string& address,
                     const std::string& options,
                     double time_scale,
                     const std::string& pcap_file,
                     double stats_interval)
    : gr::block("node", gr::io_signature::make(0, 0, 0), gr::io_signature::make(0, 0, 0)),
      d_stats_interval(stats_interval),
      d_pcap_path(pcap_file),
      d_timer(d_mutex, time_scale)
{
    if (!(time_scale > 0) || !std::isfinite(time_scale))
        throw std::invalid_argument("node: time_scale must be a positive number");
    if (!(stats_interval >= 0))
        throw std::invalid_argument("node: stats_interval must be >= 0");
    // Bad addresses and options fail here with the option's name.
    dl::node_config config = make_config(address, options);
    config.supervision = dl::in_protocol_time(config.supervision, time_scale);
    config.incarnation = uint32_t(wall_clock_us() / 1000000); // seconds: see node_config
    if (!config.state_dir.empty() && !journal_lock(config.state_dir))
        config.state_dir.clear();
    d_engine = std::make_unique<dl::node_engine>(config);
    if (!config.state_dir.empty())
        journal_open(config.state_dir);
    if (time_scale != 1.0) // the address: two nodes in one process say it apart
        d_logger->info(
            "{}: time_scale {}: protocol timers run {}x faster; the SIS timers facing "
            "clients (keep-alive, answer wait) stay in real time",
            dl::address_to_string(config.address),
            time_scale,
            time_scale);

    message_port_register_in(port_sis_in);
    message_port_register_in(port_from_phy);
    message_port_register_in(port_phy_status);
    message_port_register_out(port_sis_out);
    message_port_register_out(port_to_phy);
    message_port_register_out(port_stats);
    set_msg_handler(port_sis_in, [this](const pmt::pmt_t& m) { handle_sis(m); });
    set_msg_handler(port_from_phy, [this](const pmt::pmt_t& m) { handle_burst(m); });
    set_msg_handler(port_phy_status, [this](const pmt::pmt_t& m) { handle_status(m); });
}

bool node_impl::journal_lock(const std::string& state_dir)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(state_dir, ec);
    if (ec)
        throw std::invalid_argument("node: state_dir " + state_dir + ": " + ec.message());
    const std::string path = (fs::path(state_dir) / "lock").string();
    d_journal_lock_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (d_journal_lock_fd < 0)
        throw std::invalid_argument("node: cannot open " + path + ": " +
                                    std::strerror(errno));
    if (::flock(d_journal_lock_fd, LOCK_EX | LOCK_NB) == 0)
        return true;
    // Two processes on one journal would undo each other: the second goes without.
    d_logger->warn("state_dir {} is in use by another node process: no journal for this "
                   "one (a restart may then deliver C_PDUs twice)",
                   state_dir);
    ::close(d_journal_lock_fd);
    d_journal_lock_fd = -1;
    return false;
}

void node_impl::journal_open(const std::string& state_dir)
{
    namespace fs = std::filesystem;
    d_journal_path = (fs::path(state_dir) / "arq-journal").string();
    std::ifstream in(d_journal_path, std::ios::binary);
    if (in) {
        const dl::bytes held((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
        try {
            const size_t peers = d_engine->restore_journal(held, 0);
            d_logger->info(
                "journal {}: {} peer(s) restored; their windows go on where they were",
                d_journal_path,
                peers);
            if (const uint64_t owed = d_engine->counters().deliveries_owed)
                d_logger->info(
                    "journal {}: {} C_PDU(s) delivered before the restart were "
                    "not yet written to their client: each goes, once, to the "
                    "client that binds its SAP",
                    d_journal_path,
                    owed);
        } catch (const dl::journal_foreign& e) {
            throw std::invalid_argument("node: state_dir " + state_dir + ": " + e.what());
        } catch (const dl::journal_error& e) {
            // Without it the peers agree new windows by a FULL RESET: C_PDUs they had in
            // flight may be delivered twice, none is lost.
            d_logger->warn("journal {} unusable ({}): starting without it",
                           d_journal_path,
                           e.what());
        }
    }
    try {
        d_journal = std::make_shared<journal_file>(d_journal_path);
    } catch (const std::system_error& e) {
        throw std::invalid_argument(std::string("node: ") + e.what());
    }
}

void node_impl::journal_write(const dl::node_actions& a)
{
    if (!d_journal || d_journal_failed || (a.journal.empty() && !a.journal_rewrite))
        return;
    const bool ok =
        a.journal_rewrite ? d_journal->rewrite(a.journal) : d_journal->append(a.journal);
    if (a.journal_rewrite)
        d_journal_syncs += 1;
    else
        d_journal_dirty = true;
    d_journal_bytes += a.journal.size();
    if (!ok)
        journal_failed(std::strerror(errno));
}

void node_impl::journal_failed(const std::string& why)
{
    d_journal_failed = true;
    d_logger->error("journal {}: {}; going on without it (a restart may then deliver "
                    "C_PDUs twice)",
                    d_journal_path,
                    why);
}

void node_impl::journal_sync()
{
    if (!d_journal_dirty || !d_journal || d_journal_failed)
        return;
    const auto t0 = std::chrono::steady_clock::now();
    if (!d_journal->sync())
        journal_failed(std::string("fdatasync: ") + std::strerror(errno));
    d_journal_sync_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    d_journal_syncs += 1;
    d_journal_dirty = false;
}

std::map<std::string, double> node_impl::journal_counters() const
{
    if (d_journal_path.empty())
        return {};
    return { { "journal_bytes", double(d_journal_bytes) },
             { "journal_syncs", double(d_journal_syncs) },
             { "journal_sync_s", d_journal_sync_s } };
}

node_impl::~node_impl()
{
    // Destroyed while running (the flowgraph was never stopped): end the timer thread
    // without publishing anything, the ports may already be gone.
    d_timer.stop();
    if (d_journal)
        d_journal->close(); // a server still holding it writes nothing now
    if (d_journal_lock_fd >= 0)
        ::close(d_journal_lock_fd); // and with it the lock
}

double node_impl::now() const { return d_timer.now(); }

double node_impl::engine_time(const pmt::pmt_t& meta)
{
    double t = now();
    const pmt::pmt_t at =
        pmt::is_dict(meta) ? pmt::dict_ref(meta, metadata::channel_time(), pmt::PMT_NIL)
                           : pmt::PMT_NIL;
    if (pmt::is_real(at) && std::isfinite(pmt::to_double(at))) {
        d_channel_clock = true;
        t = std::clamp(pmt::to_double(at) - d_timer.shared_clock_offset(),
                       t - d_timer.max_channel_lag(),
                       t);
    }
    d_engine_now = std::max(d_engine_now, t);
    return d_engine_now;
}

// The scheduler calls start() in the block's thread before a start barrier: an
// exception there left top_block.start() waiting forever (an unwritable --pcap hung
// hfstack-node, deaf to SIGINT). check_topology() runs in the caller's thread first,
// so the capture is opened there and tb.start() raises instead (as in sis_server).
bool node_impl::check_topology(int, int)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (!d_pcap_path.empty() && !d_pcap)
        d_pcap = std::make_unique<dl::dpdu_capture>(d_pcap_path);
    return true;
}

bool node_impl::start()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (!d_pcap_path.empty() && !d_pcap) // not started by a flowgraph
        d_pcap = std::make_unique<dl::dpdu_capture>(d_pcap_path);
    d_next_stats = d_stats_interval > 0 ? now() + d_stats_interval : dl::no_deadline;
    d_timer.start([this](double t) { return on_timer(t); }); // no-op when started twice
    return block::start();
}

bool node_impl::stop()
{
    if (!d_timer.stop())
        return block::stop();
    std::lock_guard<std::mutex> lock(d_mutex);
    post_stats();
    if (d_pcap)
        d_pcap->flush();
    return block::stop();
}

double node_impl::on_timer(double t)
{
    const double due = d_engine->next_deadline();
    if (t >= due)
        d_faults(d_logger, "timer", [&] {
            // On an emulated channel the step runs as of its deadline: the thread woke a
            // little late, the channel's time did not wait for it. A deadline the step
            // left where it was runs as of now the next time, so the loop moves on.
            double at = t;
            if (d_channel_clock && due != d_last_step_due)
                at = std::max(due, t - d_timer.max_channel_lag());
            d_last_step_due = due;
            d_engine_now = std::max(d_engine_now, at);
            d_engine->on_timer(d_engine_now);
            dispatch();
        });
    if (t >= d_next_stats) {
        post_stats();
        d_next_stats = t + d_stats_interval;
    }
    return std::min(d_engine->next_deadline(), d_next_stats);
}

void node_impl::handle_sis(const pmt::pmt_t& msg)
{
    if (!pmt::is_pair(msg) || !pmt::is_dict(pmt::car(msg))) {
        d_logger->warn("sis_in: message is not a PDU, dropped");
        return;
    }
    const pmt::pmt_t meta = pmt::car(msg);
    const pmt::pmt_t client_pmt =
        pmt::dict_ref(meta, metadata::client_id(), pmt::PMT_NIL);
    const uint32_t client =
        pmt::is_integer(client_pmt) ? uint32_t(pmt::to_long(client_pmt)) : 0;
    const std::string event = meta_string(meta, metadata::client_event());
    std::lock_guard<std::mutex> lock(d_mutex);
    d_faults(d_logger, "sis_in", [&] { handle_sis_locked(client, event, meta, msg); });
}

void node_impl::handle_sis_locked(uint32_t client,
                                  const std::string& event,
                                  const pmt::pmt_t& meta,
                                  const pmt::pmt_t& msg)
{
    const double t = std::max(now(), d_engine_now);
    d_engine_now = t;
    if (event == "connected") {
        d_engine->on_client_connected(
            client,
            t,
            pmt::is_true(pmt::dict_ref(meta, metadata::reports_written(), pmt::PMT_F)));
    } else if (event == "written" || event == "dropped") {
        const pmt::pmt_t delivery =
            pmt::dict_ref(meta, metadata::delivery(), pmt::PMT_NIL);
        if (!pmt::is_integer(delivery)) {
            d_logger->warn(
                "sis_in: '{}' from client {} without a delivery number", event, client);
            return;
        }
        const uint64_t number = uint64_t(pmt::to_long(delivery));
        d_engine->on_delivery_settled(number, event == "written", t);
        dispatch();
        // Its settled record is now the engine's own, or no longer needed.
        if (d_journal)
            d_journal->settled_seen(number);
        return;
    } else if (event == "closed") {
        d_engine->on_client_closed(client, t);
    } else if (event == "invalid") {
        const pmt::pmt_t fatal = pmt::dict_ref(meta, metadata::fatal(), pmt::PMT_F);
        const pmt::pmt_t why = pmt::dict_ref(meta, metadata::reason(), pmt::PMT_NIL);
        d_engine->on_client_invalid(client,
                                    pmt::is_symbol(why) ? pmt::symbol_to_string(why)
                                                        : "invalid data",
                                    pmt::is_true(fatal),
                                    t);
    } else if (!event.empty()) {
        d_logger->warn("sis_in: unknown client_event '{}' from client {}", event, client);
        return;
    } else {
        const pmt::pmt_t data = pmt::cdr(msg);
        if (!pmt::is_u8vector(data)) {
            d_engine->on_client_invalid(
                client, "PDU payload is not a u8vector", false, t);
        } else {
            size_t n = 0;
            const uint8_t* p = pmt::u8vector_elements(data, n);
            const auto sis = dl::decode_sis(p, n);
            if (sis)
                d_engine->on_sis(client, sis.value, t);
            else
                d_engine->on_client_invalid(client,
                                            std::string(dl::to_string(sis.error)) + ": " +
                                                sis.reason,
                                            false,
                                            t);
        }
    }
    dispatch();
}

void node_impl::handle_burst(const pmt::pmt_t& msg)
{
    if (!pmt::is_pair(msg) || !pmt::is_u8vector(pmt::cdr(msg))) {
        d_logger->warn("from_phy: message is not a PDU with a u8vector, dropped");
        return;
    }
    const pmt::pmt_t meta =
        pmt::is_dict(pmt::car(msg)) ? pmt::car(msg) : pmt::make_dict();
    dl::burst_info info;
    const pmt::pmt_t snr = pmt::dict_ref(meta, metadata::snr_db(), pmt::PMT_NIL);
    if (pmt::is_number(snr) && !pmt::is_complex(snr))
        info.snr_db = pmt::to_double(snr);
    const pmt::pmt_t recent =
        pmt::dict_ref(meta, metadata::snr_db_recent(), pmt::PMT_NIL);
    if (pmt::is_number(recent) && !pmt::is_complex(recent))
        info.snr_db_recent = pmt::to_double(recent);
    info.bytes_bad = pmt::is_true(pmt::dict_ref(meta, metadata::bytes_bad(), pmt::PMT_F));
    info.burst_continues =
        pmt::is_true(pmt::dict_ref(meta, metadata::burst_continues(), pmt::PMT_F));
    // None when the modem names no mode we code (or one of another standard or
    // bandwidth).
    info.mode = mode_from_metadata(meta, d_engine->config().s5069_bandwidth_khz);
    size_t n = 0;
    const uint8_t* p = pmt::u8vector_elements(pmt::cdr(msg), n);
    std::lock_guard<std::mutex> lock(d_mutex);
    d_faults(d_logger, "from_phy", [&] {
        if (d_pcap) {
            // A capture record holds a whole burst, as its D_PDUs may span pieces.
            d_capture_burst.insert(d_capture_burst.end(), p, p + n);
            if (!info.burst_continues) {
                capture(d_capture_burst);
                d_capture_burst.clear();
            }
        }
        d_engine->on_burst(p, n, info, engine_time(meta));
        dispatch();
    });
}

void node_impl::handle_status(const pmt::pmt_t& msg)
{
    pmt::pmt_t dict = msg;
    if (pmt::is_pair(msg) && !pmt::is_dict(msg))
        dict = pmt::car(msg);
    const std::string event =
        pmt::is_dict(dict) ? meta_string(dict, metadata::event()) : "";
    dl::phy_event e;
    if (event == "tx_started")
        e = dl::phy_event::tx_started;
    else if (event == "tx_finished")
        e = dl::phy_event::tx_finished;
    else if (event == "carrier_on")
        e = dl::phy_event::carrier_on;
    else if (event == "carrier_off")
        e = dl::phy_event::carrier_off;
    else {
        d_logger->warn("phy_status: no known `event` in {}", pmt::write_string(msg));
        return;
    }
    std::lock_guard<std::mutex> lock(d_mutex);
    d_faults(d_logger, "phy_status", [&] {
        d_engine->on_phy_status(e, engine_time(dict));
        dispatch();
    });
}

void node_impl::dispatch()
{
    auto a = d_engine->take_actions();
    journal_write(a);
    if (!a.to_clients.empty() || !a.transmissions.empty())
        journal_sync();
    for (auto& m : a.to_clients) {
        pmt::pmt_t meta = pmt::make_dict();
        meta = pmt::dict_add(meta, metadata::client_id(), pmt::from_long(m.client));
        meta = pmt::dict_add(meta, metadata::from_client(), pmt::PMT_F);
        if (m.delivery) {
            meta = pmt::dict_add(
                meta, metadata::delivery(), pmt::from_long(long(m.delivery)));
            if (d_journal)
                meta = pmt::dict_add(meta,
                                     metadata::settler(),
                                     pmt::make_any(delivery_settler_ptr(d_journal)));
        }
        dl::bytes frame;
        try {
            frame = dl::encode(m.primitive);
        } catch (const dl::encode_error& e) {
            d_logger->error("{} for client {} not sent: {}",
                            dl::to_string(m.primitive.type),
                            m.client,
                            e.what());
            continue;
        }
        message_port_pub(port_sis_out,
                         pmt::cons(meta, pmt::init_u8vector(frame.size(), frame.data())));
    }
    for (auto& d : a.disconnects) {
        d_logger->info("client {} disconnected: {}", d.client, d.detail);
        pmt::pmt_t meta = pmt::make_dict();
        meta = pmt::dict_add(meta, metadata::client_id(), pmt::from_long(d.client));
        meta = pmt::dict_add(meta, metadata::client_event(), pmt::mp("disconnect"));
        meta = pmt::dict_add(meta, metadata::reason(), pmt::mp(d.detail));
        message_port_pub(port_sis_out, pmt::cons(meta, pmt::make_u8vector(0, 0)));
    }
    for (auto& t : a.transmissions) {
        if (d_pcap)
            capture(t.burst);
        pmt::pmt_t meta = pmt::make_dict();
        meta = add_mode_metadata(meta, t.mode, d_engine->config().s5069_bandwidth_khz);
        meta = pmt::dict_add(meta, metadata::air_time(), pmt::from_double(t.air_time_s));
        if (d_channel_clock)
            meta =
                pmt::dict_add(meta,
                              metadata::channel_time(),
                              pmt::from_double(t.start + d_timer.shared_clock_offset()));
        message_port_pub(
            port_to_phy,
            pmt::cons(meta, pmt::init_u8vector(t.burst.size(), t.burst.data())));
    }
    note_changes();
    d_timer.wake();
}

void node_impl::note_changes()
{
    constexpr size_t max_events = 1000;
    const std::string time = std::to_string(wall_clock_s());
    auto push = [&](std::map<std::string, std::string> e) {
        e["time"] = time;
        if (d_events.size() >= max_events) {
            d_events.pop_front();
            d_events_dropped += 1;
        }
        if (d_events_dropped)
            e["dropped"] = std::to_string(d_events_dropped);
        d_events.push_back(std::move(e));
    };
    std::map<std::string, std::map<std::string, std::string>> before;
    for (auto& l : d_links_seen)
        before[l.at("peer")] = l;
    std::vector<std::map<std::string, std::string>> now_links;
    for (auto& l : d_engine->links())
        now_links.push_back(
            { { "peer", dl::address_to_string(l.peer) },
              { "state", dl::to_string(l.state) },
              { "tx_mode",
                dl::waveform_name(d_engine->config().s5069_bandwidth_khz, l.tx_mode) },
              { "rx_mode",
                dl::waveform_name(d_engine->config().s5069_bandwidth_khz, l.rx_mode) } });
    for (auto& l : now_links) {
        const auto was = before.find(l.at("peer"));
        const bool up = l.at("state") == "up";
        const bool was_up = was != before.end() && was->second.at("state") == "up";
        if (up != was_up)
            push({ { "event", up ? "link_up" : "link_down" },
                   { "peer", l.at("peer") },
                   { "tx_mode", l.at("tx_mode") },
                   { "rx_mode", l.at("rx_mode") } });
        if (was == before.end())
            continue;
        for (const char* direction : { "tx", "rx" }) {
            const std::string key = std::string(direction) + "_mode";
            if (was->second.at(key) != l.at(key))
                push({ { "event", "rate_change" },
                       { "peer", l.at("peer") },
                       { "direction", direction },
                       { "old", was->second.at(key) },
                       { "new", l.at(key) } });
        }
    }
    d_links_seen = std::move(now_links);

    std::map<int, uint32_t> bindings;
    for (auto& b : d_engine->bindings())
        bindings[int(b.sap)] = b.client;
    // Each binding of `from` that `to` lacks is an `event` (unbinds first, then binds).
    auto differences = [&](const std::map<int, uint32_t>& from,
                           const std::map<int, uint32_t>& to,
                           const char* event) {
        for (auto& [sap, client] : from) {
            const auto other = to.find(sap);
            if (other == to.end() || other->second != client)
                push({ { "event", event },
                       { "sap", std::to_string(sap) },
                       { "client", std::to_string(client) } });
        }
    };
    differences(d_bindings_seen, bindings, "client_unbind");
    differences(bindings, d_bindings_seen, "client_bind");
    d_bindings_seen = std::move(bindings);
}

std::vector<std::map<std::string, std::string>> node_impl::take_events()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    std::vector<std::map<std::string, std::string>> out(d_events.begin(), d_events.end());
    d_events.clear();
    d_events_dropped = 0;
    return out;
}

void node_impl::capture(const dl::bytes& burst)
{
    // Both directions go to one capture, in time order; the D_PDU addresses tell them
    // apart. Received D_PDUs with a damaged segment are captured as they came.
    const uint64_t ts = wall_clock_us();
    dl::dpdu_deframer deframer; // offsets relative to this burst
    for (auto& f : deframer.push(burst.data(), burst.size()))
        d_pcap->write(ts,
                      dl::bytes(burst.begin() + f.stream_offset,
                                burst.begin() + f.stream_offset + f.length));
}

void node_impl::post_stats()
{
    pmt::pmt_t dict = pmt::make_dict();
    for (auto& [name, value] : dl::counter_list(d_engine->counters()))
        dict = pmt::dict_add(dict, pmt::mp(name), pmt::from_double(value));
    for (auto& [name, value] : journal_counters())
        dict = pmt::dict_add(dict, pmt::mp(name), pmt::from_double(value));
    message_port_pub(port_stats, dict);
}

std::string node_impl::option(const std::string& name) const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return dl::get_node_option(d_engine->config(), name);
}

std::map<std::string, double> node_impl::counters() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    std::map<std::string, double> out;
    for (auto& [name, value] : dl::counter_list(d_engine->counters()))
        out[name] = value;
    out["internal_errors"] = double(d_faults.count());
    for (auto& [name, value] : journal_counters())
        out[name] = value;
    return out;
}

std::vector<std::map<std::string, std::string>> node_impl::links() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_links_seen; // as of the last engine step (note_changes)
}

bool node_impl::channel_busy() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_engine->channel_busy();
}

std::map<int, uint32_t> node_impl::bindings() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    std::map<int, uint32_t> out;
    for (auto& b : d_engine->bindings())
        out[int(b.sap)] = b.client;
    return out;
}

} // namespace hfstack
} // namespace gr
