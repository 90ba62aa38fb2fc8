/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Python bindings of the XMPP bridge's kernel (net/xmpp_*.h), in the submodule
 * hfstack.net: hfstack-xmpp (python/hfstack/apps/xmpp.py) moves the bytes, the
 * protocol stays in C++. Stanzas cross as XML text (a stanza's serialization, parsed
 * back here), SIS as primitives in and encoded frames out, events as tuples, so the
 * driver needs no tree objects. Hand-written: the kernel is not a public block header. */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dl_bytes.h"
#include "net/xmpp_bridge.h"
#include "net/xmpp_component.h"
#include "net/xmpp_rcop_link.h"
#include "net/xmpp_slep_link.h"
#include "net/xmpp_splitter.h"

namespace py = pybind11;
using namespace gr::hfstack;
using namespace gr::hfstack::net;
using hfstack_bindings::to_bytes;
using hfstack_bindings::to_py;

namespace {

// One stanza's text as the tree the kernel takes, read as if inside a stream whose
// default namespace is `ns`; ValueError unless the text is exactly one element.
xml_element parse_stanza(const std::string& text, const char* ns)
{
    xmpp_splitter splitter(text.size() + 1024);
    splitter.start_implicit(ns);
    std::vector<xmpp_split_event> out;
    if (!splitter.feed(reinterpret_cast<const uint8_t*>(text.data()), text.size(), out))
        throw py::value_error("not a stanza: " + splitter.error());
    if (out.size() != 1 || out[0].what != xmpp_split_event::kind::stanza ||
        splitter.in_stanza())
        throw py::value_error("not exactly one complete element");
    return std::move(out[0].element);
}

py::list frames_of(const std::vector<dl::sis_primitive>& primitives)
{
    py::list frames;
    for (const auto& p : primitives) {
        try {
            frames.append(to_py(dl::encode(p)));
        } catch (const dl::encode_error&) {
            // A primitive the codec refuses is a kernel bug; the link's counters show it.
        }
    }
    return frames;
}

const char* link_event_name(int k)
{
    static const char* names[] = { "bound", "unbound", "delivered", "failed", "stanza" };
    return k >= 0 && k < 5 ? names[k] : "?";
}

template <typename event>
py::tuple link_event(const event& e)
{
    return py::make_tuple(link_event_name(int(e.what)),
                          e.node,
                          e.id,
                          e.what == event::kind::stanza ? serialize(e.stanza) : "",
                          e.text);
}

// What both link kernels offer alike: a SIS client's life, and stanzas out and in.
template <typename link>
py::class_<link>& def_link_methods(py::class_<link>& c)
{
    return c.def("start", &link::start, py::arg("now"))
        .def("on_disconnected", &link::on_disconnected, py::arg("now"))
        .def("on_sis", &link::on_sis, py::arg("primitive"), py::arg("now"))
        .def("on_timer", &link::on_timer, py::arg("now"))
        .def("next_deadline", &link::next_deadline)
        .def(
            "take_actions",
            [](link& l) {
                auto a = l.take_actions();
                py::list events;
                for (const auto& e : a.events)
                    events.append(link_event(e));
                return py::make_tuple(frames_of(a.to_sis), events, a.notices);
            },
            "(SIS frames, [(kind, node, id, stanza, text)], notices)")
        .def("can_send", &link::can_send, py::arg("node"))
        .def(
            "send",
            [](link& l,
               uint32_t node,
               xmpp_stanza_id id,
               const std::string& wire,
               double now) { return l.send(node, id, wire, now); },
            py::arg("node"),
            py::arg("id"),
            py::arg("wire"),
            py::arg("now"))
        .def_property_readonly("bound", &link::bound);
}

xmpp_bridge_config config_of(const std::string& options)
{
    xmpp_bridge_config c;
    set_xmpp_options(c, options);
    return c;
}

x2x_slep_link_config slep_link_config(const xmpp_bridge_config& c, uint32_t incarnation)
{
    return x2x_slep_link_config_for(c, incarnation);
}

x2x_rcop_link_config rcop_link_config(const xmpp_bridge_config& c)
{
    return x2x_rcop_link_config_for(c);
}

py::dict bridge_counters(const xmpp_bridge& b)
{
    const auto& c = b.counters();
    py::dict d;
    d["from_component"] = c.from_component;
    d["from_peer"] = c.from_peer;
    d["sent"] = c.sent;
    d["resent"] = c.resent;
    d["delivered"] = c.delivered;
    d["failures"] = c.failures;
    d["wire_bytes_sent"] = c.wire_bytes_sent;
    d["to_component"] = c.to_component;
    d["rejected_from"] = c.rejected_from;
    d["rejected_to"] = c.rejected_to;
    d["not_stanza"] = c.not_stanza;
    d["oversize"] = c.oversize;
    d["chat_states_dropped"] = c.chat_states_dropped;
    d["chat_states_stripped"] = c.chat_states_stripped;
    d["xhtml_stripped"] = c.xhtml_stripped;
    d["presence_stripped"] = c.presence_stripped;
    d["presence_throttled"] = c.presence_throttled;
    d["pings_refused"] = c.pings_refused;
    d["bounced"] = c.bounced;
    d["queue_full"] = c.queue_full;
    d["timed_out"] = c.timed_out;
    d["errors_dropped"] = c.errors_dropped;
    d["held"] = c.held;
    d["held_bounced"] = c.held_bounced;
    d["queued"] = b.queued();
    d["held_now"] = b.held();
    return d;
}

} // namespace

