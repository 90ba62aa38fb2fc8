/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "ardop.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

std::string upper(std::string s)
{
    for (auto& c : s)
        c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return "";
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

std::vector<std::string> words(const std::string& s)
{
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

std::optional<bool> parse_bool(const std::string& v)
{
    const std::string u = upper(v);
    if (u == "TRUE")
        return true;
    if (u == "FALSE")
        return false;
    return std::nullopt;
}

const char* bool_text(bool b) { return b ? "TRUE" : "FALSE"; }

std::optional<unsigned> parse_uint(const std::string& v, unsigned lo, unsigned hi)
{
    if (v.empty() || v.size() > 6 ||
        !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    const unsigned n = unsigned(std::stoul(v));
    if (n < lo || n > hi)
        return std::nullopt;
    return n;
}

bool valid_grid(const std::string& g)
{
    if (g.size() != 4 && g.size() != 6 && g.size() != 8)
        return false;
    const std::string u = upper(g);
    for (size_t i = 0; i < u.size(); ++i) {
        const char c = u[i];
        const bool ok = (i % 4 == 0 || i % 4 == 1)
                            ? (i < 2 ? c >= 'A' && c <= 'R' : c >= 'A' && c <= 'X')
                            : c >= '0' && c <= '9';
        if (!ok)
            return false;
    }
    return true;
}

// Settings the host may make that concern a sound-card modem's own channel: accepted,
// kept and reported, and without effect on a STANAG 5066 node (docs/ardop.md).
const std::map<std::string, std::string>& kept_settings()
{
    static const std::map<std::string, std::string> defaults{
        { "AUTOBREAK", "TRUE" }, { "BUSYLOCK", "FALSE" },     { "BUSYDET", "5" },
        { "CMDTRACE", "FALSE" }, { "DEBUGLOG", "FALSE" },     { "DRIVELEVEL", "100" },
        { "FECID", "FALSE" },    { "FSKONLY", "FALSE" },      { "LEADER", "160" },
        { "SQUELCH", "5" },      { "TRAILER", "0" },          { "TUNERANGE", "100" },
        { "EXTRADELAY", "0" },   { "ENABLEPINGACK", "TRUE" },
    };
    return defaults;
}

// Commands of a sound-card TNC or its radio control that a node cannot honour.
bool unsupported(const std::string& c)
{
    static const std::set<std::string> names{
        "TWOTONETEST",     "CAPTURE",      "PLAYBACK",     "CAPTUREDEVICES",
        "PLAYBACKDEVICES", "PING",         "SENDCQ",       "RADIOHEX",
        "RADIOPTT",        "RADIOFREQ",    "RADIOMODE",    "RADIOCTRL",
        "RADIOMODEL",      "RADIOANT",     "RADIOFILTER",  "RADIOTUNER",
        "RADIOMENU",       "RADIOISC",     "RADIOCOMADD",  "RADIOCTRLPORT",
        "RADIOCTRLBAUD",   "RADIOCTRLDTR", "RADIOCTRLRTS", "RADIOPTTDTR",
        "RADIOPTTRTS",     "SETUPMENU",    "DISPLAY",      "ARQCONREPEATS",
        "BREAK",           "CALLBW",       "DATATOSEND",   "RXLEVEL",
        "TXLEVEL",         "INPUTNOISE",
    };
    return names.count(c) != 0;
}

} // namespace

std::optional<std::string> ardop_tnc::normalize_call(const std::string& text)
{
    const std::string u = upper(trim(text));
    const auto dash = u.find('-');
    const std::string base = u.substr(0, dash);
    if (base.size() < 3 || base.size() > 7 ||
        !std::all_of(base.begin(), base.end(), [](char c) {
            return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        }))
        return std::nullopt;
    if (dash == std::string::npos)
        return base;
    const std::string ssid = u.substr(dash + 1);
    if (ssid.size() == 1 && ssid[0] >= 'A' && ssid[0] <= 'Z')
        return base + "-" + ssid;
    const auto n = parse_uint(ssid, 0, 15);
    if (!n)
        return std::nullopt;
    return *n == 0 ? base : base + "-" + std::to_string(*n);
}

ardop_tnc::ardop_tnc(ardop_config config) : d_cfg(std::move(config)), d_slep(d_cfg.slep)
{
    std::map<std::string, uint32_t> table;
    for (const auto& [call, node] : d_cfg.stations) {
        const auto c = normalize_call(call);
        if (!c)
            throw std::invalid_argument("ARDOP: " + call + " is not a callsign");
        if (node == 0 || node > 0x0FFFFFFF)
            throw std::invalid_argument("ARDOP: " + call +
                                        " needs a node address (not a group)");
        table[*c] = node;
    }
    d_cfg.stations = std::move(table);
    if (d_cfg.data_frame_bytes < 1 || d_cfg.data_frame_bytes > 65000)
        throw std::invalid_argument("ARDOP: data_frame_bytes must be 1..65000");
    d_slep.listen(d_cfg.address);
    reset_settings();
}

void ardop_tnc::reset_settings()
{
    d_mycall.clear();
    d_grid.clear();
    d_aux.clear();
    d_listen = true;
    d_fec_mode = false;
    d_cwid = false;
    d_bandwidth = 500;
    d_forced = false;
    d_arq_timeout = 120;
    d_fec_mode_name = "4PSK.500.100";
    d_fec_repeats = 0;
}

void ardop_tnc::notice(const std::string& kind, const std::string& text)
{
    if (d_noticed.insert(kind).second)
        d_actions.notices.push_back(text);
}

void ardop_tnc::fault(const std::string& text)
{
    d_counters.faults += 1;
    reply("FAULT " + text);
}

std::string ardop_tnc::bandwidth_text() const
{
    return std::to_string(d_bandwidth) + (d_forced ? "FORCED" : "MAX");
}

void ardop_tnc::new_state(ardop_state s)
{
    d_state = s;
    switch (s) {
    case ardop_state::disc:
        reply("NEWSTATE DISC");
        break;
    case ardop_state::connecting:
        reply("NEWSTATE CONNECTPENDING");
        break;
    case ardop_state::connected:
        reply(d_we_called ? "NEWSTATE ISS" : "NEWSTATE IRS");
        break;
    case ardop_state::disconnecting:
        reply("NEWSTATE DISCONNECTING");
        break;
    }
}

// --- SIS side -----------------------------------------------------------------------

void ardop_tnc::start(double now)
{
    d_slep.start(now);
    absorb(now);
}

void ardop_tnc::on_disconnected(double now)
{
    d_slep.on_disconnected(now); // SLEP keeps the session and sends again once rebound
    absorb(now);
}

void ardop_tnc::on_sis(const dl::sis_primitive& p, double now)
{
    d_slep.on_sis(p, now);
    absorb(now);
}

double ardop_tnc::next_deadline() const
{
    double t = d_slep.next_deadline();
    auto consider = [&t](double d) {
        if (d >= 0)
            t = std::min(t, d);
    };
    if (d_state == ardop_state::connecting)
        consider(d_deadline_connect);
    if (d_state == ardop_state::disconnecting)
        consider(d_deadline_disconnect);
    if (const double idle = idle_since(); idle >= 0)
        consider(idle + d_arq_timeout);
    consider(d_disconnected_at);
    consider(d_hold_until);
    if (d_data_since >= 0)
        consider(d_data_since + d_cfg.data_frame_timeout_s);
    return t;
}

void ardop_tnc::on_timer(double now)
{
    d_slep.on_timer(now);
    absorb(now);
    if (d_state == ardop_state::connecting && now >= d_deadline_connect) {
        d_counters.sessions_failed += 1;
        reply("STATUS CONNECT TO " + d_remote + " FAILED!");
        end_session("", now);
    }
    if (d_state == ardop_state::disconnecting && now >= d_deadline_disconnect) {
        reply("STATUS DISCONNECT TIMEOUT");
        end_session("", now);
    }
    if (const double idle = idle_since(); idle >= 0 && now >= idle + d_arq_timeout) {
        reply("STATUS ARQ TIMEOUT FROM PROTOCOL STATE: " +
              std::string(d_we_called ? "ISS" : "IRS"));
        begin_disconnect(now);
    }
    if (d_hold_until >= 0 && now >= d_hold_until)
        release_held(now);
    if (d_disconnected_at >= 0 && now >= d_disconnected_at) {
        d_disconnected_at = -1;
        if (d_stream)
            d_slep.finish(*d_stream, now); // its end: the peer's half is already over
        d_stream.reset();
        reply("DISCONNECTED");
        new_state(ardop_state::disc);
    }
    if (d_data_since >= 0 && now >= d_data_since + d_cfg.data_frame_timeout_s) {
        const size_t want =
            d_data_in.size() >= 2 ? (d_data_in[0] << 8 | d_data_in[1]) : 0;
        fault("data frame incomplete: " +
              std::to_string(d_data_in.size() >= 2 ? d_data_in.size() - 2 : 0) + " of " +
              std::to_string(want) + " bytes, dropped");
        d_data_in.clear();
        d_data_since = -1;
    }
    absorb(now);
}

void ardop_tnc::absorb(double now)
{
    d_now_hint = now;
    for (int round = 0; round < 8; ++round) { // reading may produce more SLEP actions
        auto a = d_slep.take_actions();
        for (auto& p : a.to_sis)
            d_actions.to_sis.push_back(std::move(p));
        for (auto& n : a.notices)
            d_actions.notices.push_back(std::move(n));
        if (a.events.empty())
            break;
        for (auto& e : a.events) {
            using K = slep_event::kind;
            switch (e.what) {
            case K::unbound:
                notice("unbound",
                       "the SIS server unbound the ARDOP interface: " + e.text);
                break;
            case K::incoming:
                on_incoming(e.stream, now);
                break;
            case K::readable:
                on_readable(e.stream, now);
                break;
            case K::writable:
                feed_slep(now);
                break;
            case K::closed:
                on_stream_end(e.stream, false, now);
                break;
            case K::reset:
                on_stream_end(e.stream, true, now);
                break;
            case K::datagram:
                if (d_fec_mode && !e.data.empty() && !d_host_reading) {
                    d_counters.fec_frames_dropped_unread += 1;
                } else if (d_fec_mode && !e.data.empty()) {
                    d_counters.fec_frames_received += 1;
                    bytes f;
                    const size_t n = std::min<size_t>(e.data.size(), 65532);
                    f.push_back(uint8_t((n + 3) >> 8));
                    f.push_back(uint8_t((n + 3) & 0xFF));
                    f.insert(f.end(), { 'F', 'E', 'C' });
                    f.insert(f.end(), e.data.begin(), e.data.begin() + n);
                    d_actions.to_data.insert(d_actions.to_data.end(), f.begin(), f.end());
                    d_counters.bytes_to_host += n;
                }
                break;
            default:
                break;
            }
        }
    }
    if (d_stream &&
        (d_state == ardop_state::connected || d_state == ardop_state::disconnecting))
        send_buffer_state(false);
}

// --- the air: sessions ----------------------------------------------------------------

void ardop_tnc::on_incoming(slep_stream s, double now)
{
    const uint32_t node = slep_stream_node(s);
    const bool known = std::any_of(d_cfg.stations.begin(),
                                   d_cfg.stations.end(),
                                   [node](const auto& kv) { return kv.second == node; });
    if (!known) {
        d_counters.sessions_refused += 1;
        notice("unknown_node",
               "a session from node " + dl::address_to_string(node) +
                   ", which no station entry names, refused (counted)");
        d_slep.reset(s, now);
        return;
    }
    d_unanswered[s] = "";
    on_readable(s, now);
}

void ardop_tnc::answer_request(slep_stream s, const std::string& line, double now)
{
    const auto w = words(line);
    auto refuse = [&](const std::string& why) {
        d_counters.sessions_refused += 1;
        const std::string answer = "REJECT " + why + "\r";
        d_slep.write(
            s, reinterpret_cast<const uint8_t*>(answer.data()), answer.size(), now);
        d_slep.finish(s, now);
        d_refused.insert(s);
    };
    if (w.size() != 4 || w[0] != "CONNECT" || !normalize_call(w[1]) ||
        !normalize_call(w[2]) || !parse_uint(w[3], 200, 2000)) {
        d_counters.bad_requests += 1;
        notice("bad_request",
               "a session request that is not ours from " +
                   dl::address_to_string(slep_stream_node(s)) + ": reset (counted)");
        d_slep.reset(s, now);
        return;
    }
    const std::string caller = *normalize_call(w[1]), target = *normalize_call(w[2]);
    const bool ours = !d_mycall.empty() &&
                      (target == d_mycall ||
                       std::find(d_aux.begin(), d_aux.end(), target) != d_aux.end());
    if (d_state != ardop_state::disc || d_stream)
        return refuse("BUSY");
    if (!d_listen || d_fec_mode || !ours)
        return refuse(ours ? "NOTLISTENING" : "CALL");
    const unsigned their_bw = *parse_uint(w[3], 200, 2000);
    const unsigned bw = std::min(their_bw, d_bandwidth);
    if (d_forced && their_bw < d_bandwidth)
        return refuse("BW");
    const std::string answer = "OK " + std::to_string(bw) + "\r";
    d_slep.write(s, reinterpret_cast<const uint8_t*>(answer.data()), answer.size(), now);
    d_stream = s;
    d_counters.sessions_answered += 1;
    reply("PENDING");
    reply("TARGET " + target);
    d_target = target;
    d_bandwidth_connected = bw;
    connected(caller, false, now);
}

void ardop_tnc::connected(const std::string& remote, bool we_called, double now)
{
    d_remote = remote;
    d_we_called = we_called;
    d_answered = true;
    d_pending.clear();
    d_finish_wanted = false;
    d_last_progress = now;
    d_last_buffer = ~uint64_t(0);
    d_held.clear();
    d_hold_until = now + d_cfg.connected_hold_s;
    reply("CONNECTED " + remote + " " + std::to_string(d_bandwidth_connected));
    new_state(ardop_state::connected);
}

void ardop_tnc::caller_heard(const std::string& line, double now)
{
    const auto w = words(line);
    if (w.size() == 2 && w[0] == "OK" && parse_uint(w[1], 200, 2000)) {
        d_bandwidth_connected = *parse_uint(w[1], 200, 2000);
        connected(d_remote, true, now);
        return;
    }
    d_counters.sessions_failed += 1;
    if (w.size() == 2 && w[0] == "REJECT" && w[1] == "BUSY")
        reply("REJECTEDBUSY " + d_remote);
    else if (w.size() == 2 && w[0] == "REJECT" && w[1] == "BW")
        reply("REJECTEDBW " + d_remote);
    else
        reply("STATUS CONNECT TO " + d_remote + " FAILED!");
    end_session("", now);
}

void ardop_tnc::on_readable(slep_stream s, double now)
{
    if (d_refused.count(s)) {
        while (!d_slep.read(s, 65536, now).empty()) {
        }
        return;
    }
    const auto un = d_unanswered.find(s);
    if (un != d_unanswered.end()) {
        // The request line, read a byte at a time so that nothing after it is taken.
        while (true) {
            const bytes b = d_slep.read(s, 1, now);
            if (b.empty())
                break;
            if (b[0] == '\r') {
                const std::string line = un->second;
                d_unanswered.erase(un);
                answer_request(s, line, now);
                if (d_stream == s)
                    on_readable(s, now); // what followed the request
                return;
            }
            un->second.push_back(char(b[0]));
            if (un->second.size() > 128) {
                d_counters.bad_requests += 1;
                d_unanswered.erase(un);
                d_slep.reset(s, now);
                return;
            }
        }
        if (d_slep.eof(s)) {
            d_unanswered.erase(s);
            d_slep.reset(s, now);
        }
        return;
    }
    if (!d_stream || *d_stream != s)
        return;
    if (d_state == ardop_state::connecting) {
        while (d_state == ardop_state::connecting) {
            const bytes b = d_slep.read(s, 1, now);
            if (b.empty())
                break;
            if (b[0] == '\r') {
                caller_heard(d_answer_line, now);
                break;
            }
            d_answer_line.push_back(char(b[0]));
            if (d_answer_line.size() > 64) {
                caller_heard("", now);
                return;
            }
        }
        if (d_state == ardop_state::connecting) {
            if (d_slep.eof(s)) {
                caller_heard("", now);
            }
            return;
        }
        if (!d_stream)
            return;
    }
    if (!d_host_reading)
        return; // left in SLEP until the host reads again
    for (bytes b = d_slep.read(s, d_cfg.data_frame_bytes, now); !b.empty();
         b = d_slep.read(s, d_cfg.data_frame_bytes, now))
        deliver(b, now);
    check_peer_finished(now);
}

void ardop_tnc::check_peer_finished(double now)
{
    if (!d_stream || !d_slep.exists(*d_stream) || !d_slep.eof(*d_stream) ||
        d_disconnected_at >= 0 || d_hold_until >= 0)
        return;
    if (d_state == ardop_state::disconnecting) {
        // We asked; the far TNC has closed its half after reading ours.
        d_stream.reset();
        reply("DISCONNECTED");
        new_state(ardop_state::disc);
    } else if (d_state == ardop_state::connected) {
        // The far host disconnected: our host hears so once it has had time to read
        // the last bytes.
        d_disconnected_at = now + d_cfg.disconnected_delay_s;
    }
}

void ardop_tnc::deliver(const bytes& b, double now)
{
    if (d_state != ardop_state::connected && d_state != ardop_state::disconnecting)
        return;
    d_last_progress = now;
    if (d_hold_until >= 0) {
        d_held.insert(d_held.end(), b.begin(), b.end());
        return;
    }
    const size_t n = b.size();
    d_actions.to_data.push_back(uint8_t((n + 3) >> 8));
    d_actions.to_data.push_back(uint8_t((n + 3) & 0xFF));
    d_actions.to_data.insert(d_actions.to_data.end(), { 'A', 'R', 'Q' });
    d_actions.to_data.insert(d_actions.to_data.end(), b.begin(), b.end());
    d_counters.bytes_to_host += n;
    d_last_progress = now;
}

void ardop_tnc::flush_held(double now)
{
    if (d_hold_until < 0)
        return;
    d_hold_until = -1;
    const bytes held = std::move(d_held);
    d_held.clear();
    for (size_t at = 0; at < held.size(); at += d_cfg.data_frame_bytes)
        deliver(bytes(held.begin() + long(at),
                      held.begin() +
                          long(std::min(held.size(), at + d_cfg.data_frame_bytes))),
                now);
}

void ardop_tnc::release_held(double now)
{
    if (d_hold_until < 0)
        return;
    flush_held(now);
    check_peer_finished(now);
}

void ardop_tnc::on_stream_end(slep_stream s, bool reset, double now)
{
    d_refused.erase(s);
    d_unanswered.erase(s);
    if (!d_stream || *d_stream != s)
        return;
    if (d_state == ardop_state::connecting) {
        d_counters.sessions_failed += 1;
        reply("STATUS CONNECT TO " + d_remote + " FAILED!");
        d_stream.reset();
        end_session("", now);
        return;
    }
    if (reset)
        d_counters.sessions_aborted += 1;
    else
        flush_held(now);
    d_stream.reset();
    d_hold_until = -1;
    d_held.clear();
    d_disconnected_at = -1;
    reply("DISCONNECTED");
    new_state(ardop_state::disc);
}

void ardop_tnc::end_session(const std::string& status, double now)
{
    if (!status.empty())
        reply("STATUS " + status);
    if (d_stream && d_slep.exists(*d_stream))
        d_slep.reset(*d_stream, now);
    const bool was_up =
        d_state == ardop_state::connected || d_state == ardop_state::disconnecting;
    d_stream.reset();
    d_pending.clear();
    d_disconnected_at = -1;
    d_hold_until = -1;
    d_held.clear();
    if (was_up)
        reply("DISCONNECTED");
    if (d_state != ardop_state::disc)
        new_state(ardop_state::disc);
}

void ardop_tnc::begin_disconnect(double now)
{
    new_state(ardop_state::disconnecting);
    d_deadline_disconnect = now + d_cfg.disconnect_timeout_s;
    d_finish_wanted = true;
    feed_slep(now);
}

void ardop_tnc::feed_slep(double now)
{
    if (!d_stream || !d_slep.exists(*d_stream))
        return;
    if (d_state != ardop_state::connected && d_state != ardop_state::disconnecting)
        return;
    if (!d_pending.empty()) {
        const size_t n = d_slep.write(*d_stream, d_pending.data(), d_pending.size(), now);
        d_pending.erase(d_pending.begin(), d_pending.begin() + n);
    }
    if (d_pending.empty() && d_finish_wanted) {
        const auto info = d_slep.info(*d_stream);
        if (info && !info->finished_writing)
            d_slep.finish(*d_stream, now);
    }
}

uint64_t ardop_tnc::outstanding() const
{
    uint64_t n = d_pending.size();
    if (d_stream)
        if (const auto info = d_slep.info(*d_stream))
            n += info->unconfirmed;
    return n;
}

double ardop_tnc::idle_since() const
{
    // ARQTIMEOUT is the session's idle time-out. While bytes of ours wait for the far
    // station's confirmation the node's ARQ is at work, and over a half-duplex link
    // whose peer only acknowledges until our transfer ends, nothing may come back
    // through the node for minutes (a fade, an outage, a long transfer): that is not
    // idle. The node's ARQ and SLEP's give-up time bound that wait instead.
    if (d_state != ardop_state::connected || outstanding() > 0)
        return -1;
    double since = d_last_progress;
    if (d_stream)
        if (const auto info = d_slep.info(*d_stream))
            since = std::max(since, info->peer_heard);
    return since;
}

void ardop_tnc::send_buffer_state(bool always)
{
    const uint64_t outstanding = this->outstanding();
    if (outstanding < d_last_buffer && d_last_buffer != ~uint64_t(0))
        d_last_progress = d_now_hint;
    if (always || outstanding != d_last_buffer)
        reply("BUFFER " + std::to_string(outstanding));
    d_last_buffer = outstanding;
}

// --- the host
// ---------------------------------------------------------------------------

void ardop_tnc::on_command_bytes(const uint8_t* data, size_t size, double now)
{
    d_now_hint = now;
    release_held(now); // the host speaks after CONNECTED: it knows of the session
    for (size_t i = 0; i < size; ++i) {
        const char c = char(data[i]);
        if (c == '\r' || c == '\n') {
            if (d_line_too_long)
                fault("command line longer than " + std::to_string(d_cfg.max_line) +
                      " bytes");
            else if (!trim(d_line).empty())
                command(d_line, now);
            d_line.clear();
            d_line_too_long = false;
            continue;
        }
        if (d_line.size() >= d_cfg.max_line) {
            d_line_too_long = true;
            continue;
        }
        d_line.push_back(c);
    }
    absorb(now);
}

void ardop_tnc::on_data_bytes(const uint8_t* data, size_t size, double now)
{
    d_now_hint = now;
    release_held(now);
    for (size_t i = 0; i < size;) {
        if (d_data_in.empty())
            d_data_since = now;
        if (d_data_in.size() < 2) {
            d_data_in.push_back(data[i++]);
            continue;
        }
        const size_t want = size_t(d_data_in[0]) << 8 | d_data_in[1];
        const size_t take = std::min(want + 2 - d_data_in.size(), size - i);
        d_data_in.insert(d_data_in.end(), data + i, data + i + take);
        i += take;
        if (d_data_in.size() == want + 2) {
            bytes frame(d_data_in.begin() + 2, d_data_in.end());
            d_data_in.clear();
            d_data_since = -1;
            data_frame(std::move(frame), now);
        }
    }
    if (d_data_in.size() == 2 && d_data_in[0] == 0 && d_data_in[1] == 0) {
        d_data_in.clear();
        d_data_since = -1;
        fault("empty data frame");
    }
    absorb(now);
}

void ardop_tnc::data_frame(bytes frame, double now)
{
    d_counters.bytes_from_host += frame.size();
    if (d_fec_mode) {
        try {
            d_slep.send_datagram(d_cfg.fec_destination,
                                 d_cfg.address,
                                 d_cfg.address,
                                 frame,
                                 false,
                                 false,
                                 now);
            d_counters.fec_frames_sent += 1;
        } catch (const std::invalid_argument&) {
            fault("FEC frame of " + std::to_string(frame.size()) +
                  " bytes is larger than one transmission unit");
        }
        return;
    }
    if (d_state != ardop_state::connected || !d_stream) {
        fault("data while not connected, " + std::to_string(frame.size()) +
              " bytes dropped");
        return;
    }
    if (d_pending.size() + frame.size() > d_cfg.max_pending) {
        fault("buffer full, " + std::to_string(frame.size()) + " bytes dropped");
        return;
    }
    d_pending.insert(d_pending.end(), frame.begin(), frame.end());
    d_last_progress = now;
    feed_slep(now);
    absorb(now);
    send_buffer_state(true);
}

void ardop_tnc::arq_call(const std::string& args, double now)
{
    const auto w = words(args);
    if (w.empty() || w.size() > 2)
        return fault("ARQCALL needs a callsign and a repeat count");
    const auto target = normalize_call(w[0]);
    if (!target)
        return fault("ARQCALL: " + w[0] + " is not a callsign");
    if (w.size() == 2 && !parse_uint(w[1], 1, 15))
        return fault("ARQCALL: repeat count must be 1..15");
    if (d_fec_mode)
        return fault("ARQCALL in PROTOCOLMODE FEC");
    if (d_mycall.empty())
        return fault("ARQCALL before MYCALL");
    if (d_state != ardop_state::disc)
        return fault("not from state " + std::string(d_state == ardop_state::connecting
                                                         ? "CONNECTPENDING"
                                                         : "connected"));
    auto it = d_cfg.stations.find(*target);
    if (it == d_cfg.stations.end())
        it = d_cfg.stations.find(target->substr(0, target->find('-')));
    if (it == d_cfg.stations.end())
        return fault("no STANAG 5066 address for " + *target + " (station table)");
    if (!d_slep.bound())
        return fault("the STANAG 5066 node is not reachable");
    reply("ARQCALL " + args);
    const std::string request =
        "CONNECT " + d_mycall + " " + *target + " " + std::to_string(d_bandwidth) + "\r";
    d_stream = d_slep.open(it->second,
                           d_cfg.address,
                           d_cfg.address,
                           bytes(request.begin(), request.end()),
                           false,
                           false,
                           now);
    d_counters.sessions_called += 1;
    d_remote = *target;
    d_we_called = true;
    d_answered = false;
    d_answer_line.clear();
    d_deadline_connect = now + d_cfg.connect_timeout_s;
    new_state(ardop_state::connecting);
}

void ardop_tnc::command(const std::string& raw, double now)
{
    d_counters.commands += 1;
    const std::string line = trim(raw);
    const auto space = line.find(' ');
    const std::string name = upper(line.substr(0, space));
    const std::string arg =
        space == std::string::npos ? "" : trim(line.substr(space + 1));
    const bool get = arg.empty();

    auto boolean = [&](bool& value) {
        if (get)
            return reply(name + " " + bool_text(value));
        const auto b = parse_bool(arg);
        if (!b)
            return fault(name + " needs TRUE or FALSE");
        value = *b;
        reply(name + " now " + bool_text(value));
    };

    if (name == "INITIALIZE") {
        d_line_too_long = false;
        reply("INITIALIZE");
    } else if (name == "VERSION") {
        reply("VERSION " + d_cfg.version);
    } else if (name == "STATE") {
        static const char* names[] = { "DISC", "CONNECTPENDING", "", "DISCONNECTING" };
        reply(std::string("STATE ") + (d_state == ardop_state::connected
                                           ? (d_we_called ? "ISS" : "IRS")
                                           : names[int(d_state)]));
    } else if (name == "CODEC") {
        bool on = true;
        boolean(on); // the node's modem runs whatever the host says
    } else if (name == "MYCALL") {
        if (get) {
            if (d_mycall.empty())
                return fault("MYCALL not set");
            return reply("MYCALL " + d_mycall);
        }
        const auto c = normalize_call(arg);
        if (!c)
            return fault("MYCALL: " + arg + " is not a callsign");
        d_mycall = *c;
        reply("MYCALL now " + d_mycall);
    } else if (name == "MYAUX") {
        if (get) {
            std::string list;
            for (const auto& a : d_aux)
                list += (list.empty() ? "" : ",") + a;
            return reply("MYAUX " + (list.empty() ? std::string("-") : list));
        }
        std::vector<std::string> aux;
        std::string item;
        std::istringstream in(arg);
        while (std::getline(in, item, ',')) {
            if (trim(item).empty())
                continue;
            const auto c = normalize_call(item);
            if (!c)
                return fault("MYAUX: " + trim(item) + " is not a callsign");
            aux.push_back(*c);
        }
        if (aux.size() > 10)
            return fault("MYAUX: at most 10 callsigns");
        d_aux = aux;
        reply("MYAUX now " + arg);
    } else if (name == "GRIDSQUARE") {
        if (get)
            return reply("GRIDSQUARE " + (d_grid.empty() ? std::string("-") : d_grid));
        if (!valid_grid(arg))
            return fault("GRIDSQUARE: " + arg + " is not a 4, 6 or 8 character locator");
        d_grid = arg;
        reply("GRIDSQUARE now " + d_grid);
    } else if (name == "LISTEN") {
        boolean(d_listen);
    } else if (name == "CWID") {
        boolean(d_cwid);
    } else if (name == "PROTOCOLMODE") {
        if (get)
            return reply(std::string("PROTOCOLMODE ") + (d_fec_mode ? "FEC" : "ARQ"));
        const std::string m = upper(arg);
        if (m != "ARQ" && m != "FEC")
            return fault("PROTOCOLMODE needs ARQ or FEC");
        if (d_state != ardop_state::disc)
            return fault("PROTOCOLMODE not while a session is up");
        d_fec_mode = m == "FEC";
        reply("PROTOCOLMODE now " + m);
    } else if (name == "ARQBW") {
        if (get)
            return reply("ARQBW " + bandwidth_text());
        const std::string u = upper(arg);
        const auto letters = u.find_first_not_of("0123456789");
        const auto bw = parse_uint(u.substr(0, letters), 200, 2000);
        const std::string kind = letters == std::string::npos ? "MAX" : u.substr(letters);
        if (!bw || (*bw != 200 && *bw != 500 && *bw != 1000 && *bw != 2000) ||
            (kind != "MAX" && kind != "FORCED"))
            return fault("ARQBW needs 200, 500, 1000 or 2000 with MAX or FORCED");
        d_bandwidth = *bw;
        d_forced = kind == "FORCED";
        reply("ARQBW now " + bandwidth_text());
    } else if (name == "ARQTIMEOUT") {
        if (get)
            return reply("ARQTIMEOUT " + std::to_string(d_arq_timeout));
        const auto t = parse_uint(arg, 30, 240);
        if (!t)
            return fault("ARQTIMEOUT needs 30..240 seconds");
        d_arq_timeout = *t;
        reply("ARQTIMEOUT now " + std::to_string(d_arq_timeout));
    } else if (name == "FECMODE") {
        if (!get)
            d_fec_mode_name = upper(arg);
        reply(std::string("FECMODE ") + (get ? "" : "now ") + d_fec_mode_name);
    } else if (name == "FECREPEATS") {
        if (get)
            return reply("FECREPEATS " + std::to_string(d_fec_repeats));
        const auto r = parse_uint(arg, 0, 5);
        if (!r)
            return fault("FECREPEATS needs 0..5");
        d_fec_repeats = *r;
        reply("FECREPEATS now " + arg);
    } else if (name == "FECSEND") {
        bool sending = d_fec_mode;
        if (!get && !d_fec_mode && parse_bool(arg).value_or(false))
            return fault("FECSEND TRUE needs PROTOCOLMODE FEC");
        boolean(sending); // each data frame in FEC mode is sent as it arrives
    } else if (name == "ARQCALL") {
        arq_call(arg, now);
    } else if (name == "DISCONNECT") {
        reply("DISCONNECT");
        if (d_state == ardop_state::connected)
            begin_disconnect(now);
        else if (d_state == ardop_state::connecting)
            end_session("", now);
        else if (d_state == ardop_state::disc)
            reply("DISCONNECTED"); // nothing to end: said at once
    } else if (name == "ABORT" || name == "DIRTYDISCONNECT") {
        reply(name);
        if (d_state != ardop_state::disc) {
            d_counters.sessions_aborted += 1;
            end_session("", now);
        }
    } else if (name == "BUFFER") {
        reply("BUFFER " + std::to_string(outstanding()));
    } else if (name == "CLOSE") {
        reply("CLOSE");
        if (d_state != ardop_state::disc)
            end_session("", now);
    } else if (name == "SENDID") {
        reply("SENDID"); // the node's own addressing identifies the station on the air
    } else if (kept_settings().count(name)) {
        auto& value = d_kept[name];
        if (value.empty())
            value = kept_settings().at(name);
        if (!get)
            value = upper(arg);
        reply(name + (get ? " " : " now ") + value);
    } else if (unsupported(name)) {
        fault(name + " is not supported by this TNC (a STANAG 5066 node)");
    } else {
        fault("unknown command " + name);
    }
}

void ardop_tnc::on_host_closed(double now)
{
    if (d_state != ardop_state::disc) {
        d_counters.sessions_aborted += 1;
        end_session("", now);
    }
    d_actions.to_command.clear();
    d_actions.to_data.clear();
    d_line.clear();
    d_line_too_long = false;
    d_data_in.clear();
    d_data_since = -1;
    d_kept.clear();
    d_host_reading = true;
    reset_settings();
    absorb(now);
    d_actions.to_command.clear();
    d_actions.to_data.clear();
}

void ardop_tnc::set_host_reading(bool reading, double now)
{
    if (reading == d_host_reading)
        return;
    d_host_reading = reading;
    if (reading && d_stream && d_slep.exists(*d_stream))
        on_readable(*d_stream, now);
    absorb(now);
}

void ardop_tnc::set_channel_busy(bool busy)
{
    if (busy == d_channel_busy)
        return;
    d_channel_busy = busy;
    d_counters.busy_reports += 1;
    reply(busy ? "BUSY TRUE" : "BUSY FALSE");
}

ardop_actions ardop_tnc::take_actions()
{
    ardop_actions out;
    std::swap(out, d_actions);
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
