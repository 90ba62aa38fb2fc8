/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* node_config by name: one table of every tunable, shared by Python, GRC and the
 * command line (node_engine.h). */
#include "node_engine.h"
#include "phy/s4539_modes.h"
#include "phy/waveform_modes.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

[[noreturn]] void
bad(const std::string& name, const std::string& value, const std::string& want)
{
    throw std::invalid_argument("option " + name + " = '" + value + "': expected " +
                                want);
}

std::string trim(const std::string& s)
{
    const auto a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos)
        return {};
    const auto b = s.find_last_not_of(" \t\r\n");
    return s.substr(a, b - a + 1);
}

double parse_double(const std::string& n, const std::string& v)
{
    if (v == "inf" || v == "infinity" || v == "none")
        return std::numeric_limits<double>::infinity();
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || errno || std::isnan(x) || x < 0)
        bad(n, v, "a number >= 0 (or inf)");
    return x;
}

unsigned long long
parse_uint(const std::string& n, const std::string& v, unsigned long long max)
{
    char* end = nullptr;
    errno = 0;
    const unsigned long long x = std::strtoull(v.c_str(), &end, 0);
    if (v.empty() || v[0] == '-' || *end || errno || x > max)
        bad(n, v, "an integer 0.." + std::to_string(max));
    return x;
}

bool parse_bool(const std::string& n, const std::string& v)
{
    if (v == "1" || v == "true" || v == "yes" || v == "on")
        return true;
    if (v == "0" || v == "false" || v == "no" || v == "off")
        return false;
    bad(n, v, "true or false");
}

std::string fmt(double x)
{
    if (std::isinf(x))
        return "inf";
    std::ostringstream o;
    o << x;
    return o.str();
}

node_waveform parse_waveform(const std::string& n, const std::string& v)
{
    try {
        return node_waveform_by_name(v);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("option " + n + " = '" + v + "': " + e.what());
    }
}

// A mode of the standard and bandwidth `mode` set (answer_mode).
modem_mode parse_mode_at(const node_config& c, const std::string& n, const std::string& v)
{
    const node_waveform w = parse_waveform(n, v);
    if (w.s5069_bandwidth_khz != c.s5069_bandwidth_khz)
        bad(n,
            v,
            c.s5069_bandwidth_khz
                ? "a STANAG 5069 mode at " + std::to_string(c.s5069_bandwidth_khz) +
                      " kHz, as mode (set mode first)"
                : "a STANAG 4539 mode, as mode (set mode first)");
    return w.mode;
}

// The mode option: a mode of either standard, and the defaults that go with its
// standard and bandwidth (wideband_modes.h): the rate ladder, the modes a change may
// pick, the answer mode; the modem's SNR reports are taken as they are at 5069
// bandwidths (the measured report maps are STANAG 4539's).
void set_waveform(node_config& c, const std::string& n, const std::string& v)
{
    const node_waveform w = parse_waveform(n, v);
    const node_config defaults;
    c.mode = w.mode;
    c.s5069_bandwidth_khz = w.s5069_bandwidth_khz;
    if (!w.s5069_bandwidth_khz) {
        c.rate_policy.table = defaults.rate_policy.table;
        c.rate_policy.initial = defaults.rate_policy.initial;
        c.rate_policy.correct_snr_reports = defaults.rate_policy.correct_snr_reports;
        c.rate_change.supported = defaults.rate_change.supported;
        c.answer_mode = defaults.answer_mode;
        return;
    }
    const auto m = s5069_mode_of(w.s5069_bandwidth_khz, w.mode);
    c.rate_policy.correct_snr_reports = false;
    c.answer_mode.reset();
    if (m->interleaver == phy::m110d_interleaver::medium)
        return; // a fixed mode only (the node refuses rate_adaptation with it)
    c.rate_policy.table = s5069_rate_table(m->bw_khz, m->interleaver);
    c.rate_policy.initial = w.mode;
    c.rate_change.supported = s5069_supported_modes(m->bw_khz, m->interleaver);
    // Answers without data: WN2 (about 1/8 of the bandwidth's top rate, with a 3 dB
    // margin over WN3), as 600S is beside 2400S.
    c.answer_mode = modem_mode{ 1, w.mode.interleaving };
}