void bind_xmpp(py::module& m)
{
    m.def(
        "xmpp_options",
        [] {
            py::list out;
            for (const auto& o : xmpp_options())
                out.append(py::make_tuple(o.name, o.default_value, o.help));
            return out;
        },
        "(name, default, help) of every XMPP bridge option");
    m.def(
        "check_xmpp_options",
        [](const std::string& options) {
            const auto c = config_of(options);
            py::dict d;
            for (const auto& o : xmpp_options())
                d[py::str(o.name)] = get_xmpp_option(c, o.name);
            return d;
        },
        py::arg("options"),
        "Every option's value after `options`; ValueError naming a bad one");
    m.def("component_handshake",
          &component_handshake,
          py::arg("stream_id"),
          py::arg("secret"),
          "The XEP-0114 handshake content for this stream id and secret");

    py::class_<xmpp_component_stream>(
        m,
        "xmpp_component",
        "One XEP-0114 component session (net/xmpp_component.h) over bytes the caller "
        "moves")
        .def(py::init<std::string, std::string, size_t, bool, size_t>(),
             py::arg("domain"),
             py::arg("secret"),
             py::arg("max_stanza_bytes") = 65536,
             py::arg("confirm_written") = false,
             py::arg("max_unconfirmed") = 4096)
        .def("start", &xmpp_component_stream::start)
        .def(
            "on_bytes",
            [](xmpp_component_stream& s, const py::object& data) {
                const auto b = to_bytes(data);
                s.on_bytes(b.data(), b.size());
            },
            py::arg("data"))
        .def("on_disconnected", &xmpp_component_stream::on_disconnected)
        .def(
            "send",
            [](xmpp_component_stream& s, const std::string& stanza) {
                return s.send(parse_stanza(stanza, xmpp_ns_component));
            },
            py::arg("stanza"),
            "Writes a stanza (XML text, jabber:component:accept form); False unless "
            "ready")
        .def("close", &xmpp_component_stream::close)
        .def(
            "take_actions",
            [](xmpp_component_stream& s) {
                auto a = s.take_actions();
                static const char* names[] = { "ready", "stanza", "closed", "error" };
                py::list events;
                for (const auto& e : a.events)
                    events.append(py::make_tuple(
                        names[int(e.what)],
                        e.what == xmpp_component_event::kind::stanza ? serialize(e.stanza)
                                                                     : "",
                        e.text));
                return py::make_tuple(py::bytes(a.to_server), events);
            },
            "(bytes for the server, [(kind, stanza, text)]), kind ready, stanza, closed "
            "or error")
        .def_property_readonly("ready", &xmpp_component_stream::ready)
        .def_property_readonly("domain", &xmpp_component_stream::domain)
        .def_property_readonly("stream_id", &xmpp_component_stream::stream_id)
        .def_property_readonly("stanzas_in", &xmpp_component_stream::stanzas_in)
        .def_property_readonly("stanzas_out", &xmpp_component_stream::stanzas_out)
        .def_property_readonly("unconfirmed", &xmpp_component_stream::unconfirmed)
        .def_property_readonly("rewritten", &xmpp_component_stream::rewritten)
        .def_property_readonly("given_up", &xmpp_component_stream::given_up);

    py::class_<xmpp_bridge>(
        m, "xmpp_bridge", "The per-peer XMPP bridge (net/xmpp_bridge.h), options by name")
        .def(py::init([](const std::string& options) {
                 return std::make_unique<xmpp_bridge>(config_of(options));
             }),
             py::arg("options"))
        .def(
            "from_component",
            [](xmpp_bridge& b,
               const std::string& component,
               const std::string& stanza,
               double now) {
                b.from_component(component, parse_stanza(stanza, xmpp_ns_component), now);
            },
            py::arg("component"),
            py::arg("stanza"),
            py::arg("now"))
        .def("set_component_ready",
             &xmpp_bridge::set_component_ready,
             py::arg("component"),
             py::arg("ready"),
             py::arg("now"))
        .def(
            "from_peer",
            [](xmpp_bridge& b, const std::string& stanza, double now) {
                b.from_peer(parse_stanza(stanza, xmpp_ns_server), now);
            },
            py::arg("stanza"),
            py::arg("now"))
        .def(
            "next_for_peer",
            [](xmpp_bridge& b, double now) -> py::object {
                auto o = b.next_for_peer(now);
                if (!o)
                    return py::none();
                return py::make_tuple(o->id, o->wire);
            },
            py::arg("now"),
            "(id, wire) of the next stanza for the link, or None")
        .def("delivered", &xmpp_bridge::delivered, py::arg("id"), py::arg("now"))
        .def("failed", &xmpp_bridge::failed, py::arg("id"), py::arg("now"))
        .def("on_timer", &xmpp_bridge::on_timer, py::arg("now"))
        .def("next_deadline", &xmpp_bridge::next_deadline)
        .def(
            "take_actions",
            [](xmpp_bridge& b) {
                auto a = b.take_actions();
                py::list to_component;
                for (const auto& t : a.to_component)
                    to_component.append(py::make_tuple(t.component, serialize(t.stanza)));
                return py::make_tuple(to_component, a.notices);
            },
            "([(component, stanza)] for our server, notices)")
        .def("option",
             [](const xmpp_bridge& b, const std::string& name) {
                 return get_xmpp_option(b.config(), name);
             })
        .def("counters", &bridge_counters);

    py::class_<x2x_slep_link> slep_link(
        m,
        "x2x_slep_link",
        "x2x-slep over a SIS connection (net/xmpp_slep_link.h), "
        "configured from the bridge options");
    slep_link.def(py::init([](const std::string& options, uint32_t incarnation) {
                      return std::make_unique<x2x_slep_link>(
                          slep_link_config(config_of(options), incarnation));
                  }),
                  py::arg("options") = "",
                  py::arg("incarnation") = 1);
    def_link_methods(slep_link).def("counters", [](const x2x_slep_link& l) {
        const auto& c = l.counters();
        py::dict d;
        d["stanzas_sent"] = c.stanzas_sent;
        d["stanzas_received"] = c.stanzas_received;
        d["plain_sent"] = c.plain_sent;
        d["wire_sent"] = c.wire_sent;
        d["plain_received"] = c.plain_received;
        d["wire_received"] = c.wire_received;
        d["streams_opened"] = c.streams_opened;
        d["streams_failed"] = c.streams_failed;
        d["bad_streams"] = c.bad_streams;
        return d;
    });

    py::class_<x2x_rcop_link> rcop_link(
        m,
        "x2x_rcop_link",
        "x2x-rcop over a SIS connection (net/xmpp_rcop_link.h), "
        "configured from the bridge options");
    rcop_link.def(py::init([](const std::string& options) {
                      return std::make_unique<x2x_rcop_link>(
                          rcop_link_config(config_of(options)));
                  }),
                  py::arg("options") = "");
    def_link_methods(rcop_link).def("counters", [](const x2x_rcop_link& l) {
        const auto c = l.receive_counters();
        py::dict d;
        d["pdus"] = c.pdus;
        d["stanzas"] = c.stanzas;
        d["truncated"] = c.truncated;
        d["out_of_order"] = c.out_of_order;
        d["foreign"] = c.foreign;
        d["short_pdus"] = c.short_pdus;
        d["malformed"] = c.malformed;
        d["stale_confirmations"] = l.stale_confirmations();
        return d;
    });
}
