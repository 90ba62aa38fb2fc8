/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "spdu.h"

#include <string>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

constexpr uint8_t max_spdu_type = 7;
constexpr uint8_t max_link_type = 2;

// DATA S_PDU byte 2 (Fig. A-32).
constexpr uint8_t confirm_bit = 0x80;
constexpr uint8_t ttd_valid_bit = 0x40;
constexpr uint8_t julian_mask = 0x0F;

constexpr size_t data_pci_size = 3;
constexpr size_t data_pci_size_ttd = 5;
constexpr size_t two_byte_pci_size = 2;

std::string reason_text(spdu_type t, uint8_t reason)
{
    return std::string(to_string(t)) + " reason " + std::to_string(reason) +
           " is reserved in STANAG 5066 Ed.3 Annex A";
}

uint8_t nibbles(uint8_t high, uint8_t low) { return uint8_t((high << 4) | low); }

void check_sap(const char* field, uint8_t v) { require_bits(field, v, 4); }

void check_reason(const spdu& s)
{
    require_bits("spdu.reason", s.reason, 4);
    if (!spdu_reason_defined(s.type, s.reason))
        throw encode_error("spdu.reason: " + reason_text(s.type, s.reason));
}

} // namespace

bool spdu_reason_defined(spdu_type type, uint8_t reason)
{
    switch (type) {
    case spdu_type::data_delivery_fail:
        return reason <= uint8_t(data_delivery_fail_reason::destination_sap_not_bound);
    case spdu_type::hard_link_establishment_rejected:
        return reason <= uint8_t(hard_link_reject_reason::destination_sap_not_bound);
    case spdu_type::hard_link_terminate:
        return reason <=
                   uint8_t(hard_link_terminate_reason::higher_priority_link_requested) ||
               reason == uint8_t(hard_link_terminate_reason::destination_sap_unbound);
    default:
        return false;
    }
}

size_t spdu_header_size(const spdu& s)
{
    switch (s.type) {
    case spdu_type::data:
        return s.ttd_valid ? data_pci_size_ttd : data_pci_size;
    case spdu_type::data_delivery_confirm:
    case spdu_type::data_delivery_fail:
    case spdu_type::hard_link_establishment_request:
        return two_byte_pci_size;
    default:
        return 1;
    }
}

bytes encode(const spdu& s)
{
    const uint8_t t = uint8_t(s.type);
    if (t > max_spdu_type)
        throw encode_error("spdu.type = " + std::to_string(t) +
                           " is not an S_PDU type (0-7)");

    bytes out;
    switch (s.type) {
    case spdu_type::data: {
        require_bits("spdu.priority", s.priority, 4);
        check_sap("spdu.source_sap", s.source_sap);
        check_sap("spdu.destination_sap", s.destination_sap);
        uint8_t b2 = s.client_delivery_confirm_required ? confirm_bit : 0;
        if (s.ttd_valid) {
            require_bits("spdu.ttd_julian_day", s.ttd_julian_day, 4);
            if (s.ttd_gmt_2s >= ttd_gmt_2s_limit)
                throw encode_error("spdu.ttd_gmt_2s = " + std::to_string(s.ttd_gmt_2s) +
                                   " is not a time of day (0-43199)");
            b2 |= ttd_valid_bit | s.ttd_julian_day;
        }
        out.reserve(spdu_header_size(s) + s.updu.size());
        out.push_back(nibbles(t, s.priority));
        out.push_back(nibbles(s.source_sap, s.destination_sap));
        out.push_back(b2);
        if (s.ttd_valid)
            put_u16_be(out, s.ttd_gmt_2s);
        break;
    }
    case spdu_type::data_delivery_confirm:
    case spdu_type::data_delivery_fail: {
        check_sap("spdu.source_sap", s.source_sap);
        check_sap("spdu.destination_sap", s.destination_sap);
        uint8_t low = 0;
        if (s.type == spdu_type::data_delivery_fail) {
            check_reason(s);
            low = s.reason;
        }
        out.reserve(two_byte_pci_size + s.updu.size());
        out.push_back(nibbles(t, low));
        out.push_back(nibbles(s.source_sap, s.destination_sap));
        break;
    }
    case spdu_type::hard_link_establishment_request:
        if (s.link_type > max_link_type)
            throw encode_error("spdu.link_type = " + std::to_string(s.link_type) +
                               " is not a hard link type (0-2)");
        require_bits("spdu.link_priority", s.link_priority, 2);
        check_sap("spdu.requesting_sap", s.requesting_sap);
        check_sap("spdu.remote_sap", s.remote_sap);
        out.push_back(nibbles(t, uint8_t((s.link_type << 2) | s.link_priority)));
        out.push_back(nibbles(s.requesting_sap, s.remote_sap));
        return out;
    case spdu_type::hard_link_establishment_rejected:
    case spdu_type::hard_link_terminate:
        check_reason(s);
        out.push_back(nibbles(t, s.reason));
        return out;
    case spdu_type::hard_link_establishment_confirm:
    case spdu_type::hard_link_terminate_confirm:
        out.push_back(nibbles(t, 0));
        return out;
    }
    // Types 0-2 carry (part of) a U_PDU after the S_PCI.
    out.insert(out.end(), s.updu.begin(), s.updu.end());
    return out;
}