channel_access_mode parse_access(const std::string& n, const std::string& v)
{
    if (v == "none")
        return channel_access_mode::none;
    if (v == "random_backoff")
        return channel_access_mode::random_backoff;
    if (v == "slotted")
        return channel_access_mode::slotted;
    bad(n, v, "none, random_backoff or slotted");
}

std::string access_name(channel_access_mode m)
{
    switch (m) {
    case channel_access_mode::none:
        return "none";
    case channel_access_mode::random_backoff:
        return "random_backoff";
    case channel_access_mode::slotted:
        return "slotted";
    }
    return "?";
}

uint32_t parse_node_address(const std::string& n, const std::string& v)
{
    auto a = parse_address(v);
    if (!a)
        bad(n, v, "a node address a.b.c.d");
    return a.value;
}

struct option_entry {
    const char* name;
    const char* help;
    std::function<void(node_config&, const std::string&, const std::string&)> set;
    std::function<std::string(const node_config&)> get;
};

#define HF_DOUBLE(NAME, FIELD, HELP)                                         \
    option_entry                                                             \
    {                                                                        \
        NAME, HELP,                                                          \
            [](node_config& c, const std::string& n, const std::string& v) { \
                c.FIELD = parse_double(n, v);                                \
            },                                                               \
            [](const node_config& c) { return fmt(c.FIELD); }                \
    }
#define HF_UINT(NAME, FIELD, MAX, HELP)                                      \
    option_entry                                                             \
    {                                                                        \
        NAME, HELP,                                                          \
            [](node_config& c, const std::string& n, const std::string& v) { \
                c.FIELD = decltype(c.FIELD)(parse_uint(n, v, MAX));          \
            },                                                               \
            [](const node_config& c) { return std::to_string(c.FIELD); }     \
    }
#define HF_BOOL(NAME, FIELD, HELP)                                                       \
    option_entry                                                                         \
    {                                                                                    \
        NAME, HELP,                                                                      \
            [](node_config& c, const std::string& n, const std::string& v) {             \
                c.FIELD = parse_bool(n, v);                                              \
            },                                                                           \
            [](const node_config& c) { return std::string(c.FIELD ? "true" : "false"); } \
    }

