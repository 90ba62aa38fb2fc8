/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Python bindings of the kernels behind the radio amateurs' host interfaces, in the
 * submodule hfstack.net: the KISS gateway (net/kiss.h) for hfstack-kiss and the ARDOP
 * host interface (net/ardop.h) for hfstack-ardop. The apps move the bytes; the protocol
 * stays in C++. SIS goes in as primitives and out as encoded frames. Hand-written: the
 * kernels are not public block headers. */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dl_bytes.h"
#include "net/ardop.h"
#include "net/kiss.h"

namespace py = pybind11;
using namespace gr::hfstack;
using namespace gr::hfstack::net;
using hfstack_bindings::to_bytes;
using hfstack_bindings::to_py;

namespace {

py::bytes encoded(const dl::sis_primitive& p)
{
    // A primitive the codec refuses would be a kernel bug: let it raise.
    return to_py(dl::encode(p));
}

kiss_route route_of(const py::dict& d)
{
    kiss_route r;
    for (auto item : d) {
        const std::string key = item.first.cast<std::string>();
        const py::handle v = item.second;
        if (key == "port")
            r.port = v.cast<uint8_t>();
        else if (key == "sap")
            r.sap = v.cast<uint8_t>();
        else if (key == "destination")
            r.destination = v.cast<uint32_t>();
        else if (key == "arq")
            r.arq = v.cast<bool>();
        else if (key == "repeats")
            r.repeats = v.cast<uint8_t>();
        else if (key == "priority")
            r.priority = v.cast<uint8_t>();
        else if (key == "ttl_s")
            r.ttl_s = v.cast<double>();
        else
            throw py::value_error("unknown KISS route key " + key);
    }
    return r;
}

} // namespace

