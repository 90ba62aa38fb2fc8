/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Python bindings of the SIS codec (STANAG 5066 Annex A S_primitives) and of the
 * TCP stream reassembler (hand-written: these kernels are not public block headers). */
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dl/sis.h"
#include "dl_bytes.h"

namespace py = pybind11;
using namespace gr::hfstack::dl;
using hfstack_bindings::bytes_property;
using hfstack_bindings::to_bytes;
using hfstack_bindings::to_py;
using hfstack_bindings::value_or_raise;

namespace {

std::string address_repr(const sis_address& a)
{
    return address_to_string(a.address) + "/" + std::to_string(unsigned(a.size_nibbles));
}

} // namespace

void bind_dl_sis(py::module& m)
{
    py::enum_<sis_type>(m, "sis_type")
        .value("bind_request", sis_type::bind_request)
        .value("unbind_request", sis_type::unbind_request)
        .value("bind_accepted", sis_type::bind_accepted)
        .value("bind_rejected", sis_type::bind_rejected)
        .value("unbind_indication", sis_type::unbind_indication)
        .value("hard_link_establish", sis_type::hard_link_establish)
        .value("hard_link_terminate", sis_type::hard_link_terminate)
        .value("hard_link_established", sis_type::hard_link_established)
        .value("hard_link_rejected", sis_type::hard_link_rejected)
        .value("hard_link_terminated", sis_type::hard_link_terminated)
        .value("hard_link_indication", sis_type::hard_link_indication)
        .value("hard_link_accept", sis_type::hard_link_accept)
        .value("hard_link_reject", sis_type::hard_link_reject)
        .value("subnet_availability", sis_type::subnet_availability)
        .value("data_flow_on", sis_type::data_flow_on)
        .value("data_flow_off", sis_type::data_flow_off)
        .value("keep_alive", sis_type::keep_alive)
        .value("management_msg_request", sis_type::management_msg_request)
        .value("management_msg_indication", sis_type::management_msg_indication)
        .value("unidata_request", sis_type::unidata_request)
        .value("unidata_indication", sis_type::unidata_indication)
        .value("unidata_request_confirm", sis_type::unidata_request_confirm)
        .value("unidata_request_rejected", sis_type::unidata_request_rejected)
        .value("expedited_unidata_request", sis_type::expedited_unidata_request)
        .value("expedited_unidata_indication", sis_type::expedited_unidata_indication)
        .value("expedited_unidata_request_confirm",
               sis_type::expedited_unidata_request_confirm)
        .value("expedited_unidata_request_rejected",
               sis_type::expedited_unidata_request_rejected);
    m.def(
        "sis_type_name",
        [](sis_type t) { return std::string(to_string(t)); },
        py::arg("type"),
        "'S_BIND_REQUEST' ... 'S_EXPEDITED_UNIDATA_REQUEST_REJECTED'; 'S_UNKNOWN' "
        "otherwise.");
    m.def("is_known_sis_type", &is_known_sis_type, py::arg("type"));

    // Fields keep whatever a peer sent: sis_tx_mode(7) etc. construct unnamed values.
    py::enum_<sis_tx_mode>(m, "sis_tx_mode")
        .value("ignore", sis_tx_mode::ignore)
        .value("arq", sis_tx_mode::arq)
        .value("non_arq", sis_tx_mode::non_arq)
        .value("non_arq_with_errors", sis_tx_mode::non_arq_with_errors);
    py::enum_<sis_delivery_confirmation>(m, "sis_delivery_confirmation")
        .value("none", sis_delivery_confirmation::none)
        .value("node", sis_delivery_confirmation::node)
        .value("client", sis_delivery_confirmation::client);
    py::enum_<sis_delivery_order>(m, "sis_delivery_order")
        .value("in_order", sis_delivery_order::in_order)
        .value("as_they_arrive", sis_delivery_order::as_they_arrive);
    py::enum_<sis_subnet_status>(m, "sis_subnet_status")
        .value("off", sis_subnet_status::off)
        .value("on", sis_subnet_status::on)
        .value("receive_only", sis_subnet_status::receive_only)
        .value("half_duplex", sis_subnet_status::half_duplex)
        .value("full_duplex", sis_subnet_status::full_duplex);

    // Values of sis_primitive.reason (an int): use int(dl.sis_unbind_reason.x) or assign
    // the enumerator directly.
    py::enum_<sis_bind_rejected_reason>(m, "sis_bind_rejected_reason")
        .value("unknown", sis_bind_rejected_reason::unknown)
        .value("not_enough_resources", sis_bind_rejected_reason::not_enough_resources)
        .value("invalid_sap", sis_bind_rejected_reason::invalid_sap)
        .value("sap_already_allocated", sis_bind_rejected_reason::sap_already_allocated)
        .value("arq_unsupportable_during_broadcast",
               sis_bind_rejected_reason::arq_unsupportable_during_broadcast);
    py::enum_<sis_unbind_reason>(m, "sis_unbind_reason")
        .value("unknown", sis_unbind_reason::unknown)
        .value("preempted_by_higher_rank", sis_unbind_reason::preempted_by_higher_rank)
        .value("keep_alive_inactivity", sis_unbind_reason::keep_alive_inactivity)
        .value("too_many_invalid_primitives",
               sis_unbind_reason::too_many_invalid_primitives)
        .value("too_many_expedited_requests",
               sis_unbind_reason::too_many_expedited_requests)
        .value("arq_unsupportable_during_broadcast",
               sis_unbind_reason::arq_unsupportable_during_broadcast);
    py::enum_<sis_hard_link_rejected_reason>(m, "sis_hard_link_rejected_reason")
        .value("remote_busy", sis_hard_link_rejected_reason::remote_busy)
        .value("higher_priority_link_exists",
               sis_hard_link_rejected_reason::higher_priority_link_exists)
        .value("remote_not_responding",
               sis_hard_link_rejected_reason::remote_not_responding)
        .value("destination_sap_not_bound",
               sis_hard_link_rejected_reason::destination_sap_not_bound)
        .value("type0_link_exists", sis_hard_link_rejected_reason::type0_link_exists);
    py::enum_<sis_hard_link_terminated_reason>(m, "sis_hard_link_terminated_reason")
        .value("terminated_by_remote",
               sis_hard_link_terminated_reason::terminated_by_remote)
        .value("higher_priority_link_requested",
               sis_hard_link_terminated_reason::higher_priority_link_requested)
        .value("remote_not_responding",
               sis_hard_link_terminated_reason::remote_not_responding)
        .value("destination_sap_not_bound",
               sis_hard_link_terminated_reason::destination_sap_not_bound)
        .value("physical_link_broken",
               sis_hard_link_terminated_reason::physical_link_broken);
    py::enum_<sis_subnet_reason>(m, "sis_subnet_reason")
        .value("unknown", sis_subnet_reason::unknown)
        .value("local_node_in_emcon", sis_subnet_reason::local_node_in_emcon)
        .value("higher_priority_link_requested",
               sis_subnet_reason::higher_priority_link_requested);
    py::enum_<sis_unidata_rejected_reason>(m, "sis_unidata_rejected_reason")
        .value("unknown", sis_unidata_rejected_reason::unknown)
        .value("ttl_expired", sis_unidata_rejected_reason::ttl_expired)
        .value("destination_sap_not_bound",
               sis_unidata_rejected_reason::destination_sap_not_bound)
        .value("destination_not_responding",
               sis_unidata_rejected_reason::destination_not_responding)
        .value("updu_larger_than_mtu", sis_unidata_rejected_reason::updu_larger_than_mtu)
        .value("tx_mode_not_specified",
               sis_unidata_rejected_reason::tx_mode_not_specified);

    py::class_<sis_address>(
        m,
        "sis_address",
        "4-byte SIS address: 29 bits (group flag = bit 28) and a 3-bit size "
        "in nibbles.")
        .def(py::init<>())
        .def(py::init([](uint32_t address, uint8_t size_nibbles) {
                 return sis_address{ address, size_nibbles };
             }),
             py::arg("address"),
             py::arg("size_nibbles") = 7)
        .def_readwrite("address", &sis_address::address)
        .def_readwrite("size_nibbles", &sis_address::size_nibbles)
        .def(py::self == py::self)
        .def(py::self != py::self)
        .def("__repr__", [](const sis_address& a) {
            return "<sis_address " + address_repr(a) + ">";
        });

    py::class_<sis_service_type>(m, "sis_service_type")
        .def(py::init<>())
        .def(py::init([](sis_tx_mode tx,
                         sis_delivery_confirmation dc,
                         sis_delivery_order order,
                         bool extended,
                         uint8_t retx) {
                 return sis_service_type{ tx, dc, order, extended, retx };
             }),
             py::arg("tx_mode"),
             py::arg("delivery_confirmation") = sis_delivery_confirmation::none,
             py::arg("delivery_order") = sis_delivery_order::in_order,
             py::arg("extended") = false,
             py::arg("min_retransmissions") = 0)
        .def_readwrite("tx_mode", &sis_service_type::tx_mode)
        .def_readwrite("delivery_confirmation", &sis_service_type::delivery_confirmation)
        .def_readwrite("delivery_order", &sis_service_type::delivery_order)
        .def_readwrite("extended", &sis_service_type::extended)
        .def_readwrite("min_retransmissions", &sis_service_type::min_retransmissions)
        .def(py::self == py::self)
        .def(py::self != py::self)
        .def("__repr__", [](const sis_service_type& s) {
            return "<sis_service_type tx_mode " + std::to_string(unsigned(s.tx_mode)) +
                   " confirm " + std::to_string(unsigned(s.delivery_confirmation)) +
                   " order " + std::to_string(unsigned(s.delivery_order)) + ">";
        });

    py::class_<sis_block_range>(m, "sis_block_range")
        .def(py::init<>())
        .def(py::init([](uint16_t offset, uint16_t size) {
                 return sis_block_range{ offset, size };
             }),
             py::arg("offset"),
             py::arg("size"))
        .def_readwrite("offset", &sis_block_range::offset)
        .def_readwrite("size", &sis_block_range::size)
        .def(py::self == py::self)
        .def(py::self != py::self)
        .def("__repr__", [](const sis_block_range& b) {
            return "<sis_block_range " + std::to_string(b.offset) + "+" +
                   std::to_string(b.size) + ">";
        });

    py::class_<sis_primitive> p(
        m,
        "sis_primitive",
        "One S_primitive (flat: each type uses its fields, encode ignores the others). "
        "errored_blocks / non_received_blocks read as copies: assign a whole list.");
    p.def(py::init<>())
        .def(py::init([](sis_type t) {
                 sis_primitive x;
                 x.type = t;
                 return x;
             }),
             py::arg("type"))
        .def_readwrite("type", &sis_primitive::type)
        .def_readwrite("sap", &sis_primitive::sap)
        .def_readwrite("rank", &sis_primitive::rank)
        .def_readwrite("mtu", &sis_primitive::mtu)
        .def_readwrite("service_type", &sis_primitive::service_type)
        .def_readwrite("reason", &sis_primitive::reason)
        .def_readwrite("subnet_status", &sis_primitive::subnet_status)
        .def_readwrite("remote_status", &sis_primitive::remote_status)
        .def_readwrite("link_type", &sis_primitive::link_type)
        .def_readwrite("link_priority", &sis_primitive::link_priority)
        .def_readwrite("remote_sap", &sis_primitive::remote_sap)
        .def_readwrite("remote", &sis_primitive::remote)
        .def_readwrite("priority", &sis_primitive::priority)
        .def_readwrite("destination_sap", &sis_primitive::destination_sap)
        .def_readwrite("destination", &sis_primitive::destination)
        .def_readwrite("source_sap", &sis_primitive::source_sap)
        .def_readwrite("source", &sis_primitive::source)
        .def_readwrite("ttl", &sis_primitive::ttl)
        .def_readwrite("management_type", &sis_primitive::management_type)
        .def_readwrite("errored_blocks", &sis_primitive::errored_blocks)
        .def_readwrite("non_received_blocks", &sis_primitive::non_received_blocks)
        .def_readwrite("vendor_padding", &sis_primitive::vendor_padding)
        .def(py::self == py::self)
        .def(py::self != py::self)
        .def("__repr__", [](const sis_primitive& x) {
            return std::string("<sis_primitive ") + to_string(x.type) + ">";
        });
    bytes_property(p, "payload", &sis_primitive::payload);

    m.attr("sis_header_size") = sis_header_size;
    m.attr("sis_ed1_header_size") = sis_ed1_header_size;
    m.attr("sis_max_size_field") = sis_max_size_field;
    m.attr("sis_default_max_frame") = sis_default_max_frame;

    m.def("address_to_string",
          &address_to_string,
          py::arg("address"),
          "'a.b.c.d' of the 29 address bits (groups read 16.x.x.x-31.x.x.x).");
    m.def(
        "parse_address",
        [](const std::string& text) { return value_or_raise(parse_address(text)); },
        py::arg("text"),
        "Inverse of address_to_string; raises ValueError('bad_field: ...').");
    m.def(
        "encode_sis",
        [](const sis_primitive& x) { return to_py(encode(x)); },
        py::arg("primitive"),
        "Whole Edition 3 SIS frame; raises EncodeError naming a field that does not "
        "fit.");
    m.def(
        "decode_sis",
        [](const py::object& data) {
            auto b = to_bytes(data);
            return value_or_raise(decode_sis(b.data(), b.size()));
        },
        py::arg("data"),
        "Decodes exactly one Edition 3 SIS frame; raises ValueError('<error>: "
        "<reason>').");
    m.def(
        "decode_sis_body",
        [](sis_type t, const py::object& body) {
            auto b = to_bytes(body);
            return value_or_raise(decode_sis_body(t, b.data(), b.size()));
        },
        py::arg("type"),
        py::arg("body"),
        "Decodes the bytes after the type byte; raises ValueError('<error>: <reason>').");

    py::class_<sis_counters>(m, "sis_counters")
        .def_readonly("bytes_in", &sis_counters::bytes_in)
        .def_readonly("primitives", &sis_counters::primitives)
        .def_readonly("edition1_frames", &sis_counters::edition1_frames)
        .def_readonly("garbage_bytes", &sis_counters::garbage_bytes)
        .def_readonly("decode_errors", &sis_counters::decode_errors)
        .def_readonly("oversized", &sis_counters::oversized)
        .def_readonly("oversized_requests", &sis_counters::oversized_requests)
        .def_readonly("answers", &sis_counters::answers)
        .def("__repr__", [](const sis_counters& c) {
            return "<sis_counters bytes_in " + std::to_string(c.bytes_in) +
                   " primitives " + std::to_string(c.primitives) + " garbage " +
                   std::to_string(c.garbage_bytes) + " errors " +
                   std::to_string(c.decode_errors) + " oversized " +
                   std::to_string(c.oversized) + ">";
        });
    py::class_<sis_reassembler>(
        m,
        "sis_reassembler",
        "Cuts a SIS TCP byte stream (any chunking) into S_primitives.")
        .def(py::init<size_t>(), py::arg("max_frame") = sis_default_max_frame)
        .def(
            "push",
            [](sis_reassembler& r, const py::object& data) {
                auto b = to_bytes(data);
                return r.push(b.data(), b.size());
            },
            py::arg("data"),
            "Appends bytes; returns the primitives completed, in stream order.")
        .def("counters", &sis_reassembler::counters)
        .def("last_error", &sis_reassembler::last_error)
        .def("take_answers",
             &sis_reassembler::take_answers,
             "Rejections owed to the client: oversized UNIDATA requests, undecodable "
             "binds.")
        .def("buffered", &sis_reassembler::buffered)
        .def("skipping", &sis_reassembler::skipping)
        .def("max_frame", &sis_reassembler::max_frame)
        .def("reset", &sis_reassembler::reset);
}
