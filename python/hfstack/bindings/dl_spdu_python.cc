/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Python bindings of the S_PDU (Annex A), C_PDU (Annex B) and RCOP/UDOP (Annex F)
 * codecs (hand-written: these kernels are not public block headers). */
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dl/cpdu.h"
#include "dl/rcop.h"
#include "dl/spdu.h"
#include "dl_bytes.h"

namespace py = pybind11;
using namespace gr::hfstack::dl;
using hfstack_bindings::bytes_property;
using hfstack_bindings::to_bytes;
using hfstack_bindings::to_py;
using hfstack_bindings::value_or_raise;

namespace {

template <typename E>
void bind_name(py::module& m, const char* name)
{
    m.def(
        name, [](E v) { return std::string(to_string(v)); }, py::arg("value"));
}

} // namespace

void bind_dl_spdu(py::module& m)
{
    // ---- S_PDU ------------------------------------------------------------------
    py::enum_<spdu_type>(m, "spdu_type")
        .value("data", spdu_type::data)
        .value("data_delivery_confirm", spdu_type::data_delivery_confirm)
        .value("data_delivery_fail", spdu_type::data_delivery_fail)
        .value("hard_link_establishment_request",
               spdu_type::hard_link_establishment_request)
        .value("hard_link_establishment_confirm",
               spdu_type::hard_link_establishment_confirm)
        .value("hard_link_establishment_rejected",
               spdu_type::hard_link_establishment_rejected)
        .value("hard_link_terminate", spdu_type::hard_link_terminate)
        .value("hard_link_terminate_confirm", spdu_type::hard_link_terminate_confirm);
    py::enum_<data_delivery_fail_reason>(m, "data_delivery_fail_reason")
        .value("unassigned", data_delivery_fail_reason::unassigned)
        .value("destination_sap_not_bound",
               data_delivery_fail_reason::destination_sap_not_bound);
    py::enum_<hard_link_reject_reason>(m, "hard_link_reject_reason")
        .value("unassigned", hard_link_reject_reason::unassigned)
        .value("remote_node_busy", hard_link_reject_reason::remote_node_busy)
        .value("higher_priority_link_existing",
               hard_link_reject_reason::higher_priority_link_existing)
        .value("remote_node_not_responding",
               hard_link_reject_reason::remote_node_not_responding)
        .value("destination_sap_not_bound",
               hard_link_reject_reason::destination_sap_not_bound);
    py::enum_<hard_link_terminate_reason>(m, "hard_link_terminate_reason")
        .value("unassigned", hard_link_terminate_reason::unassigned)
        .value("client_request", hard_link_terminate_reason::client_request)
        .value("higher_priority_link_requested",
               hard_link_terminate_reason::higher_priority_link_requested)
        .value("destination_sap_unbound",
               hard_link_terminate_reason::destination_sap_unbound);
    py::enum_<hard_link_type>(m, "hard_link_type")
        .value("link_reservation", hard_link_type::link_reservation)
        .value("partial_bandwidth_reservation",
               hard_link_type::partial_bandwidth_reservation)
        .value("full_bandwidth_reservation", hard_link_type::full_bandwidth_reservation);
    m.attr("ttd_gmt_2s_limit") = ttd_gmt_2s_limit;

    py::class_<spdu> s(m, "spdu", "One S_PDU (flat: fields of other types are ignored).");
    s.def(py::init<>())
        .def(py::init([](spdu_type t) {
                 spdu x;
                 x.type = t;
                 return x;
             }),
             py::arg("type"))
        .def_readwrite("type", &spdu::type)
        .def_readwrite("priority", &spdu::priority)
        .def_readwrite("source_sap", &spdu::source_sap)
        .def_readwrite("destination_sap", &spdu::destination_sap)
        .def_readwrite("client_delivery_confirm_required",
                       &spdu::client_delivery_confirm_required)
        .def_readwrite("ttd_valid", &spdu::ttd_valid)
        .def_readwrite("ttd_julian_day", &spdu::ttd_julian_day)
        .def_readwrite("ttd_gmt_2s", &spdu::ttd_gmt_2s)
        .def_readwrite("link_type", &spdu::link_type)
        .def_readwrite("link_priority", &spdu::link_priority)
        .def_readwrite("requesting_sap", &spdu::requesting_sap)
        .def_readwrite("remote_sap", &spdu::remote_sap)
        .def_readwrite("reason", &spdu::reason)
        .def(py::self == py::self)
        .def(py::self != py::self)
        .def("__repr__", [](const spdu& x) {
            return std::string("<spdu ") + to_string(x.type) + ">";
        });
    bytes_property(s, "updu", &spdu::updu);

    m.def("spdu_header_size",
          &spdu_header_size,
          py::arg("spdu"),
          "Bytes of S_PCI in front of the U_PDU (3 or 5 for DATA, 2 or 1 otherwise).");
    m.def(
        "encode_spdu",
        [](const spdu& x) { return to_py(encode(x)); },
        py::arg("spdu"),
        "Encodes one S_PDU; raises EncodeError naming a field that does not fit.");
    m.def(
        "decode_spdu",
        [](const py::object& data) {
            auto b = to_bytes(data);
            return value_or_raise(decode_spdu(b.data(), b.size()));
        },
        py::arg("data"),
        "Decodes one S_PDU; raises ValueError('<error>: <reason>').");
    m.def(
        "spdu_reason_defined", &spdu_reason_defined, py::arg("type"), py::arg("reason"));
    bind_name<spdu_type>(m, "spdu_type_name");
    bind_name<data_delivery_fail_reason>(m, "data_delivery_fail_reason_name");
    bind_name<hard_link_reject_reason>(m, "hard_link_reject_reason_name");
    bind_name<hard_link_terminate_reason>(m, "hard_link_terminate_reason_name");
    bind_name<hard_link_type>(m, "hard_link_type_name");

    // ---- C_PDU ------------------------------------------------------------------
    py::enum_<cpdu_type>(m, "cpdu_type")
        .value("data", cpdu_type::data)
        .value("physical_link_request", cpdu_type::physical_link_request)
        .value("physical_link_accepted", cpdu_type::physical_link_accepted)
        .value("physical_link_rejected", cpdu_type::physical_link_rejected)
        .value("physical_link_break", cpdu_type::physical_link_break)
        .value("physical_link_break_confirm", cpdu_type::physical_link_break_confirm);
    py::enum_<physical_link_reject_reason>(m, "physical_link_reject_reason")
        .value("unknown", physical_link_reject_reason::unknown)
        .value("broadcast_only_node", physical_link_reject_reason::broadcast_only_node)
        .value("higher_priority_link_request_pending",
               physical_link_reject_reason::higher_priority_link_request_pending)
        .value("supporting_exclusive_link",
               physical_link_reject_reason::supporting_exclusive_link);
    py::enum_<physical_link_break_reason>(m, "physical_link_break_reason")
        .value("unknown", physical_link_break_reason::unknown)
        .value("higher_layer_request", physical_link_break_reason::higher_layer_request)
        .value("switching_to_broadcast_data_exchange",
               physical_link_break_reason::switching_to_broadcast_data_exchange)
        .value("higher_priority_link_request_pending",
               physical_link_break_reason::higher_priority_link_request_pending)
        .value("no_more_data", physical_link_break_reason::no_more_data);
    m.attr("cpdu_header_size") = cpdu_header_size;

    py::class_<cpdu> c(m, "cpdu", "One C_PDU (CAS-1, Annex B).");
    c.def(py::init<>())
        .def(py::init([](cpdu_type t) {
                 cpdu x;
                 x.type = t;
                 return x;
             }),
             py::arg("type"))
        .def_readwrite("type", &cpdu::type)
        .def_readwrite("exclusive_link", &cpdu::exclusive_link)
        .def_readwrite("lfsn", &cpdu::lfsn)
        .def_readwrite("reason", &cpdu::reason)
        .def(py::self == py::self)
        .def(py::self != py::self)
        .def("__repr__", [](const cpdu& x) {
            return std::string("<cpdu ") + to_string(x.type) + ">";
        });
    bytes_property(c, "spdu", &cpdu::spdu);

    m.def(
        "encode_cpdu",
        [](const cpdu& x) { return to_py(encode(x)); },
        py::arg("cpdu"),
        "Encodes one C_PDU; raises EncodeError naming a field that does not fit.");
    m.def(
        "decode_cpdu",
        [](const py::object& data) {
            auto b = to_bytes(data);
            return value_or_raise(decode_cpdu(b.data(), b.size()));
        },
        py::arg("data"),
        "Decodes one C_PDU; raises ValueError('<error>: <reason>').");
    m.def(
        "cpdu_reason_defined", &cpdu_reason_defined, py::arg("type"), py::arg("reason"));
    bind_name<cpdu_type>(m, "cpdu_type_name");
    bind_name<physical_link_reject_reason>(m, "physical_link_reject_reason_name");
    bind_name<physical_link_break_reason>(m, "physical_link_break_reason_name");

    // ---- RCOP / UDOP ------------------------------------------------------------
    m.attr("rcop_sap") = rcop_sap;
    m.attr("udop_sap") = udop_sap;
    m.attr("rcop_header_size") = rcop_header_size;
    m.attr("app_id_bftp") = app_id_bftp;
    m.attr("app_id_frap") = app_id_frap;
    m.attr("app_id_frap_v2") = app_id_frap_v2;
    m.attr("app_id_tmmhs_tmi1") = app_id_tmmhs_tmi1;
    m.attr("app_id_tmmhs_tmi2") = app_id_tmmhs_tmi2;
    m.attr("app_id_tmmhs_tmi3") = app_id_tmmhs_tmi3;
    m.attr("app_id_tmmhs_tmi4") = app_id_tmmhs_tmi4;
    m.attr("app_id_tmmhs_tmi5") = app_id_tmmhs_tmi5;
    m.attr("app_id_user_defined_first") = app_id_user_defined_first;

    py::class_<rcop_header>(
        m, "rcop_header", "6-byte RCOP/UDOP header (Annex F, Figure F-9).")
        .def(py::init<>())
        .def(py::init([](uint8_t conn, uint8_t id, uint16_t seg, uint16_t app) {
                 return rcop_header{ conn, id, seg, app };
             }),
             py::arg("connection_id"),
             py::arg("updu_id") = 0,
             py::arg("segment_number") = 0,
             py::arg("application_id") = 0)
        .def_readwrite("connection_id", &rcop_header::connection_id)
        .def_readwrite("updu_id", &rcop_header::updu_id)
        .def_readwrite("segment_number", &rcop_header::segment_number)
        .def_readwrite("application_id", &rcop_header::application_id)
        .def(py::self == py::self)
        .def(py::self != py::self)
        .def("__repr__", [](const rcop_header& h) {
            return "<rcop_header conn " + std::to_string(h.connection_id) + " updu " +
                   std::to_string(h.updu_id) + " seg " +
                   std::to_string(h.segment_number) + " app " +
                   std::to_string(h.application_id) + ">";
        });
    py::class_<rcop_pdu> r(m, "rcop_pdu", "RCOP/UDOP PDU: header and APP_DATA.");
    r.def(py::init<>())
        .def(py::init([](const rcop_header& h, const py::object& data) {
                 return rcop_pdu{ h, to_bytes(data) };
             }),
             py::arg("header"),
             py::arg("data") = py::bytes())
        .def_readwrite("header", &rcop_pdu::header)
        .def(py::self == py::self)
        .def(py::self != py::self)
        .def("__repr__", [](const rcop_pdu& x) {
            return "<rcop_pdu app " + std::to_string(x.header.application_id) + ", " +
                   std::to_string(x.data.size()) + " bytes>";
        });
    bytes_property(r, "data", &rcop_pdu::data);

    m.def(
        "encode_rcop",
        [](const rcop_pdu& x) { return to_py(encode(x)); },
        py::arg("pdu"),
        "Header then APP_DATA; raises EncodeError if connection_id > 15.");
    m.def(
        "encode_rcop",
        [](const rcop_header& x) { return to_py(encode(x)); },
        py::arg("header"),
        "The 6-byte header alone.");
    m.def(
        "decode_rcop",
        [](const py::object& data) {
            auto b = to_bytes(data);
            return value_or_raise(decode_rcop(b.data(), b.size()));
        },
        py::arg("data"),
        "Header and APP_DATA; raises ValueError('truncated: ...').");
    m.def(
        "decode_rcop_header",
        [](const py::object& data) {
            auto b = to_bytes(data);
            return value_or_raise(decode_rcop_header(b.data(), b.size()));
        },
        py::arg("data"),
        "Header only (APP_DATA starts at rcop_header_size).");
    m.def(
        "application_name",
        [](uint16_t id) { return std::string(application_name(id)); },
        py::arg("application_id"));
}
