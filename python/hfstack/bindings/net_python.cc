/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Python bindings of the HF-PEP kernel (net/pep.h), in the submodule hfstack.net: the
 * PEP's socket driver (python/hfstack/pep/proxy.py) is Python, the protocol stays in C++.
 * SIS crosses as encoded frames, TCP actions as tuples, so the driver needs no
 * primitive objects. Hand-written: the kernel is not a public block header. */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dl_bytes.h"
#include "net/dns_proxy.h"
#include "net/pep.h"

namespace py = pybind11;
using namespace gr::hfstack;
using namespace gr::hfstack::net;
using hfstack_bindings::to_bytes;
using hfstack_bindings::to_py;

namespace {

const char* kind_name(pep_action::kind k)
{
    switch (k) {
    case pep_action::kind::resolve:
        return "resolve";
    case pep_action::kind::connect:
        return "connect";
    case pep_action::kind::connected:
        return "connected";
    case pep_action::kind::failed:
        return "failed";
    case pep_action::kind::data:
        return "data";
    case pep_action::kind::resume:
        return "resume";
    case pep_action::kind::finish:
        return "finish";
    case pep_action::kind::reset:
        return "reset";
    case pep_action::kind::closed:
        return "closed";
    }
    return "?";
}

pep_status status_named(const std::string& name)
{
    for (uint8_t s = 0; s <= uint8_t(pep_status::no_peer); ++s)
        if (name == to_string(pep_status(s)))
            return pep_status(s);
    throw py::value_error("no PEP status '" + name + "'");
}

pep_request request_of(const std::string& address, uint16_t port)
{
    const auto a = parse_ip_address(address);
    if (!a)
        throw py::value_error("'" + address + "' is not an IP address");
    return { *a, port };
}

// An IP address as such, anything else as a host name the far proxy resolves.
pep_request destination_of(const std::string& address, uint16_t port)
{
    if (const auto a = parse_ip_address(address))
        return { *a, port };
    if (!valid_host_name(address))
        throw py::value_error("'" + address +
                              "' is neither an IP address nor a host name");
    pep_request r;
    r.port = port;
    r.name = address;
    return r;
}

py::dict counters_of(const pep& p)
{
    const auto& c = p.counters();
    const auto& s = p.transport().counters();
    py::dict d;
    d["accepted"] = c.accepted;
    d["refused_locally"] = c.refused_locally;
    d["opened"] = c.opened;
    d["connected"] = c.connected;
    d["failed"] = c.failed;
    d["incoming"] = c.incoming;
    d["connects"] = c.connects;
    d["connect_failures"] = c.connect_failures;
    d["resets_from_tcp"] = c.resets_from_tcp;
    d["resets_from_peer"] = c.resets_from_peer;
    d["idle_timeouts"] = c.idle_timeouts;
    d["peers_refused"] = c.peers_refused;
    d["destinations_refused"] = c.destinations_refused;
    d["resolves"] = c.resolves;
    d["resolve_failures"] = c.resolve_failures;
    d["evicted"] = c.evicted;
    d["rebinds"] = c.rebinds;
    d["closed"] = c.closed;
    d["bytes_up"] = c.bytes_up;
    d["bytes_down"] = c.bytes_down;
    d["connect_seconds"] = c.connect_seconds;
    d["connections"] = p.connection_count();
    d["slep_bytes_sent"] = s.bytes_sent;
    d["slep_bytes_received"] = s.bytes_received;
    d["slep_plain_written"] = s.plain_written;
    d["slep_wire_written"] = s.wire_written;
    d["slep_retransmissions"] = s.retransmissions;
    d["slep_rejections"] = s.rejections;
    d["slep_malformed"] = s.malformed;
    d["slep_peer_restarts"] = s.peer_restarts;
    d["bound"] = p.transport().bound();
    return d;
}

} // namespace