decoded<spdu> decode_spdu(const uint8_t* data, size_t size)
{
    using result = decoded<spdu>;
    if (size == 0 || data == nullptr)
        return result::failure(decode_error::truncated, "empty S_PDU");

    const uint8_t t = data[0] >> 4;
    const uint8_t low = data[0] & 0x0F;
    if (t > max_spdu_type)
        return result::failure(decode_error::unknown_type,
                               "S_PDU type " + std::to_string(t) +
                                   " is not defined (0-7)");

    spdu s;
    s.type = spdu_type(t);
    size_t pci = 1;
    switch (s.type) {
    case spdu_type::data: {
        if (size < data_pci_size)
            return result::failure(decode_error::truncated,
                                   "DATA S_PDU shorter than its 3-byte S_PCI");
        s.priority = low;
        s.source_sap = data[1] >> 4;
        s.destination_sap = data[1] & 0x0F;
        const uint8_t b2 = data[2];
        s.client_delivery_confirm_required = (b2 & confirm_bit) != 0;
        s.ttd_valid = (b2 & ttd_valid_bit) != 0;
        // Bits 5..4 are "not used": ignored.
        pci = data_pci_size;
        if (s.ttd_valid) {
            if (size < data_pci_size_ttd)
                return result::failure(decode_error::truncated,
                                       "DATA S_PDU has VALID TTD set but lacks the "
                                       "2-byte TTD time of day");
            s.ttd_julian_day = b2 & julian_mask;
            s.ttd_gmt_2s = get_u16_be(data + data_pci_size);
            if (s.ttd_gmt_2s >= ttd_gmt_2s_limit)
                return result::failure(decode_error::bad_field,
                                       "DATA S_PDU TTD time of day " +
                                           std::to_string(s.ttd_gmt_2s) +
                                           " x 2 s is past 24 h");
            pci = data_pci_size_ttd;
        }
        break;
    }
    case spdu_type::data_delivery_confirm:
    case spdu_type::data_delivery_fail:
        if (size < two_byte_pci_size)
            return result::failure(decode_error::truncated,
                                   std::string(to_string(s.type)) +
                                       " S_PDU shorter than its 2-byte S_PCI");
        if (s.type == spdu_type::data_delivery_fail)
            s.reason = low; // kept even if undefined: see hard_link_terminate below
        s.source_sap = data[1] >> 4;
        s.destination_sap = data[1] & 0x0F;
        pci = two_byte_pci_size;
        break;
    case spdu_type::hard_link_establishment_request:
        if (size < two_byte_pci_size)
            return result::failure(decode_error::truncated,
                                   "HARD_LINK_ESTABLISHMENT_REQUEST S_PDU shorter "
                                   "than 2 bytes");
        s.link_type = low >> 2;
        s.link_priority = low & 0x03;
        if (s.link_type > max_link_type)
            return result::failure(decode_error::bad_field,
                                   "HARD_LINK_ESTABLISHMENT_REQUEST link type 3 is "
                                   "not defined (0-2)");
        s.requesting_sap = data[1] >> 4;
        s.remote_sap = data[1] & 0x0F;
        return result::success(std::move(s)); // trailing bytes ignored
    case spdu_type::hard_link_establishment_rejected:
    case spdu_type::hard_link_terminate:
        // An undefined reason is kept, not refused, so the link is still torn down and
        // confirmed; spdu_reason_defined() tells callers, encode() never sends one.
        s.reason = low;
        return result::success(std::move(s)); // trailing bytes ignored
    case spdu_type::hard_link_establishment_confirm:
    case spdu_type::hard_link_terminate_confirm:
        return result::success(std::move(s)); // low nibble and trailing bytes ignored
    }
    s.updu.assign(data + pci, data + size);
    return result::success(std::move(s));
}

