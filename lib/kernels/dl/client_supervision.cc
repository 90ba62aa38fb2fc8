/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "client_supervision.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace gr {
namespace hfstack {
namespace dl {

namespace {
constexpr double never = std::numeric_limits<double>::infinity();
} // namespace

client_supervision_config in_protocol_time(client_supervision_config c, double time_scale)
{
    for (double* t : { &c.keep_alive_interval_s,
                       &c.keep_alive_answer_s,
                       &c.invalid_window_s,
                       &c.expedited_window_s })
        *t *= time_scale;
    c.time_scale *= time_scale;
    return c;
}

namespace {

std::string number(double x)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
}

} // namespace

client_supervision::client_supervision(client_supervision_config config)
    : d_config(config)
{
}

void client_supervision::on_connected(uint32_t client, double now)
{
    client_state s;
    s.last_heard = now;
    d_clients[client] = s;
}

void client_supervision::on_closed(uint32_t client) { d_clients.erase(client); }

bool client_supervision::over_limit(std::deque<double>& times,
                                    double now,
                                    double window,
                                    unsigned max)
{
    times.push_back(now);
    while (!times.empty() && times.front() <= now - window)
        times.pop_front();
    return times.size() > max;
}

void client_supervision::on_primitive(uint32_t client, const sis_primitive& p, double now)
{
    auto it = d_clients.find(client);
    if (it == d_clients.end())
        return;
    client_state& s = it->second;
    s.last_heard = now;
    if (p.type == sis_type::keep_alive) {
        d_counters.keep_alives_received += 1;
        // The client's answer to our keep-alive is not answered again (no ping-pong).
        if (s.keep_alive_sent_at == never) {
            d_messages.push_back(make_client_message(client, sis_type::keep_alive));
            d_counters.keep_alives_answered += 1;
        }
    }
    s.keep_alive_sent_at = never; // anything the client sends shows it is alive
    if (p.type == sis_type::expedited_unidata_request &&
        over_limit(s.expedited_times,
                   now,
                   d_config.expedited_window_s,
                   d_config.max_expedited_requests)) {
        d_counters.unbound_expedited += 1;
        disconnect(client,
                   sis_unbind_reason::too_many_expedited_requests,
                   "more than " + std::to_string(d_config.max_expedited_requests) +
                       " expedited requests in " +
                       std::to_string(d_config.expedited_window_s) + " s");
    }
}

void client_supervision::on_invalid(uint32_t client, const std::string& why, double now)
{
    auto it = d_clients.find(client);
    if (it == d_clients.end())
        return;
    d_counters.invalid_primitives += 1;
    it->second.last_heard = now;
    if (over_limit(it->second.invalid_times,
                   now,
                   d_config.invalid_window_s,
                   d_config.max_invalid_primitives)) {
        d_counters.unbound_invalid += 1;
        disconnect(client,
                   sis_unbind_reason::too_many_invalid_primitives,
                   "too many invalid primitives, last: " + why);
    }
}

void client_supervision::on_timer(double now)
{
    std::vector<uint32_t> silent;
    for (auto& [client, s] : d_clients) {
        if (s.keep_alive_sent_at != never) {
            if (now >= s.keep_alive_sent_at + d_config.keep_alive_answer_s)
                silent.push_back(client);
        } else if (now >= s.last_heard + d_config.keep_alive_interval_s) {
            d_messages.push_back(make_client_message(client, sis_type::keep_alive));
            d_counters.keep_alives_sent += 1;
            s.keep_alive_sent_at = now;
        }
    }
    for (uint32_t client : silent) {
        d_counters.unbound_inactive += 1;
        // The client waited in real time; the protocol figure beside it when they differ.
        const double wait = d_config.keep_alive_answer_s, scale = d_config.time_scale;
        std::string within = number(wait / scale) + " s";
        if (scale != 1.0)
            within += " of real time (" + number(wait) +
                      " s of protocol time at time_scale " + number(scale) + ")";
        disconnect(client,
                   sis_unbind_reason::keep_alive_inactivity,
                   "no answer to S_KEEP_ALIVE within " + within);
    }
}

void client_supervision::expel(uint32_t client,
                               sis_unbind_reason reason,
                               std::string detail)
{
    if (d_clients.count(client) == 0)
        on_connected(client, 0);
    if (reason == sis_unbind_reason::too_many_invalid_primitives)
        d_counters.unbound_invalid += 1;
    disconnect(client, reason, std::move(detail));
}

void client_supervision::disconnect(uint32_t client,
                                    sis_unbind_reason reason,
                                    std::string detail)
{
    d_messages.push_back(
        make_client_message(client, sis_type::unbind_indication, uint8_t(reason)));
    d_disconnects.push_back({ client, reason, std::move(detail) });
    d_clients.erase(client);
}

std::vector<client_message> client_supervision::take_messages()
{
    std::vector<client_message> out;
    out.swap(d_messages);
    return out;
}

std::vector<client_disconnect> client_supervision::take_disconnects()
{
    std::vector<client_disconnect> out;
    out.swap(d_disconnects);
    return out;
}

double client_supervision::next_deadline() const
{
    double t = never;
    for (const auto& [client, s] : d_clients)
        t = std::min(t,
                     s.keep_alive_sent_at != never
                         ? s.keep_alive_sent_at + d_config.keep_alive_answer_s
                         : s.last_heard + d_config.keep_alive_interval_s);
    return t;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