void bind_net(py::module& m)
{
    m.def(
        "pep_options",
        [] {
            py::list out;
            for (const auto& o : pep_options())
                out.append(py::make_tuple(o.name, o.default_value, o.help));
            return out;
        },
        "(name, default, help) of every PEP option");
    m.def(
        "check_pep_options",
        [](const std::string& options) {
            pep_config c;
            set_pep_options(c, options);
            pep p(c); // SLEP's own checks
            py::dict d;
            for (const auto& o : pep_options())
                d[py::str(o.name)] = get_pep_option(c, o.name);
            return d;
        },
        py::arg("options"),
        "Every option's value after `options`; ValueError naming a bad one");

    py::class_<pep>(
        m, "pep", "The HF-PEP kernel (net/pep.h), driven by python/hfstack/pep/proxy.py")
        .def(py::init([](const std::string& options, uint32_t incarnation) {
                 pep_config c;
                 set_pep_options(c, options);
                 c.slep.incarnation = incarnation ? incarnation : 1;
                 return std::make_unique<pep>(c);
             }),
             py::arg("options") = "",
             py::arg("incarnation") = 1)
        .def("start", &pep::start, py::arg("now"))
        .def("on_disconnected", &pep::on_disconnected, py::arg("now"))
        .def(
            "on_sis_frame",
            [](pep& p, const py::object& frame, double now) {
                const auto b = to_bytes(frame);
                const auto sis = dl::decode_sis(b.data(), b.size());
                if (!sis)
                    return sis.reason;
                p.on_sis(sis.value, now);
                return std::string();
            },
            py::arg("frame"),
            py::arg("now"),
            "Feeds one SIS frame from the node; returns '' or why it could not be "
            "decoded")
        .def("on_timer", &pep::on_timer, py::arg("now"))
        .def("next_deadline", &pep::next_deadline)
        .def(
            "accept",
            [](pep& p, const std::string& address, uint16_t port, double now) {
                return p.accept(destination_of(address, port), now);
            },
            py::arg("address"),
            py::arg("port"),
            py::arg("now"))
        .def(
            "resolved",
            [](pep& p,
               pep_connection c,
               const std::vector<std::string>& addresses,
               double now) {
                std::vector<ip_address> out;
                for (const auto& a : addresses)
                    out.push_back(request_of(a, 0).destination);
                p.resolved(c, out, now);
            },
            py::arg("connection"),
            py::arg("addresses"),
            py::arg("now"),
            "Far side: the addresses (text) a resolve action's name has; [] for none")
        .def("connected", &pep::connected, py::arg("connection"), py::arg("now"))
        .def(
            "connect_failed",
            [](pep& p, pep_connection c, const std::string& why, double now) {
                p.connect_failed(c, status_named(why), now);
            },
            py::arg("connection"),
            py::arg("status"),
            py::arg("now"))
        .def("tcp_space", &pep::tcp_space, py::arg("connection"))
        .def(
            "from_tcp",
            [](pep& p, pep_connection c, const py::bytes& data, double now) {
                const std::string s = data;
                return p.from_tcp(
                    c, reinterpret_cast<const uint8_t*>(s.data()), s.size(), now);
            },
            py::arg("connection"),
            py::arg("data"),
            py::arg("now"))
        .def("tcp_finished", &pep::tcp_finished, py::arg("connection"), py::arg("now"))
        .def("tcp_reset", &pep::tcp_reset, py::arg("connection"), py::arg("now"))
        .def(
            "take_tcp_data",
            [](pep& p, pep_connection c, size_t max, double now) {
                return to_py(p.take_tcp_data(c, max, now));
            },
            py::arg("connection"),
            py::arg("max"),
            py::arg("now"))
        .def("listen_datagrams", &pep::listen_datagrams, py::arg("address"))
        .def(
            "send_datagram",
            [](pep& p,
               uint32_t node,
               uint8_t to,
               uint8_t from,
               const py::bytes& data,
               double now) { p.send_datagram(node, to, from, to_bytes(data), now); },
            py::arg("node"),
            py::arg("to"),
            py::arg("from_address"),
            py::arg("data"),
            py::arg("now"))
        .def(
            "take_actions",
            [](pep& p) {
                auto a = p.take_actions();
                py::list frames, tcp, datagrams;
                for (const auto& prim : a.to_sis) {
                    try {
                        frames.append(to_py(dl::encode(prim)));
                    } catch (const dl::encode_error&) {
                        // A primitive the codec refuses is a kernel bug; the counters
                        // show it.
                    }
                }
                for (const auto& t : a.tcp)
                    tcp.append(py::make_tuple(kind_name(t.what),
                                              t.connection,
                                              t.what == pep_action::kind::resolve
                                                  ? t.destination.name
                                                  : to_string(t.destination.destination),
                                              t.destination.port,
                                              to_string(t.status)));
                for (const auto& d : a.datagrams)
                    datagrams.append(py::make_tuple(d.node, d.to, d.from, to_py(d.data)));
                return py::make_tuple(frames, tcp, a.notices, datagrams);
            },
            "(SIS frames for the node, [(kind, connection, address, port, status)], "
            "notices, "
            "[(node, to, from, data)] datagrams for listen_datagrams' addresses)")
        .def("counters", &counters_of)
        .def(
            "stats",
            [](const pep& p, pep_connection c) -> py::object {
                const auto s = p.stats(c);
                if (!s)
                    return py::none();
                py::dict d;
                d["near"] = s->near;
                d["destination"] = destination_text(s->destination);
                d["port"] = s->destination.port;
                d["peer"] = dl::address_to_string(s->peer_node);
                d["bytes_up"] = s->bytes_up;
                d["bytes_down"] = s->bytes_down;
                d["opened"] = s->opened;
                d["established"] = s->established;
                d["status"] = to_string(s->status);
                d["plain_sent"] = s->plain_sent;
                d["plain_received"] = s->plain_received;
                d["wire_sent"] = s->wire_sent;
                d["wire_received"] = s->wire_received;
                d["queued"] = s->queued;
                return d;
            },
            py::arg("connection"))
        .def("connection_count", &pep::connection_count)
        .def(
            "set_local_addresses",
            [](pep& p, const std::vector<std::string>& addresses) {
                std::vector<ip_address> out;
                for (const auto& a : addresses)
                    out.push_back(request_of(a, 0).destination);
                p.set_local_addresses(out);
            },
            py::arg("addresses"),
            "This host's own addresses (text): refused as destinations unless named")
        .def("limit_connections",
             &pep::limit_connections,
             py::arg("n"),
             "The driver's cap from its file descriptors")
        .def("connection_limit", &pep::connection_limit)
        .def(
            "option",
            [](const pep& p, const std::string& name) {
                return get_pep_option(p.config(), name);
            },
            py::arg("name"));

    py::class_<dns_proxy>(
        m, "dns_proxy", "The DNS proxy kernel (net/dns_proxy.h), both sides")
        .def(py::init([](const std::string& static_names, double max_stale_s) {
                 dns_proxy_config c;
                 set_dns_static_names(c, static_names);
                 c.max_stale_s = max_stale_s;
                 return std::make_unique<dns_proxy>(c);
             }),
             py::arg("static_names") = "",
             py::arg("max_stale_s") = 86400.0)
        .def(
            "on_query",
            [](dns_proxy& d, uint64_t client, const py::bytes& q, double now) {
                d.on_query(client, to_bytes(q), now);
            },
            py::arg("client"),
            py::arg("query"),
            py::arg("now"))
        .def(
            "on_answer",
            [](dns_proxy& d, uint32_t request, const py::bytes& r, double now) {
                d.on_answer(request, to_bytes(r), now);
            },
            py::arg("request"),
            py::arg("response"),
            py::arg("now"))
        .def(
            "on_question",
            [](dns_proxy& d, const py::bytes& q, uint64_t from, double now) {
                d.on_question(to_bytes(q), from, now);
            },
            py::arg("question"),
            py::arg("from_node"),
            py::arg("now"))
        .def(
            "resolved",
            [](dns_proxy& d, uint64_t request, const py::bytes& r, double now) {
                d.resolved(request, to_bytes(r), now);
            },
            py::arg("request"),
            py::arg("response"),
            py::arg("now"))
        .def("on_timer", &dns_proxy::on_timer, py::arg("now"))
        .def("next_deadline", &dns_proxy::next_deadline)
        .def(
            "take_actions",
            [](dns_proxy& d) {
                auto a = d.take_actions();
                py::list replies, forwards, lookups, back;
                for (const auto& r : a.replies)
                    replies.append(py::make_tuple(r.client, to_py(r.message)));
                for (const auto& f : a.forwards)
                    forwards.append(py::make_tuple(f.request, to_py(f.question)));
                for (const auto& l : a.lookups)
                    lookups.append(py::make_tuple(l.request, to_py(l.query)));
                for (const auto& b : a.answers_back)
                    back.append(py::make_tuple(b.to, to_py(b.message)));
                return py::make_tuple(replies, forwards, lookups, back);
            },
            "(replies [(client, message)], forwards [(request, question)], lookups "
            "[(request, query)], answers back [(node, message)])")
        .def("counters", [](const dns_proxy& d) {
            const auto& c = d.counters();
            py::dict out;
            out["queries"] = c.queries;
            out["cache_hits"] = c.cache_hits;
            out["stale_served"] = c.stale_served;
            out["static_answers"] = c.static_answers;
            out["forwarded"] = c.forwarded;
            out["coalesced"] = c.coalesced;
            out["retries_absorbed"] = c.retries_absorbed;
            out["answers"] = c.answers;
            out["malformed"] = c.malformed;
            out["refused"] = c.refused;
            out["timeouts"] = c.timeouts;
            out["lookups"] = c.lookups;
            out["cache_entries"] = d.cache_size();
            return out;
        });
}