const std::vector<option_entry>& table()
{
    static const std::vector<option_entry> t = {
        option_entry{ "address",
                      "own node address a.b.c.d (28 bits)",
                      [](node_config& c, const std::string& n, const std::string& v) {
                          c.address = parse_node_address(n, v);
                      },
                      [](const node_config& c) { return address_to_string(c.address); } },
        option_entry{ "state_dir",
                      "directory of the node's journal, so that a restart delivers every "
                      "ARQ C_PDU once (empty: none)",
                      [](node_config& c, const std::string&, const std::string& v) {
                          c.state_dir = v;
                      },
                      [](const node_config& c) { return c.state_dir; } },
        option_entry{ "groups",
                      "group addresses received besides broadcast, space separated",
                      [](node_config& c, const std::string& n, const std::string& v) {
                          std::istringstream in(v);
                          std::string a;
                          c.groups.clear();
                          while (in >> a)
                              c.groups.push_back(parse_node_address(n, a));
                      },
                      [](const node_config& c) {
                          std::string s;
                          for (uint32_t g : c.groups)
                              s += (s.empty() ? "" : " ") + address_to_string(g);
                          return s;
                      } },
        HF_UINT("mtu", mtu, 4096, "largest U_PDU accepted from clients, bytes"),
        HF_BOOL("broadcast_only",
                broadcast_only,
                "non-ARQ only: no links, ARQ requests sent non-ARQ"),
        HF_UINT("queue.flow_off_bytes",
                queue.flow_off_bytes,
                1u << 30,
                "a client's queued bytes above which it gets S_DATA_FLOW_OFF (0: two "
                "longest transmissions, >= 64 KiB)"),
        HF_UINT("queue.flow_on_bytes",
                queue.flow_on_bytes,
                1u << 30,
                "queued bytes at or below which S_DATA_FLOW_ON follows (0: half of "
                "flow_off_bytes)"),
        HF_UINT("queue.max_total_bytes",
                queue.max_total_bytes,
                1u << 31,
                "cap on all queued bytes; requests beyond it are rejected"),
        HF_DOUBLE("supervision.keep_alive_interval_s",
                  supervision.keep_alive_interval_s,
                  "S_KEEP_ALIVE to a client silent this long"),
        HF_DOUBLE("supervision.keep_alive_answer_s",
                  supervision.keep_alive_answer_s,
                  "unbind a client not answering S_KEEP_ALIVE within this"),
        HF_UINT("supervision.max_invalid_primitives",
                supervision.max_invalid_primitives,
                1000000,
                "invalid primitives tolerated per window"),
        HF_DOUBLE("supervision.invalid_window_s",
                  supervision.invalid_window_s,
                  "window for counting invalid primitives"),
        HF_UINT("supervision.max_expedited_requests",
                supervision.max_expedited_requests,
                1000000,
                "expedited requests tolerated per window"),
        HF_DOUBLE("supervision.expedited_window_s",
                  supervision.expedited_window_s,
                  "window for counting expedited requests"),
        HF_DOUBLE("hard_link.response_timeout",
                  hard_link.response_timeout,
                  "caller: wait for HARD LINK ESTABLISHMENT CONFIRM"),
        HF_DOUBLE("hard_link.accept_timeout",
                  hard_link.accept_timeout,
                  "called type 2: wait for the client's answer"),
        HF_DOUBLE("hard_link.terminate_timeout",
                  hard_link.terminate_timeout,
                  "wait for HARD LINK TERMINATE CONFIRM"),
        HF_UINT("confirm_prefix_bytes",
                confirm_prefix_bytes,
                2048,
                "U_PDU bytes echoed in DATA DELIVERY CONFIRM/FAIL"),
        HF_UINT("cas.request_retries",
                cas.request_retries,
                100,
                "PHYSICAL LINK REQUEST retransmissions"),
        HF_DOUBLE("cas.response_timeout",
                  cas.response_timeout,
                  "wait for ACCEPTED/REJECTED, s"),
        HF_UINT("cas.break_retries",
                cas.break_retries,
                100,
                "PHYSICAL LINK BREAK retransmissions"),
        HF_DOUBLE("cas.break_timeout", cas.break_timeout, "wait for BREAK CONFIRM, s"),
        HF_DOUBLE("cas.idle_timeout",
                  cas.idle_timeout,
                  "break a link idle this long, s (inf: never)"),
        HF_DOUBLE("cas.first_data_timeout",
                  cas.first_data_timeout,
                  "called node: break a new link without data after this, s"),
        HF_BOOL("cas.exclusive_links_supported",
                cas.exclusive_links_supported,
                "accept exclusive links"),
        HF_UINT("cas.max_nonexclusive_links",
                cas.max_nonexclusive_links,
                64,
                "links up at once"),
        HF_DOUBLE("cas.yield_link_after_s",
                  cas.yield_link_after_s,
                  "a link up this long gives way to a node that has waited as long or "
                  "calls us, s (inf: never)"),
        HF_DOUBLE("network_memory_s",
                  network_memory_s,
                  "after hearing a third station, keep a network's fairness rules "
                  "this long, s"),
        HF_BOOL("network_assumed",
                network_assumed,
                "keep a network's rules from the start, before hearing other stations"),
        HF_BOOL("network_from_peer_bursts",
                network_from_peer_bursts,
                "keep a network's rules after a peer's data came in two bursts in a "
                "row cut at channel_access.network_burst_s"),
        HF_BOOL("call_into_turnaround",
                call_into_turnaround,
                "call in a pair's turnaround when two others have held the channel "
                "without a gap for twice as long as the network rules allow"),
        HF_DOUBLE("serve_in_turn_s",
                  serve_in_turn_s,
                  "on a network, serve linked peers one at a time, each for up to "
                  "this long, s (inf: off)"),
        HF_DOUBLE("serve_in_turn_catch_up_s",
                  serve_in_turn_catch_up_s,
                  "serving in turn, the most turn time a peer is owed for waiting for "
                  "its link while others were served, s (0: off)"),
        HF_DOUBLE("serve_in_turn_round_s",
                  serve_in_turn_round_s,
                  "serving in turn, the longest round of all the peers waiting for a "
                  "turn: a turn is at most this over their number, s (inf: off)"),
        HF_UINT("bare_turn_retries",
                bare_turn_retries,
                100,
                "serving in turn, times an unanswered turn by acknowledgement alone is "
                "given again"),
        HF_DOUBLE("bare_turn_retry_after_s",
                  bare_turn_retry_after_s,
                  "serving in turn, a peer whose turns by acknowledgement went "
                  "unanswered bare_turn_retries times gets one again this long after "
                  "the last (inf: not until we hear from it)"),
        HF_DOUBLE("network_round_s",
                  network_round_s,
                  "on a network, a burst lasts at most this over twice the number of "
                  "stations heard (at least 10 s), s (inf: off)"),
        HF_BOOL("reset_with_repeated_request",
                reset_with_repeated_request,
                "on a network, a repeated link request carries our FULL RESET again "
                "where the windows were never agreed"),
        HF_BOOL("network_round_by_directions",
                network_round_by_directions,
                "network_round_s counts one burst per station heard where data do "
                "not flow both ways through us"),
        HF_DOUBLE("serve_in_turn_lag_max_s",
                  serve_in_turn_lag_max_s,
                  "serving in turn, the next turn goes to the peer served least; a "
                  "peer's lag behind the most served counts up to this, s (0: round "
                  "robin)"),
        HF_DOUBLE("serve_in_turn_service_floor",
                  serve_in_turn_service_floor,
                  "serving the peer served least, the least share of the time of its "
                  "turns that counts as served (0..1)"),
        HF_DOUBLE("serve_in_turn_alike_turns",
                  serve_in_turn_alike_turns,
                  "serving the peer served least, peers within this many turns' service "
                  "of the least served go in round robin"),
        HF_BOOL("short_senders_keep_their_place",
                short_senders_keep_their_place,
                "serving the peer served least, a peer we have nothing for whose last "
                "data burst was short keeps its place in the round"),
        HF_BOOL("turn_change_floor_for_unheard_callers",
                turn_change_floor_for_unheard_callers,
                "serving in turn, callers heard in our gap but not read leave the "
                "gap's first slot to callers as a station heard without a link does"),
        HF_BOOL("unanswered_gap_burst_ends_stretch",
                unanswered_gap_burst_ends_stretch,
                "serving in turn, our burst that ended a gap and went unanswered counts "
                "as the gap used by callers not read"),
        HF_BOOL("turned_away_cleared_at_link_up",
                turned_away_cleared_at_link_up,
                "a new link forgets that the peer had turned away from us before it"),
        HF_BOOL("accepted_beside_others_contends",
                accepted_beside_others_contends,
                "on a network, a caller accepted in a burst that asks another node for "
                "an answer too answers after a back-off, not at once"),
        HF_BOOL("turns_by_acknowledgement",
                turns_by_acknowledgement,
                "serving in turn, a turn is given by the served peer's acknowledgement "
                "alone, and another's acknowledgements alone are its turn: we wait"),
        HF_BOOL("unsynced_callers_served",
                unsynced_callers_served,
                "serving in turn, a caller whose link is up but not yet in use gets "
                "its turn (our FULL RESET alone)"),
        HF_DOUBLE("ack_turn_answer_wait_s",
                  ack_turn_answer_wait_s,
                  "turns_by_acknowledgement: a turn given by an acknowledgement alone "
                  "holds the channel this long after our burst for the answer, s"),
        HF_BOOL("ack_turn_repeated",
                ack_turn_repeated,
                "turns_by_acknowledgement: a turn given by an acknowledgement alone and "
                "not answered is given again at once (bare_turn_retries)"),
        HF_BOOL("link_request_holds_channel",
                link_request_holds_channel,
                "on a network, a burst asking one node for a link and nothing of others "
                "leaves it the channel to answer"),
        HF_BOOL("exchange_bound_per_turn",
                exchange_bound_per_turn,
                "serving in turn, channel_access.max_exchange_s bounds the turns, not "
                "the bursts within one"),
        HF_BOOL("serve_in_turn_from_service",
                serve_in_turn_from_service,
                "serving in turn, a turn's time counts from the first burst that serves "
                "the peer (not from bursts asking others for links)"),
        HF_BOOL("serve_in_turn_by_bursts",
                serve_in_turn_by_bursts,
                "serving in turn, a turn lasts as many of our bursts to the peer as its "
                "length holds at the longest burst on the net, not a time"),
        HF_DOUBLE("sender_turn_min_burst_s",
                  sender_turn_min_burst_s,
                  "serving in turn, a turn of acknowledgements alone goes on while "
                  "another peer's data wait only after a burst of the served peer's "
                  "data this long, s (0: after any burst)"),
        HF_DOUBLE("link_retry_s",
                  link_retry_s,
                  "wait after a failed link before asking again, s (doubled per failure "
                  "in a row)"),
        HF_DOUBLE("link_retry_max_s",
                  link_retry_max_s,
                  "longest wait between link attempts to a peer that does not answer, s"),
        HF_UINT("arq_window",
                arq_window,
                32768,
                "ARQ window, 1..128 (1..32768 with large_windows)"),
        HF_BOOL("large_windows",
                large_windows,
                "S5066-EP5 large windows: long FSNs, negotiated per link in CAS-1 "
                "(Edition 3 with peers that do not advertise them)"),
        HF_UINT("segment_size",
                segment_size,
                1023,
                "ARQ segment bytes, 0 = adaptive (from the link's losses)"),
        HF_DOUBLE(
            "segment_prior_ber",
            segment_prior_ber,
            "adaptive segments: bit error rate assumed until a link's losses are known"),
        HF_BOOL("segment_from_heard_frames",
                segment_from_heard_frames,
                "adaptive segments: until a link's losses are measured, size them from "
                "the damaged data D_PDUs heard from the peer"),
        HF_BOOL("arq_ack_copy_on_lossy_link",
                arq_ack_copy_on_lossy_link,
                "on a link losing frames, the ack riding in a burst's first data D_PDU "
                "goes again in an ACK-ONLY after the data"),
        HF_BOOL("arq_ack_with_every_data_burst",
                arq_ack_with_every_data_burst,
                "on a link losing frames, every burst of ARQ data to a peer acks what we "
                "hold from it, also when nothing came since the last ack"),
        HF_DOUBLE("segment_probe_ber",
                  segment_probe_ber,
                  "adaptive segments: bit error rate a probe burst's segments are sized "
                  "for when more data follow it"),
        HF_BOOL("data_with_link_request",
                data_with_link_request,
                "first contact: ARQ data ride with the link request and window reset (an "
                "extension of STANAG 5066)"),
        HF_DOUBLE("link_request_hold_s",
                  link_request_hold_s,
                  "data_with_link_request: a first-contact link request waits this long "
                  "for more data, s"),
        HF_DOUBLE("segment_probe_s",
                  segment_probe_s,
                  "adaptive segments: air time of new data per transmission until the "
                  "link's losses are known, s"),
        HF_DOUBLE("unanswered_probe_s",
                  unanswered_probe_s,
                  "rate adaptation with autobaud: most seconds of ARQ data per "
                  "transmission after an unanswered one stepped the mode down, until the "
                  "peer answers (0: off)"),
        HF_UINT("non_arq_segment_size",
                non_arq_segment_size,
                1023,
                "non-ARQ segment bytes, 0 = as ARQ"),
        HF_BOOL("discard_on_client_close",
                discard_on_client_close,
                "U_PDUs queued by a client that closes or unbinds are discarded (else "
                "still sent)"),
        HF_BOOL("confirm_non_arq_when_sent",
                confirm_non_arq_when_sent,
                "non-ARQ (or group) requests asking delivery confirmation: confirmed "
                "once sent, else rejected (reason 5)"),
        HF_UINT("non_arq_repeats", non_arq_repeats, 15, "extra copies of non-ARQ D_PDUs"),
        HF_DOUBLE("non_arq_window_margin_s",
                  non_arq_window_margin_s,
                  "added to non-ARQ reception windows, s"),
        HF_UINT("max_response_timeouts",
                max_response_timeouts,
                1000,
                "unanswered transmissions before the link counts as lost"),
        HF_DOUBLE("max_transmission_s",
                  max_transmission_s,
                  "longest transmission, s (<= 127.5)"),
        HF_DOUBLE(
            "turnaround_s", turnaround_s, "radio/modem turnaround before keying up, s"),
        HF_DOUBLE("response_margin_s",
                  response_margin_s,
                  "added to the expected answer time, s"),
        option_entry{
            "channel_access.mode",
            "none, random_backoff (Annex K) or slotted",
            [](node_config& c, const std::string& n, const std::string& v) {
                c.channel_access.mode = parse_access(n, v);
            },
            [](const node_config& c) { return access_name(c.channel_access.mode); } },
        HF_DOUBLE("channel_access.idle_holdoff_s",
                  channel_access.idle_holdoff_s,
                  "quiet time after the carrier drops before any back-off, s"),
        HF_DOUBLE("channel_access.backoff_min_s",
                  channel_access.backoff_min_s,
                  "random back-off minimum, s"),
        HF_DOUBLE("channel_access.backoff_max_s",
                  channel_access.backoff_max_s,
                  "random back-off maximum, s"),
        HF_DOUBLE("channel_access.backoff_slot_s",
                  channel_access.backoff_slot_s,
                  "random back-off granularity, s (0: continuous)"),
        HF_DOUBLE("channel_access.persistence",
                  channel_access.persistence,
                  "probability of sending when the back-off expires"),
        HF_BOOL("channel_access.resume_backoff",
                channel_access.resume_backoff,
                "resume an interrupted back-off instead of drawing anew"),
        HF_DOUBLE("channel_access.quiet_channel_s",
                  channel_access.quiet_channel_s,
                  "heard nobody this long: send bursts back to back, s (0: never)"),
        HF_DOUBLE("channel_access.max_channel_hold_s",
                  channel_access.max_channel_hold_s,
                  "longest run of back-to-back bursts on a quiet channel, s"),
        HF_DOUBLE("channel_access.max_exchange_s",
                  channel_access.max_exchange_s,
                  "on a network, an exchange busy this long lets waiting stations "
                  "contend, s (inf: never)"),
        HF_DOUBLE("channel_access.contended_burst_s",
                  channel_access.contended_burst_s,
                  "on a network, the longest burst sent after a back-off, s (inf: no "
                  "limit)"),
        HF_DOUBLE("channel_access.network_burst_s",
                  channel_access.network_burst_s,
                  "on a network, the longest burst, s (inf: no limit)"),
        HF_DOUBLE("channel_access.turn_change_backoff_max_s",
                  channel_access.turn_change_backoff_max_s,
                  "serving in turn, the longest back-off of the gap left at a change "
                  "of turn, s (inf: the whole range)"),
        HF_DOUBLE("channel_access.turn_change_backoff_min_s",
                  channel_access.turn_change_backoff_min_s,
                  "serving in turn, the shortest back-off of the gap left at a change "
                  "of turn while a station heard has no link with us, s (0: "
                  "backoff_min_s)"),
        HF_DOUBLE("channel_access.max_exchange_stretch_s",
                  channel_access.max_exchange_stretch_s,
                  "serving in turn, the exchange bound doubles up to this while no "
                  "station uses the gaps left at it, s (0: off)"),
        HF_UINT("channel_access.max_exchange_stretch_after_gaps",
                channel_access.max_exchange_stretch_after_gaps,
                1000,
                "max_exchange_stretch_s: unused gaps in a row before the bound grows"),
        HF_DOUBLE("channel_access.waiting_caller_backoff_max_s",
                  channel_access.waiting_caller_backoff_max_s,
                  "on a network, the longest back-off of a station calling for a link "
                  "that has waited past max_exchange_s and a contention, s (inf: the "
                  "whole range)"),
        HF_UINT("channel_access.slot_number",
                channel_access.slot_number,
                1000,
                "slotted: this node's slot"),
        HF_DOUBLE("channel_access.slot_length_s",
                  channel_access.slot_length_s,
                  "slotted: slot length, s"),
        HF_DOUBLE("channel_access.base_delay_s",
                  channel_access.base_delay_s,
                  "slotted: delay before slot 0, s"),
        HF_UINT("channel_access.seed",
                channel_access.seed,
                0xFFFFFFFFu,
                "back-off random seed, 0 = from the node address"),
        option_entry{ "mode",
                      "waveform mode as the modem names it, e.g. 2400S, 600L, 4800U, "
                      "9600VS, 12800U (App C's US, VS, M, VL and 12800U only with "
                      "rate_adaptation off), or STANAG 5069 WN1-WN12 at one bandwidth, "
                      "e.g. WN12/48kHz/US (sets answer_mode, rate_policy.table and "
                      "rate_change.supported for that bandwidth: set those after it)",
                      [](node_config& c, const std::string& n, const std::string& v) {
                          set_waveform(c, n, v);
                      },
                      [](const node_config& c) {
                          return waveform_name(c.s5069_bandwidth_khz, c.mode);
                      } },
        HF_BOOL("rate_adaptation",
                rate_adaptation,
                "EOW data rate change driven by received SNR"),
        option_entry{
            "answer_mode",
            "rate adaptation with autobaud: mode of transmissions without data where the "
            "transmit mode is less robust, e.g. 600S; none: the transmit mode",
            [](node_config& c, const std::string& n, const std::string& v) {
                if (v == "none")
                    c.answer_mode.reset();
                else
                    c.answer_mode = parse_mode_at(c, n, v);
            },
            [](const node_config& c) {
                return c.answer_mode
                           ? waveform_name(c.s5069_bandwidth_khz, *c.answer_mode)
                           : std::string("none");
            } },
        HF_DOUBLE("rate_change.ack_timeout",
                  rate_change.ack_timeout,
                  "data rate change: wait for each answer, s"),
        HF_UINT("rate_change.max_retries",
                rate_change.max_retries,
                100,
                "data rate change retransmissions"),
        HF_BOOL("rate_change.tx_equals_rx",
                rate_change.tx_equals_rx,
                "our modem needs the same mode both ways"),
        HF_BOOL("rate_change.autobaud",
                rate_change.autobaud,
                "both modems recognise the received mode: change the transmit mode on an "
                "advisory at once, without the Annex C procedure"),
        HF_BOOL("rate_policy.correct_snr_reports",
                rate_policy.correct_snr_reports,
                "map the modem's SNR reports to true SNRs through its measured curves "
                "before deciding"),
        HF_DOUBLE("rate_policy.hysteresis_db",
                  rate_policy.hysteresis_db,
                  "margin above the next mode's threshold before stepping up, dB"),
        HF_DOUBLE("rate_policy.step_down_margin_db",
                  rate_policy.step_down_margin_db,
                  "margin below the mode's threshold before stepping down on SNR, dB"),
        HF_UINT("rate_policy.burst_works_frames",
                rate_policy.burst_works_frames,
                100000,
                "data D_PDUs a burst in the recommended mode needs to hold off SNR step "
                "downs (0: off)"),
        HF_DOUBLE("rate_policy.burst_works_damaged",
                  rate_policy.burst_works_damaged,
                  "largest damaged fraction of those D_PDUs for the burst to hold off "
                  "SNR step downs"),
        HF_BOOL("rate_policy.retx_step_down_goodput",
                rate_policy.retx_step_down_goodput,
                "step down on retransmissions only past 1 - R'/R too (R the mode's rate, "
                "R' the next lower entry's)"),
        HF_DOUBLE("rate_policy.retx_step_down",
                  rate_policy.retx_step_down,
                  "retransmitted fraction of received frames above which the link steps "
                  "down one entry"),
        HF_DOUBLE("rate_policy.sustain_time",
                  rate_policy.sustain_time,
                  "the margin must hold this long before stepping up, s"),
        HF_DOUBLE("rate_policy.min_dwell",
                  rate_policy.min_dwell,
                  "least time between a change and a step up, s"),
        HF_BOOL("rate_policy.first_report_decides",
                rate_policy.first_report_decides,
                "the first SNR report of a link picks its mode at once (no sustain or "
                "dwell)"),
        HF_UINT("rate_policy.step_up_entries",
                rate_policy.step_up_entries,
                100,
                "most table entries per step up (0: as far as the SNR allows)"),
        HF_DOUBLE("rate_policy.fast_time_constant",
                  rate_policy.fast_time_constant,
                  "SNR average for stepping down, s"),
        HF_DOUBLE("rate_policy.slow_time_constant",
                  rate_policy.slow_time_constant,
                  "SNR average for stepping up, s"),
        HF_BOOL("rate_policy.step_up_on_recent",
                rate_policy.step_up_on_recent,
                "step up on the SNR of a burst's last 20 s where the modem reports it "
                "(false: its whole mean)"),
        HF_BOOL("rate_policy.step_down_on_recent",
                rate_policy.step_down_on_recent,
                "step down on the SNR of a burst's last 20 s where the modem reports it "
                "(false: its whole mean)"),
        HF_UINT("rate_policy.unanswered_step_down",
                rate_policy.unanswered_step_down,
                20,
                "autobaud: table entries our transmit mode steps down per unanswered "
                "transmission (0: off)"),
    };
    return t;
}