const char* to_string(spdu_type t)
{
    switch (t) {
    case spdu_type::data:
        return "DATA";
    case spdu_type::data_delivery_confirm:
        return "DATA_DELIVERY_CONFIRM";
    case spdu_type::data_delivery_fail:
        return "DATA_DELIVERY_FAIL";
    case spdu_type::hard_link_establishment_request:
        return "HARD_LINK_ESTABLISHMENT_REQUEST";
    case spdu_type::hard_link_establishment_confirm:
        return "HARD_LINK_ESTABLISHMENT_CONFIRM";
    case spdu_type::hard_link_establishment_rejected:
        return "HARD_LINK_ESTABLISHMENT_REJECTED";
    case spdu_type::hard_link_terminate:
        return "HARD_LINK_TERMINATE";
    case spdu_type::hard_link_terminate_confirm:
        return "HARD_LINK_TERMINATE_CONFIRM";
    }
    return "undefined";
}

const char* to_string(data_delivery_fail_reason r)
{
    switch (r) {
    case data_delivery_fail_reason::unassigned:
        return "unassigned";
    case data_delivery_fail_reason::destination_sap_not_bound:
        return "destination SAP ID not bound";
    }
    return "reserved";
}

const char* to_string(hard_link_reject_reason r)
{
    switch (r) {
    case hard_link_reject_reason::unassigned:
        return "unassigned";
    case hard_link_reject_reason::remote_node_busy:
        return "remote node busy";
    case hard_link_reject_reason::higher_priority_link_existing:
        return "higher-priority link existing";
    case hard_link_reject_reason::remote_node_not_responding:
        return "remote node not responding";
    case hard_link_reject_reason::destination_sap_not_bound:
        return "destination SAP ID not bound";
    }
    return "reserved";
}

const char* to_string(hard_link_terminate_reason r)
{
    switch (r) {
    case hard_link_terminate_reason::unassigned:
        return "unassigned";
    case hard_link_terminate_reason::client_request:
        return "client request";
    case hard_link_terminate_reason::higher_priority_link_requested:
        return "higher-priority link requested";
    case hard_link_terminate_reason::destination_sap_unbound:
        return "destination SAP ID unbound";
    }
    return "reserved";
}

const char* to_string(hard_link_type t)
{
    switch (t) {
    case hard_link_type::link_reservation:
        return "type 0 (link reservation)";
    case hard_link_type::partial_bandwidth_reservation:
        return "type 1 (partial-bandwidth reservation)";
    case hard_link_type::full_bandwidth_reservation:
        return "type 2 (full-bandwidth reservation)";
    }
    return "undefined";
}

} // namespace dl
} // namespace hfstack
} // namespace gr
