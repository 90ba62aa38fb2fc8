/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Python bindings of the D_PDU codec, deframer, CRCs and capture writers
 * (hand-written: these kernels are not public block headers). */
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "dl/crc.h"
#include "dl/deframer.h"
#include "dl/dpdu.h"
#include "dl/pcap.h"
#include "dl_bytes.h"

namespace py = pybind11;
using namespace gr::hfstack::dl;
using hfstack_bindings::bytes_property;
using hfstack_bindings::to_bytes;
using hfstack_bindings::to_py;
using hfstack_bindings::value_or_raise;

void bind_dl_dpdu(py::module& m)
{
    py::enum_<decode_error>(m, "decode_error")
        .value("none", decode_error::none)
        .value("truncated", decode_error::truncated)
        .value("bad_sync", decode_error::bad_sync)
        .value("bad_version", decode_error::bad_version)
        .value("bad_size", decode_error::bad_size)
        .value("oversized", decode_error::oversized)
        .value("header_crc", decode_error::header_crc)
        .value("segment_crc", decode_error::segment_crc)
        .value("unknown_type", decode_error::unknown_type)
        .value("bad_field", decode_error::bad_field);
    py::register_exception<encode_error>(m, "EncodeError", PyExc_ValueError);

    m.attr("group_address_flag") = group_address_flag;
    m.attr("broadcast_address") = broadcast_address;
    m.attr("max_segment_size") = max_segment_size;
    m.attr("max_dpdu_size") = max_dpdu_size;

    m.def(
        "crc16",
        [](const py::object& d) {
            auto b = to_bytes(d);
            return crc16_s5066(b.data(), b.size());
        },
        py::arg("data"),
        "STANAG 5066 header CRC-16 (generator 0x9949, reflected, init 0).");
    m.def(
        "crc32",
        [](const py::object& d) {
            auto b = to_bytes(d);
            return crc32_s5066(b.data(), b.size());
        },
        py::arg("data"),
        "STANAG 5066 segment CRC-32 (generator 0x0AA725CF, reflected, init 0).");

    py::enum_<dpdu_type>(m, "dpdu_type")
        .value("data_only", dpdu_type::data_only)
        .value("ack_only", dpdu_type::ack_only)
        .value("data_ack", dpdu_type::data_ack)
        .value("reset_win_resync", dpdu_type::reset_win_resync)
        .value("expedited_data_only", dpdu_type::expedited_data_only)
        .value("expedited_ack_only", dpdu_type::expedited_ack_only)
        .value("management", dpdu_type::management)
        .value("non_arq_data", dpdu_type::non_arq_data)
        .value("expedited_non_arq_data", dpdu_type::expedited_non_arq_data)
        .value("warning", dpdu_type::warning);
    m.def("carries_segment", &carries_segment, py::arg("type"));

    py::enum_<eow_type>(m, "eow_type")
        .value("none", eow_type::none)
        .value("drc_request", eow_type::drc_request)
        .value("drc_response", eow_type::drc_response)
        .value("unrecognized_type", eow_type::unrecognized_type)
        .value("capability", eow_type::capability)
        .value("alm_request", eow_type::alm_request)
        .value("alm_response", eow_type::alm_response)
        .value("hdr_drc_request", eow_type::hdr_drc_request)
        .value("token", eow_type::token);

    py::class_<eow_rate_request>(m, "eow_rate_request")
        .def(py::init<>())
        .def(py::init([](uint8_t r, uint8_t i, uint8_t o) {
                 return eow_rate_request{ r, i, o };
             }),
             py::arg("data_rate"),
             py::arg("interleaving"),
             py::arg("other") = 0)
        .def_readwrite("data_rate", &eow_rate_request::data_rate)
        .def_readwrite("interleaving", &eow_rate_request::interleaving)
        .def_readwrite("other", &eow_rate_request::other)
        .def("content", [](const eow_rate_request& r) { return eow_content(r); })
        .def_static("from_content", &eow_as_rate_request);
    py::class_<eow_rate_response>(m, "eow_rate_response")
        .def(py::init<>())
        .def(py::init([](uint8_t r, uint8_t why) {
                 return eow_rate_response{ r, why };
             }),
             py::arg("response"),
             py::arg("reason"))
        .def_readwrite("response", &eow_rate_response::response)
        .def_readwrite("reason", &eow_rate_response::reason)
        .def("content", [](const eow_rate_response& r) { return eow_content(r); })
        .def_static("from_content", &eow_as_rate_response);
    py::class_<eow_capability>(m, "eow_capability")
        .def(py::init<>())
        .def_readwrite("adaptive", &eow_capability::adaptive)
        .def_readwrite("stanag_4529", &eow_capability::stanag_4529)
        .def_readwrite("mil_std_188_110a", &eow_capability::mil_std_188_110a)
        .def_readwrite("extended_data_rate", &eow_capability::extended_data_rate)
        .def_readwrite("full_duplex", &eow_capability::full_duplex)
        .def_readwrite("split_frequency", &eow_capability::split_frequency)
        .def_readwrite("non_arcs_ale", &eow_capability::non_arcs_ale)
        .def_readwrite("arcs", &eow_capability::arcs)
        .def("content", [](const eow_capability& c) { return eow_content(c); })
        .def_static("from_content", &eow_as_capability);
    py::class_<eow_hdr_rate_request>(m, "eow_hdr_rate_request")
        .def(py::init<>())
        .def(py::init([](uint8_t w, uint8_t c) {
                 return eow_hdr_rate_request{ w, c };
             }),
             py::arg("waveform"),
             py::arg("channels"))
        .def_readwrite("waveform", &eow_hdr_rate_request::waveform)
        .def_readwrite("channels", &eow_hdr_rate_request::channels)
        .def("content", [](const eow_hdr_rate_request& r) { return eow_content(r); })
        .def_static("from_content", &eow_as_hdr_rate_request);

    py::class_<dpdu> d(
        m, "dpdu", "One STANAG 5066 D_PDU (flat: unused fields are ignored).");
    d.def(py::init<>())
        .def_readwrite("type", &dpdu::type)
        .def_readwrite("eow", &dpdu::eow)
        .def_readwrite("eow_content", &dpdu::eow_content)
        .def_readwrite("eot", &dpdu::eot)
        .def_readwrite("address_size", &dpdu::address_size)
        .def_readwrite("destination", &dpdu::destination)
        .def_readwrite("source", &dpdu::source)
        .def_readwrite("cpdu_start", &dpdu::cpdu_start)
        .def_readwrite("cpdu_end", &dpdu::cpdu_end)
        .def_readwrite("deliver_in_order", &dpdu::deliver_in_order)
        .def_readwrite("drop_cpdu", &dpdu::drop_cpdu)
        .def_readwrite("tx_win_uwe", &dpdu::tx_win_uwe)
        .def_readwrite("tx_win_lwe", &dpdu::tx_win_lwe)
        .def_readwrite("tx_sequence", &dpdu::tx_sequence)
        .def_readwrite("rx_lwe", &dpdu::rx_lwe)
        .def_readwrite("full_reset", &dpdu::full_reset)
        .def_readwrite("reset_tx_win_request", &dpdu::reset_tx_win_request)
        .def_readwrite("reset_rx_win_command", &dpdu::reset_rx_win_command)
        .def_readwrite("reset_ack", &dpdu::reset_ack)
        .def_readwrite("new_rx_lwe", &dpdu::new_rx_lwe)
        .def_readwrite("reset_frame_id", &dpdu::reset_frame_id)
        .def_readwrite("extended_message_flag", &dpdu::extended_message_flag)
        .def_readwrite("valid_message", &dpdu::valid_message)
        .def_readwrite("management_ack", &dpdu::management_ack)
        .def_readwrite("management_frame_id", &dpdu::management_frame_id)
        .def_readwrite("cpdu_id", &dpdu::cpdu_id)
        .def_readwrite("cpdu_size", &dpdu::cpdu_size)
        .def_readwrite("segment_offset", &dpdu::segment_offset)
        .def_readwrite("reception_window", &dpdu::reception_window)
        .def_readwrite("received_frame_type", &dpdu::received_frame_type)
        .def_readwrite("warning_reason", &dpdu::warning_reason)
        .def_readwrite("long_fsn", &dpdu::long_fsn)
        .def(py::self == py::self)
        .def(py::self != py::self)
        .def("__repr__", [](const dpdu& x) {
            return std::string("<dpdu ") + to_string(x.type) + " " +
                   std::to_string(x.source) + "->" + std::to_string(x.destination) + ">";
        });
    bytes_property(d, "selective_acks", &dpdu::selective_acks);
    bytes_property(d, "extended_message", &dpdu::extended_message);
    bytes_property(d, "segment", &dpdu::segment);

    m.def(
        "address_size_for", &address_size_for, py::arg("destination"), py::arg("source"));
    m.def(
        "encode_dpdu",
        [](const dpdu& x) { return to_py(encode(x)); },
        py::arg("dpdu"),
        "Encodes one D_PDU with both CRCs; raises EncodeError naming a field that does "
        "not fit.");
    m.def(
        "decode_dpdu",
        [](const py::object& data, bool long_fsn) {
            auto b = to_bytes(data);
            return value_or_raise(decode_dpdu(b.data(), b.size(), long_fsn));
        },
        py::arg("data"),
        py::arg("long_fsn") = false,
        "Decodes exactly one D_PDU (long_fsn: S5066-EP5 two-byte FSN fields); raises "
        "ValueError('<error>: <reason>').");

    py::class_<deframer_counters>(m, "deframer_counters")
        .def_readonly("bytes_in", &deframer_counters::bytes_in)
        .def_readonly("dpdus", &deframer_counters::dpdus)
        .def_readonly("dpdu_bytes", &deframer_counters::dpdu_bytes)
        .def_readonly("damaged_segments", &deframer_counters::damaged_segments)
        .def_readonly("header_crc_errors", &deframer_counters::header_crc_errors)
        .def_readonly("invalid_headers", &deframer_counters::invalid_headers)
        .def_readonly("truncated", &deframer_counters::truncated)
        .def_readonly("junk_bytes", &deframer_counters::junk_bytes);
    py::class_<received_dpdu>(m, "received_dpdu")
        .def_readonly("frame", &received_dpdu::frame)
        .def_readonly("segment_ok", &received_dpdu::segment_ok)
        .def_readonly("stream_offset", &received_dpdu::stream_offset)
        .def_readonly("length", &received_dpdu::length);
    py::class_<dpdu_deframer>(
        m, "dpdu_deframer", "Finds D_PDUs in received bytes with errors and junk.")
        .def(py::init<>())
        .def(
            "push",
            [](dpdu_deframer& f, const py::object& data) {
                auto b = to_bytes(data);
                return f.push(b.data(), b.size());
            },
            py::arg("data"))
        .def("end_of_burst", &dpdu_deframer::end_of_burst)
        .def("counters", &dpdu_deframer::counters)
        .def("buffered", &dpdu_deframer::buffered);

    m.attr("linktype_stanag_5066_d_pdu") = linktype_stanag_5066_d_pdu;
    m.attr("sis_tcp_port") = sis_tcp_port;
    py::class_<dpdu_capture>(m, "dpdu_capture", "pcap of raw D_PDUs, link type 237.")
        .def(py::init<const std::string&>(), py::arg("path"))
        .def(
            "write",
            [](dpdu_capture& c, uint64_t t, const py::object& data) {
                c.write(t, to_bytes(data));
            },
            py::arg("timestamp_us"),
            py::arg("data"))
        .def("flush", &dpdu_capture::flush)
        .def("records", &dpdu_capture::records);
    py::class_<sis_capture>(m, "sis_capture", "pcap of SIS sessions as TCP to port 5066.")
        .def(py::init<const std::string&>(), py::arg("path"))
        .def(
            "write",
            [](sis_capture& c,
               uint64_t t,
               uint16_t id,
               bool from_client,
               const py::object& data) { c.write(t, id, from_client, to_bytes(data)); },
            py::arg("timestamp_us"),
            py::arg("client_id"),
            py::arg("from_client"),
            py::arg("data"))
        .def("flush", &sis_capture::flush)
        .def("records", &sis_capture::records);
}