#undef HF_DOUBLE
#undef HF_UINT
#undef HF_BOOL

const option_entry& find(const std::string& name)
{
    for (auto& e : table())
        if (name == e.name)
            return e;
    throw std::invalid_argument("unknown node option '" + name +
                                "' (node_options() lists them all)");
}

} // namespace

modem_mode node_mode_by_name(const std::string& name)
{
    std::string upper;
    for (char ch : name)
        upper += char(std::toupper(static_cast<unsigned char>(ch)));
    if (upper.size() > 1 && upper.back() == 'N')
        upper.back() = 'U'; // the node's old name for no interleaving
    const auto m = phy::waveform_mode_by_name(upper);
    if (!m || !m->s4539)
        throw std::invalid_argument(phy::s4539_mode_problem(name));
    modem_mode mode;
    mode.data_rate = data_rate_code(m->user_bps);
    mode.interleaving = interleaving_code(m->interleaver).value();
    return mode;
}

std::vector<node_option> node_options()
{
    const node_config defaults;
    std::vector<node_option> out;
    for (auto& e : table())
        out.push_back({ e.name, e.get(defaults), e.help });
    return out;
}

void set_node_option(node_config& config,
                     const std::string& name,
                     const std::string& value)
{
    const auto& e = find(trim(name));
    e.set(config, e.name, trim(value));
}

void for_each_assignment(
    const std::string& assignments,
    const std::string& what,
    const std::function<void(const std::string&, const std::string&)>& set)
{
    std::string item;
    auto flush = [&]() {
        const std::string t = trim(item);
        item.clear();
        if (t.empty())
            return;
        const auto eq = t.find('=');
        if (eq == std::string::npos)
            throw std::invalid_argument(what + " '" + t +
                                        "' is not of the form name=value");
        set(trim(t.substr(0, eq)), trim(t.substr(eq + 1)));
    };
    for (char ch : assignments) {
        if (ch == ';' || ch == ',' || ch == '\n')
            flush();
        else
            item += ch;
    }
    flush();
}

void set_node_options(node_config& config, const std::string& assignments)
{
    for_each_assignment(
        assignments, "node option", [&](const std::string& n, const std::string& v) {
            set_node_option(config, n, v);
        });
}

double parse_option_number(const std::string& name, const std::string& value)
{
    return parse_double(name, value);
}

bool parse_option_bool(const std::string& name, const std::string& value)
{
    return parse_bool(name, value);
}

std::string get_node_option(const node_config& config, const std::string& name)
{
    return find(trim(name)).get(config);
}

} // namespace dl
} // namespace hfstack
} // namespace gr