void bind_hamradio(py::module& m)
{
    m.def(
        "kiss_encode",
        [](uint8_t port, const py::object& data, uint8_t command) {
            const auto b = to_bytes(data);
            return to_py(kiss_encode(port, command, b.data(), b.size()));
        },
        py::arg("port"),
        py::arg("data"),
        py::arg("command") = kiss_data_command,
        "One KISS frame: FEND, type byte, escaped data, FEND");

    py::class_<kiss_decoder>(m, "kiss_decoder", "KISS bytes in, frames out (net/kiss.h)")
        .def(py::init<size_t>(), py::arg("max_frame") = 4096)
        .def(
            "feed",
            [](kiss_decoder& d, const py::object& data) {
                const auto b = to_bytes(data);
                std::vector<kiss_frame> frames;
                d.feed(b.data(), b.size(), frames);
                py::list out;
                for (const auto& f : frames)
                    out.append(py::make_tuple(f.port, f.command, to_py(f.data)));
                return out;
            },
            py::arg("data"),
            "[(port, command, data)] of the frames completed by these bytes")
        .def("counters", [](const kiss_decoder& d) {
            const auto& c = d.counters();
            py::dict out;
            out["frames"] = c.frames;
            out["garbage_bytes"] = c.garbage_bytes;
            out["bad_escapes"] = c.bad_escapes;
            out["oversize"] = c.oversize;
            return out;
        });

    py::class_<kiss_gateway>(
        m, "kiss_gateway", "KISS clients onto SIS, one connection per SAP (net/kiss.h)")
        .def(py::init([](const py::list& routes,
                         size_t max_frame,
                         size_t max_queued,
                         uint8_t rank) {
                 kiss_gateway_config c;
                 c.routes.clear();
                 for (auto r : routes)
                     c.routes.push_back(route_of(r.cast<py::dict>()));
                 c.max_frame = max_frame;
                 c.max_queued = max_queued;
                 c.rank = rank;
                 try {
                     return std::make_unique<kiss_gateway>(c);
                 } catch (const std::invalid_argument& e) {
                     throw py::value_error(e.what());
                 }
             }),
             py::arg("routes"),
             py::arg("max_frame") = 2048,
             py::arg("max_queued") = 64,
             py::arg("rank") = 0,
             "routes: dicts with any of port, sap, destination, arq, repeats, "
             "priority, ttl_s")
        .def("saps", &kiss_gateway::saps)
        .def("start", &kiss_gateway::start, py::arg("sap"))
        .def("on_disconnected", &kiss_gateway::on_disconnected, py::arg("sap"))
        .def("on_sis", &kiss_gateway::on_sis, py::arg("sap"), py::arg("primitive"))
        .def(
            "on_client_bytes",
            [](kiss_gateway& g, int client, const py::object& data) {
                const auto b = to_bytes(data);
                g.on_client_bytes(client, b.data(), b.size());
            },
            py::arg("client"),
            py::arg("data"))
        .def("on_client_closed", &kiss_gateway::on_client_closed, py::arg("client"))
        .def("bound", &kiss_gateway::bound, py::arg("sap"))
        .def(
            "take_actions",
            [](kiss_gateway& g) {
                auto a = g.take_actions();
                py::list frames;
                for (const auto& [sap, p] : a.to_sis)
                    frames.append(py::make_tuple(sap, encoded(p)));
                return py::make_tuple(frames, to_py(a.to_clients), a.notices);
            },
            "([(sap, SIS frame)], KISS bytes for every client, notices)")
        .def("counters", [](const kiss_gateway& g) {
            const auto& c = g.counters();
            py::dict d;
            d["frames_from_clients"] = c.frames_from_clients;
            d["bytes_from_clients"] = c.bytes_from_clients;
            d["updus_sent"] = c.updus_sent;
            d["updus_received"] = c.updus_received;
            d["bytes_received"] = c.bytes_received;
            d["frames_to_clients"] = c.frames_to_clients;
            d["commands_ignored"] = c.commands_ignored;
            d["unknown_port"] = c.unknown_port;
            d["too_large"] = c.too_large;
            d["queue_full"] = c.queue_full;
            d["confirmed"] = c.confirmed;
            d["rejected"] = c.rejected;
            d["garbage_bytes"] = c.garbage_bytes;
            d["bad_escapes"] = c.bad_escapes;
            d["oversize"] = c.oversize;
            return d;
        });

    py::class_<ardop_tnc>(
        m,
        "ardop_tnc",
        "The ARDOP-compatible host interface over SLEP (net/ardop.h): host bytes in, "
        "SIS and host bytes out")
        .def(py::init([](const std::map<std::string, uint32_t>& stations,
                         uint8_t sap,
                         uint8_t address,
                         uint32_t incarnation,
                         uint32_t fec_destination,
                         double connect_timeout_s,
                         double disconnect_timeout_s,
                         double data_frame_timeout_s,
                         double disconnected_delay_s,
                         double retry_s) {
                 ardop_config c;
                 c.stations = stations;
                 c.slep.sap = sap;
                 c.slep.incarnation = incarnation ? incarnation : 1;
                 c.slep.retry_s = retry_s;
                 c.address = address;
                 c.fec_destination = fec_destination;
                 c.connect_timeout_s = connect_timeout_s;
                 c.disconnect_timeout_s = disconnect_timeout_s;
                 c.data_frame_timeout_s = data_frame_timeout_s;
                 c.disconnected_delay_s = disconnected_delay_s;
                 try {
                     return std::make_unique<ardop_tnc>(c);
                 } catch (const std::invalid_argument& e) {
                     throw py::value_error(e.what());
                 }
             }),
             py::arg("stations"),
             py::arg("sap") = 13,
             py::arg("address") = 8,
             py::arg("incarnation") = 1,
             py::arg("fec_destination") = 0x1FFFFFFF,
             py::arg("connect_timeout_s") = 120.0,
             py::arg("disconnect_timeout_s") = 60.0,
             py::arg("data_frame_timeout_s") = 10.0,
             py::arg("disconnected_delay_s") = 1.0,
             py::arg("retry_s") = 15.0,
             "stations: {callsign: node address}")
        .def("start", &ardop_tnc::start, py::arg("now"))
        .def("on_disconnected", &ardop_tnc::on_disconnected, py::arg("now"))
        .def("on_sis", &ardop_tnc::on_sis, py::arg("primitive"), py::arg("now"))
        .def("on_timer", &ardop_tnc::on_timer, py::arg("now"))
        .def("next_deadline", &ardop_tnc::next_deadline)
        .def(
            "on_command_bytes",
            [](ardop_tnc& t, const py::object& data, double now) {
                const auto b = to_bytes(data);
                t.on_command_bytes(b.data(), b.size(), now);
            },
            py::arg("data"),
            py::arg("now"))
        .def(
            "on_data_bytes",
            [](ardop_tnc& t, const py::object& data, double now) {
                const auto b = to_bytes(data);
                t.on_data_bytes(b.data(), b.size(), now);
            },
            py::arg("data"),
            py::arg("now"))
        .def("on_host_closed", &ardop_tnc::on_host_closed, py::arg("now"))
        .def("set_host_reading",
             &ardop_tnc::set_host_reading,
             py::arg("reading"),
             py::arg("now"))
        .def_property_readonly("host_reading", &ardop_tnc::host_reading)
        .def("set_channel_busy", &ardop_tnc::set_channel_busy, py::arg("busy"))
        .def(
            "take_actions",
            [](ardop_tnc& t) {
                auto a = t.take_actions();
                py::list frames;
                for (const auto& p : a.to_sis)
                    frames.append(encoded(p));
                return py::make_tuple(
                    frames, py::bytes(a.to_command), to_py(a.to_data), a.notices);
            },
            "(SIS frames, command bytes, data bytes, notices)")
        .def_property_readonly("bound", &ardop_tnc::bound)
        .def_property_readonly("pending", &ardop_tnc::pending)
        .def_property_readonly("state",
                               [](const ardop_tnc& t) {
                                   static const char* names[] = {
                                       "disc", "connecting", "connected", "disconnecting"
                                   };
                                   return std::string(names[int(t.state())]);
                               })
        .def_static("normalize_call",
                    [](const std::string& text) -> py::object {
                        const auto c = ardop_tnc::normalize_call(text);
                        if (!c)
                            return py::none();
                        return py::str(*c);
                    })
        .def("counters", [](const ardop_tnc& t) {
            const auto& c = t.counters();
            const auto& s = t.transport().counters();
            py::dict d;
            d["commands"] = c.commands;
            d["faults"] = c.faults;
            d["sessions_called"] = c.sessions_called;
            d["sessions_answered"] = c.sessions_answered;
            d["sessions_refused"] = c.sessions_refused;
            d["sessions_failed"] = c.sessions_failed;
            d["sessions_aborted"] = c.sessions_aborted;
            d["bytes_from_host"] = c.bytes_from_host;
            d["bytes_to_host"] = c.bytes_to_host;
            d["fec_frames_sent"] = c.fec_frames_sent;
            d["fec_frames_received"] = c.fec_frames_received;
            d["bad_requests"] = c.bad_requests;
            d["fec_frames_dropped_unread"] = c.fec_frames_dropped_unread;
            d["busy_reports"] = c.busy_reports;
            d["slep_bytes_sent"] = s.bytes_sent;
            d["slep_bytes_received"] = s.bytes_received;
            d["slep_retransmissions"] = s.retransmissions;
            d["slep_rejections"] = s.rejections;
            d["slep_peer_restarts"] = s.peer_restarts;
            return d;
        });
}
