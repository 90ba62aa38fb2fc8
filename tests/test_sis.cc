/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* SIS codec and stream reassembler (STANAG 5066 Annex A). Byte layouts are pinned by
 * hand-computed vectors (a round trip alone cannot catch a symmetric bit-position
 * mistake); round trips and random streams then cover every type and chunking. */
#include "dl/codec.h"
#include "dl/sis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string>

using namespace gr::hfstack::dl;

namespace {

bytes hex(const std::string& text)
{
    bytes out;
    std::string digits;
    for (char c : text)
        if (std::isxdigit(static_cast<unsigned char>(c)))
            digits.push_back(c);
    for (size_t i = 0; i + 1 < digits.size(); i += 2)
        out.push_back(uint8_t(std::stoul(digits.substr(i, 2), nullptr, 16)));
    return out;
}

bytes cat(std::initializer_list<bytes> parts)
{
    bytes out;
    for (const auto& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

sis_address addr(uint32_t a, uint8_t size_nibbles = 7)
{
    return sis_address{ a, size_nibbles };
}

bytes pattern(size_t n, uint8_t start = 0)
{
    bytes b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t(start + i);
    return b;
}

// Edition 1 form of an encoded frame: the version byte removed.
bytes as_ed1(bytes frame)
{
    frame.erase(frame.begin() + 2);
    return frame;
}

std::vector<sis_primitive> feed(sis_reassembler& r, const bytes& stream, size_t chunk)
{
    std::vector<sis_primitive> out;
    for (size_t i = 0; i < stream.size(); i += chunk)
        r.push(stream.data() + i, std::min(chunk, stream.size() - i), out);
    return out;
}

// A primitive of type t with non-trivial values in every field t uses, others default.
sis_primitive sample(sis_type t)
{
    sis_primitive p;
    p.type = t;
    switch (t) {
    case sis_type::bind_request:
        p.sap = 9;
        p.rank = 5;
        p.service_type = { sis_tx_mode::non_arq,
                           sis_delivery_confirmation::client,
                           sis_delivery_order::as_they_arrive,
                           true,
                           3 };
        break;
    case sis_type::bind_accepted:
        p.sap = 12;
        p.mtu = 4096;
        break;
    case sis_type::bind_rejected:
        p.reason = uint8_t(sis_bind_rejected_reason::sap_already_allocated);
        break;
    case sis_type::unbind_indication:
        p.reason = uint8_t(sis_unbind_reason::keep_alive_inactivity);
        break;
    case sis_type::hard_link_establish:
    case sis_type::hard_link_accept:
    case sis_type::hard_link_established:
    case sis_type::hard_link_indication:
    case sis_type::hard_link_rejected:
    case sis_type::hard_link_terminated:
    case sis_type::hard_link_reject:
        p.link_type = hard_link_type::partial_bandwidth_reservation;
        p.link_priority = 2;
        p.remote_sap = 13;
        p.remote = addr(0x0ABCDEF1, 6);
        if (t == sis_type::hard_link_established || t == sis_type::hard_link_indication)
            p.remote_status = 1;
        if (t == sis_type::hard_link_rejected || t == sis_type::hard_link_reject)
            p.reason = uint8_t(sis_hard_link_rejected_reason::remote_not_responding);
        if (t == sis_type::hard_link_terminated)
            p.reason = uint8_t(sis_hard_link_terminated_reason::physical_link_broken);
        break;
    case sis_type::hard_link_terminate:
        p.remote = addr(0x10000042, 3); // group address
        break;
    case sis_type::subnet_availability:
        p.subnet_status = sis_subnet_status::receive_only;
        p.reason = uint8_t(sis_subnet_reason::local_node_in_emcon);
        break;
    case sis_type::management_msg_request:
    case sis_type::management_msg_indication:
        p.management_type = 0x42;
        p.payload = pattern(17, 0x80);
        break;
    case sis_type::unidata_request:
    case sis_type::expedited_unidata_request:
        p.priority = t == sis_type::unidata_request ? 7 : 0;
        p.destination_sap = 6;
        p.destination = addr(0x01020304);
        p.service_type = { sis_tx_mode::arq,
                           sis_delivery_confirmation::node,
                           sis_delivery_order::in_order,
                           false,
                           0 };
        p.ttl = 0xFEDCB;
        p.payload = pattern(300, 0x11);
        break;
    case sis_type::unidata_indication:
    case sis_type::expedited_unidata_indication:
        p.priority = t == sis_type::unidata_indication ? 15 : 0;
        p.destination_sap = 9;
        p.destination = addr(0x1FFFFFFF);
        p.service_type.tx_mode = sis_tx_mode::non_arq_with_errors;
        p.source_sap = 4;
        p.source = addr(0x00000105, 4);
        p.errored_blocks = { { 10, 20 }, { 100, 5 } };
        p.non_received_blocks = { { 200, 56 } };
        p.payload = pattern(256, 0x33);
        break;
    case sis_type::unidata_request_confirm:
    case sis_type::expedited_unidata_request_confirm:
        p.destination_sap = 11;
        p.destination = addr(0x0000FFFF, 5);
        p.payload = pattern(6);
        break;
    case sis_type::unidata_request_rejected:
    case sis_type::expedited_unidata_request_rejected:
        p.reason = uint8_t(sis_unidata_rejected_reason::updu_larger_than_mtu);
        p.destination_sap = 15;
        p.destination = addr(0x0F000001, 2);
        p.payload = pattern(40, 0xA0);
        break;
    case sis_type::unbind_request:
    case sis_type::data_flow_on:
    case sis_type::data_flow_off:
    case sis_type::keep_alive:
        break;
    }
    return p;
}

const std::vector<sis_type>& all_types()
{
    static const std::vector<sis_type> types = [] {
        std::vector<sis_type> t;
        for (unsigned i = 1; i <= 27; ++i)
            t.push_back(sis_type(i));
        return t;
    }();
    return types;
}

// Random valid values in exactly the fields type t uses.
sis_primitive random_primitive(std::mt19937& rng, sis_type t, size_t max_payload = 600)
{
    auto u = [&](uint32_t n) { return uint32_t(rng() % n); }; // 0..n-1
    auto raddr = [&] { return addr(uint32_t(rng()) & 0x1FFFFFFF, uint8_t(1 + u(7))); };
    auto rpayload = [&] {
        bytes b(u(uint32_t(max_payload) + 1));
        for (auto& x : b)
            x = uint8_t(rng());
        return b;
    };
    auto rservice = [&] {
        return sis_service_type{ sis_tx_mode(u(16)),
                                 sis_delivery_confirmation(u(4)),
                                 sis_delivery_order(u(2)),
                                 u(2) == 1,
                                 uint8_t(u(16)) };
    };
    auto rblocks = [&] {
        std::vector<sis_block_range> v(u(4));
        for (auto& b : v)
            b = { uint16_t(rng()), uint16_t(rng()) };
        return v;
    };
    const bool expedited = t >= sis_type::expedited_unidata_request;
    sis_primitive p;
    p.type = t;
    switch (t) {
    case sis_type::bind_request:
        p.sap = uint8_t(u(16));
        p.rank = uint8_t(u(16));
        p.service_type = rservice();
        break;
    case sis_type::bind_accepted:
        p.sap = uint8_t(u(16));
        p.mtu = uint16_t(rng());
        break;
    case sis_type::bind_rejected:
    case sis_type::unbind_indication:
        p.reason = uint8_t(rng());
        break;
    case sis_type::hard_link_terminate:
        p.remote = raddr();
        break;
    case sis_type::hard_link_establish:
    case sis_type::hard_link_accept:
    case sis_type::hard_link_established:
    case sis_type::hard_link_indication:
    case sis_type::hard_link_rejected:
    case sis_type::hard_link_terminated:
    case sis_type::hard_link_reject:
        p.link_type = hard_link_type(u(4));
        p.link_priority = uint8_t(u(4));
        p.remote_sap = uint8_t(u(16));
        p.remote = raddr();
        if (t == sis_type::hard_link_established || t == sis_type::hard_link_indication)
            p.remote_status = uint8_t(rng());
        if (t == sis_type::hard_link_rejected || t == sis_type::hard_link_terminated ||
            t == sis_type::hard_link_reject)
            p.reason = uint8_t(rng());
        break;
    case sis_type::subnet_availability:
        p.subnet_status = sis_subnet_status(uint8_t(rng()));
        p.reason = uint8_t(rng());
        break;
    case sis_type::management_msg_request:
    case sis_type::management_msg_indication:
        p.management_type = uint8_t(rng());
        p.payload = rpayload();
        break;
    case sis_type::unidata_request:
    case sis_type::expedited_unidata_request:
        p.priority = expedited ? 0 : uint8_t(u(16));
        p.destination_sap = uint8_t(u(16));
        p.destination = raddr();
        p.service_type = rservice();
        p.ttl = u(1u << 20);
        p.payload = rpayload();
        break;
    case sis_type::unidata_indication:
    case sis_type::expedited_unidata_indication:
        p.priority = expedited ? 0 : uint8_t(u(16));
        p.destination_sap = uint8_t(u(16));
        p.destination = raddr();
        p.service_type.tx_mode =
            u(3) == 0 ? sis_tx_mode::non_arq_with_errors : sis_tx_mode(u(16));
        p.source_sap = uint8_t(u(16));
        p.source = raddr();
        if (p.service_type.tx_mode == sis_tx_mode::non_arq_with_errors) {
            p.errored_blocks = rblocks();
            p.non_received_blocks = rblocks();
        }
        p.payload = rpayload();
        break;
    case sis_type::unidata_request_confirm:
    case sis_type::expedited_unidata_request_confirm:
    case sis_type::unidata_request_rejected:
    case sis_type::expedited_unidata_request_rejected:
        if (t == sis_type::unidata_request_rejected ||
            t == sis_type::expedited_unidata_request_rejected)
            p.reason = uint8_t(u(16));
        p.destination_sap = uint8_t(u(16));
        p.destination = raddr();
        p.payload = rpayload();
        break;
    case sis_type::unbind_request:
    case sis_type::data_flow_on:
    case sis_type::data_flow_off:
    case sis_type::keep_alive:
        break;
    }
    return p;
}

std::vector<sis_primitive>
random_primitives(std::mt19937& rng, size_t count, size_t max_payload = 600)
{
    std::vector<sis_primitive> v;
    for (size_t i = 0; i < count; ++i)
        v.push_back(random_primitive(rng, sis_type(1 + rng() % 27), max_payload));
    return v;
}

bytes encode_all(const std::vector<sis_primitive>& v)
{
    bytes out;
    for (const auto& p : v) {
        const bytes f = encode(p);
        out.insert(out.end(), f.begin(), f.end());
    }
    return out;
}

template <typename F>
std::string encode_error_of(F&& f)
{
    try {
        f();
    } catch (const encode_error& e) {
        return e.what();
    }
    return "(no encode_error)";
}

} // namespace

// ---- known answers ------------------------------------------------------------------

TEST(SisKnownAnswer, BindRequestVector)
{
    sis_primitive p;
    p.type = sis_type::bind_request;
    p.sap = 9;
    p.rank = 0;
    p.service_type.tx_mode = sis_tx_mode::arq;
    p.service_type.delivery_confirmation = sis_delivery_confirmation::node;
    p.service_type.delivery_order = sis_delivery_order::in_order;
    EXPECT_EQ(to_hex(encode(p)),
              "90eb0000040190"
              "1400");
    auto d = decode_sis(hex("90 EB 00 00 04 01 90 14 00"));
    ASSERT_TRUE(d.ok()) << d.reason;
    EXPECT_EQ(d.value, p);
}

TEST(SisKnownAnswer, BindAcceptedVectorMtuIsBigEndian)
{
    sis_primitive p;
    p.type = sis_type::bind_accepted;
    p.sap = 9;
    p.mtu = 2048;
    const bytes f = encode(p);
    EXPECT_EQ(f, hex("90 EB 00 00 04 03 90 08 00"));
    EXPECT_EQ(f[7], 0x08); // open-code mistake: little-endian MTU would give 00 08
    EXPECT_EQ(f[8], 0x00);
    auto d = decode_sis(f);
    ASSERT_TRUE(d.ok()) << d.reason;
    EXPECT_EQ(d.value.mtu, 2048);
}

TEST(SisKnownAnswer, MtuIsNotHardCoded)
{
    for (uint16_t mtu : { 1500, 200, 4096, 65535, 0 }) {
        sis_primitive p;
        p.type = sis_type::bind_accepted;
        p.sap = 1;
        p.mtu = mtu;
        const bytes f = encode(p);
        EXPECT_EQ(f[7], mtu >> 8);
        EXPECT_EQ(f[8], mtu & 0xFF);
        EXPECT_EQ(decode_sis(f).value.mtu, mtu);
    }
    EXPECT_EQ(decode_sis(hex("90 EB 00 00 04 03 10 05 DC")).value.mtu, 1500);
}

TEST(SisKnownAnswer, SizeFieldIsBigEndian)
{
    sis_primitive p = sample(sis_type::unidata_request); // 300-byte U_PDU
    const bytes f = encode(p);
    const size_t size = 1 + 11 + 300;
    ASSERT_EQ(f.size(), 5 + size);
    EXPECT_EQ(f[3], size >> 8);
    EXPECT_EQ(f[4], size & 0xFF);
    EXPECT_EQ(f[5 + 10], 300 >> 8); // U_PDU size, big-endian too
    EXPECT_EQ(f[5 + 11], 300 & 0xFF);
}

TEST(SisKnownAnswer, UnidataRequestLayout)
{
    sis_primitive p;
    p.type = sis_type::unidata_request;
    p.priority = 3;
    p.destination_sap = 9;
    p.destination = addr(0x01020304, 7);
    p.service_type = { sis_tx_mode::arq,
                       sis_delivery_confirmation::client,
                       sis_delivery_order::as_they_arrive,
                       false,
                       2 };
    p.ttl = 0x12345;
    p.payload = { 'A', 'B', 'C' };
    const bytes want = hex("90 EB 00 00 0F 14 39 E1 02 03 04 1A 21 23 45 00 03 41 42 43");
    EXPECT_EQ(to_hex(encode(p)), to_hex(want));
    auto d = decode_sis(want);
    ASSERT_TRUE(d.ok()) << d.reason;
    EXPECT_EQ(d.value, p);
}

TEST(SisKnownAnswer, UnidataIndicationWithErrorsLayout)
{
    sis_primitive p;
    p.type = sis_type::unidata_indication;
    p.priority = 1;
    p.destination_sap = 7;
    p.destination = addr(0x1FFFFFFF, 7); // broadcast: group flag set
    p.service_type.tx_mode = sis_tx_mode::non_arq_with_errors;
    p.source_sap = 2;
    p.source = addr(5, 2);
    p.errored_blocks = { { 2, 3 } };
    p.payload = pattern(8);
    const bytes want = hex("90 EB 00 00 1D 15 17 FF FF FF FF 32 40 00 00 05 00 08"
                           " 00 01 00 02 00 03 00 00 00 01 02 03 04 05 06 07");
    EXPECT_EQ(to_hex(encode(p)), to_hex(want));
    auto d = decode_sis(want);
    ASSERT_TRUE(d.ok()) << d.reason;
    EXPECT_EQ(d.value, p);
}

TEST(SisKnownAnswer, HardLinkAndOtherLayouts)
{
    sis_primitive p;
    p.type = sis_type::hard_link_established;
    p.remote_status = 1;
    p.link_type = hard_link_type::full_bandwidth_reservation;
    p.link_priority = 3;
    p.remote_sap = 5;
    p.remote = addr(0x00010203, 4);
    EXPECT_EQ(encode(p), hex("90 EB 00 00 07 08 01 B5 80 01 02 03"));

    sis_primitive r;
    r.type = sis_type::unidata_request_rejected;
    r.reason = uint8_t(sis_unidata_rejected_reason::updu_larger_than_mtu);
    r.destination_sap = 12;
    r.destination = addr(1, 1);
    r.payload = { 0xDE, 0xAD };
    EXPECT_EQ(encode(r), hex("90 EB 00 00 0A 17 4C 20 00 00 01 00 02 DE AD"));

    sis_primitive s;
    s.type = sis_type::subnet_availability;
    s.subnet_status = sis_subnet_status::half_duplex;
    s.reason = uint8_t(sis_subnet_reason::local_node_in_emcon);
    EXPECT_EQ(encode(s), hex("90 EB 00 00 03 0E 03 01"));

    // Expedited: the priority nibble is unused and always written 0.
    sis_primitive e;
    e.type = sis_type::expedited_unidata_request;
    e.priority = 5;
    e.destination_sap = 3;
    e.service_type.tx_mode = sis_tx_mode::non_arq;
    e.service_type.min_retransmissions = 3;
    EXPECT_EQ(encode(e), hex("90 EB 00 00 0C 18 03 E0 00 00 00 20 30 00 00 00 00"));

    sis_primitive g;
    g.type = sis_type::hard_link_terminate;
    g.remote = addr(0x10000001, 7); // 16.0.0.1: group flag is bit 4 of byte 0
    EXPECT_EQ(encode(g), hex("90 EB 00 00 05 07 F0 00 00 01"));

    sis_primitive k;
    k.type = sis_type::keep_alive;
    EXPECT_EQ(encode(k), hex("90 EB 00 00 01 11"));
}

TEST(SisKnownAnswer, TypeNames)
{
    EXPECT_STREQ(to_string(sis_type::bind_request), "S_BIND_REQUEST");
    EXPECT_STREQ(to_string(sis_type::data_flow_on), "S_DATA_FLOW_ON");
    EXPECT_STREQ(to_string(sis_type::management_msg_indication),
                 "S_MANAGEMENT_MSG_INDICATION");
    EXPECT_STREQ(to_string(sis_type::expedited_unidata_request_rejected),
                 "S_EXPEDITED_UNIDATA_REQUEST_REJECTED");
    EXPECT_STREQ(to_string(sis_type(0)), "S_UNKNOWN");
    EXPECT_STREQ(to_string(sis_type(28)), "S_UNKNOWN");
    for (sis_type t : all_types())
        EXPECT_EQ(std::string(to_string(t)).substr(0, 2), "S_");
}

// ---- addresses ----------------------------------------------------------------------

TEST(SisAddress, ToStringAndParse)
{
    EXPECT_EQ(address_to_string(0x01020304), "1.2.3.4");
    EXPECT_EQ(address_to_string(0x1FFFFFFF), "31.255.255.255");
    EXPECT_EQ(address_to_string(0x10000001), "16.0.0.1");
    EXPECT_EQ(parse_address("31.255.255.255").value, 0x1FFFFFFFu);
    EXPECT_EQ(parse_address("0.0.0.0").value, 0u);
    EXPECT_EQ(parse_address("15.1.200.7").value, 0x0F01C807u);
    for (const char* bad : { "32.0.0.0",
                             "255.255.255.255",
                             "1.2.3",
                             "1.2.3.4.5",
                             "256.0.0.0",
                             "1.2.3.256",
                             "a.b.c.d",
                             "",
                             "1..2.3",
                             " 1.2.3.4",
                             "1.2.3.4 ",
                             "0001.2.3.4",
                             "1.2.3.-4",
                             "1.2.3.4.",
                             ".1.2.3" }) {
        auto d = parse_address(bad);
        EXPECT_FALSE(d.ok()) << bad;
        EXPECT_EQ(d.error, decode_error::bad_field) << bad;
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 1000; ++i) {
        const uint32_t a = uint32_t(rng()) & 0x1FFFFFFF;
        EXPECT_EQ(parse_address(address_to_string(a)).value, a);
    }
}

TEST(SisAddress, SizeNibblesAndGroupRoundTrip)
{
    for (uint8_t n = 0; n < 8; ++n) {
        sis_primitive p;
        p.type = sis_type::hard_link_terminate;
        p.remote = addr(0x1ABCDEF0, n);
        const bytes f = encode(p);
        EXPECT_EQ(f[6] >> 5, n);
        EXPECT_EQ(f[6] & 0x10, 0x10); // group flag
        EXPECT_EQ(decode_sis(f).value.remote, p.remote);
    }
}

// ---- round trips --------------------------------------------------------------------

TEST(SisRoundTrip, EveryTypeWithNonTrivialFields)
{
    ASSERT_EQ(all_types().size(), 27u);
    for (sis_type t : all_types()) {
        const sis_primitive p = sample(t);
        const bytes f = encode(p);
        EXPECT_EQ(f[5], uint8_t(t));
        auto d = decode_sis(f);
        ASSERT_TRUE(d.ok()) << to_string(t) << ": " << d.reason;
        EXPECT_EQ(d.value, p) << to_string(t) << " " << to_hex(f);
        EXPECT_EQ(encode(d.value), f) << to_string(t);
        // decode_sis_body agrees with decode_sis.
        auto b = decode_sis_body(t, f.data() + 6, f.size() - 6);
        ASSERT_TRUE(b.ok()) << b.reason;
        EXPECT_EQ(b.value, p);
    }
}

TEST(SisRoundTrip, RandomPrimitivesProperty)
{
    std::mt19937 rng(5066);
    for (int i = 0; i < 5000; ++i) {
        const sis_primitive p = random_primitive(rng, sis_type(1 + rng() % 27));
        const bytes f = encode(p);
        ASSERT_EQ(f.size(), 5u + get_u16_be(f.data() + 3));
        auto d = decode_sis(f);
        ASSERT_TRUE(d.ok()) << to_string(p.type) << ": " << d.reason << " " << to_hex(f);
        ASSERT_EQ(d.value, p) << to_string(p.type) << " " << to_hex(f);
        ASSERT_EQ(encode(d.value), f);
    }
}

TEST(SisRoundTrip, ConfirmCarriesAPrefix)
{
    sis_primitive p = sample(sis_type::unidata_request_confirm);
    p.payload.clear(); // confirm carrying no part of the U_PDU at all
    auto d = decode_sis(encode(p));
    ASSERT_TRUE(d.ok()) << d.reason;
    EXPECT_TRUE(d.value.payload.empty());
}

TEST(SisRoundTrip, LargestPayloads)
{
    sis_primitive p;
    p.type = sis_type::unidata_request;
    p.payload = bytes(65535 - 12, 0x5A); // size field exactly 65535
    const bytes f = encode(p);
    EXPECT_EQ(get_u16_be(f.data() + 3), 65535);
    EXPECT_EQ(decode_sis(f).value, p);

    sis_primitive m;
    m.type = sis_type::management_msg_request;
    m.payload = bytes(65535 - 2, 1);
    EXPECT_EQ(decode_sis(encode(m)).value, m);
}

// ---- decode errors ------------------------------------------------------------------

TEST(SisDecodeErrors, FramingErrors)
{
    const bytes good = encode(sample(sis_type::unidata_request));

    bytes cut = good;
    cut.pop_back();
    EXPECT_EQ(decode_sis(cut).error, decode_error::truncated);
    EXPECT_EQ(decode_sis(good.data(), 0).error, decode_error::truncated);
    EXPECT_EQ(decode_sis(good.data(), 5).error, decode_error::truncated);

    bytes version = good;
    version[2] = 0x01;
    EXPECT_EQ(decode_sis(version).error, decode_error::bad_version);

    bytes sync = good;
    sync[1] = 0xEC;
    EXPECT_EQ(decode_sis(sync).error, decode_error::bad_sync);
    EXPECT_EQ(decode_sis(hex("91")).error, decode_error::bad_sync);

    bytes longer = good;
    longer.push_back(0);
    EXPECT_EQ(decode_sis(longer).error, decode_error::bad_size);

    EXPECT_EQ(decode_sis(hex("90 EB 00 00 00 11")).error, decode_error::bad_size);

    EXPECT_EQ(decode_sis(hex("90 EB 00 00 01 1C")).error,
              decode_error::unknown_type); // 28
    EXPECT_EQ(decode_sis(hex("90 EB 00 00 01 00")).error,
              decode_error::unknown_type); // 0
    EXPECT_EQ(decode_sis(hex("90 EB 00 00 01 FF")).error, decode_error::unknown_type);
    EXPECT_EQ(decode_sis_body(sis_type(28), nullptr, 0).error,
              decode_error::unknown_type);
    EXPECT_EQ(decode_sis(hex("90 EB 00 00 01 1B")).error,
              decode_error::truncated); // 27 ok
}

TEST(SisDecodeErrors, BodyErrors)
{
    // BIND_REQUEST needs 3 body bytes.
    auto d = decode_sis(hex("90 EB 00 00 03 01 90 14"));
    EXPECT_EQ(d.error, decode_error::truncated);
    EXPECT_NE(d.reason.find("S_BIND_REQUEST"), std::string::npos) << d.reason;

    // Fixed-size bodies reject trailing bytes.
    d = decode_sis(hex("90 EB 00 00 02 11 00"));
    EXPECT_EQ(d.error, decode_error::bad_size);
    EXPECT_NE(d.reason.find("S_KEEP_ALIVE"), std::string::npos) << d.reason;
    EXPECT_EQ(decode_sis(hex("90 EB 00 00 05 03 90 08 00 00")).error,
              decode_error::bad_size);

    // U_PDU size field contradicting the bytes present.
    sis_primitive p;
    p.type = sis_type::unidata_request;
    p.payload = pattern(12);
    bytes f = encode(p);
    f[5 + 10] = 300 >> 8;
    f[5 + 11] = 300 & 0xFF;
    d = decode_sis(f);
    EXPECT_EQ(d.error, decode_error::bad_size);
    EXPECT_EQ(d.reason, "S_UNIDATA_REQUEST: U_PDU size 300 but 12 bytes follow");

    // Each type's fixed part cut by one byte is truncated.
    for (sis_type t : all_types()) {
        const bytes full = encode(sample(t));
        const size_t body = full.size() - 6;
        if (body == 0)
            continue;
        const bool management = t == sis_type::management_msg_request ||
                                t == sis_type::management_msg_indication;
        for (size_t cut = 0; cut < (management ? 1 : body); ++cut) {
            auto r = decode_sis_body(t, full.data() + 6, cut);
            EXPECT_FALSE(r.ok()) << to_string(t) << " cut " << cut;
        }
    }

    // Block lists cut short (tx mode 3).
    sis_primitive ind = sample(sis_type::unidata_indication);
    ind.payload.clear();
    bytes g = encode(ind);
    auto r =
        decode_sis_body(sis_type::unidata_indication, g.data() + 6, g.size() - 6 - 2);
    EXPECT_EQ(r.error, decode_error::truncated);
}

TEST(SisDecodeErrors, RandomBytesNeverCrash)
{
    std::mt19937 rng(99);
    const bytes base = encode_all(random_primitives(rng, 50, 100));
    for (int i = 0; i < 20000; ++i) {
        bytes f;
        if (i % 2) { // mutated valid frame
            sis_primitive p = random_primitive(rng, sis_type(1 + rng() % 27), 40);
            f = encode(p);
            for (int k = 0; k < 3; ++k)
                f[rng() % f.size()] = uint8_t(rng());
            if (rng() % 3 == 0)
                f.resize(rng() % (f.size() + 1));
        } else { // random bytes behind a valid header
            f = hex("90 EB 00");
            f.resize(3 + rng() % 40);
            for (size_t k = 3; k < f.size(); ++k)
                f[k] = uint8_t(rng());
            if (f.size() >= 5) {
                f[3] = uint8_t((f.size() - 5) >> 8);
                f[4] = uint8_t(f.size() - 5);
            }
        }
        auto d = decode_sis(f.data(), f.size());
        if (d.ok()) // anything accepted must re-encode to the same length
            EXPECT_EQ(encode(d.value).size() + (d.value.vendor_padding ? 4 : 0),
                      f.size());
        else
            EXPECT_FALSE(d.reason.empty());
    }
}

// ---- encode errors ------------------------------------------------------------------

TEST(SisEncodeErrors, OutOfRangeFieldsAreNamed)
{
    struct bad_case {
        sis_type type;
        void (*spoil)(sis_primitive&);
        const char* field;
    };
    const bad_case cases[] = {
        { sis_type::bind_request, [](sis_primitive& p) { p.sap = 16; }, "sap" },
        { sis_type::bind_request, [](sis_primitive& p) { p.rank = 16; }, "rank" },
        { sis_type::bind_request,
          [](sis_primitive& p) { p.service_type.tx_mode = sis_tx_mode(16); },
          "service_type.tx_mode" },
        { sis_type::bind_request,
          [](sis_primitive& p) {
              p.service_type.delivery_confirmation = sis_delivery_confirmation(4);
          },
          "service_type.delivery_confirmation" },
        { sis_type::bind_request,
          [](sis_primitive& p) { p.service_type.delivery_order = sis_delivery_order(2); },
          "service_type.delivery_order" },
        { sis_type::bind_request,
          [](sis_primitive& p) { p.service_type.min_retransmissions = 16; },
          "service_type.min_retransmissions" },
        { sis_type::bind_accepted, [](sis_primitive& p) { p.sap = 200; }, "sap" },
        { sis_type::hard_link_establish,
          [](sis_primitive& p) { p.remote_sap = 16; },
          "remote_sap" },
        { sis_type::hard_link_establish,
          [](sis_primitive& p) { p.link_priority = 4; },
          "link_priority" },
        { sis_type::hard_link_accept,
          [](sis_primitive& p) { p.link_type = hard_link_type(4); },
          "link_type" },
        { sis_type::hard_link_terminate,
          [](sis_primitive& p) { p.remote.address = 0x20000000; },
          "remote.address" },
        { sis_type::hard_link_terminate,
          [](sis_primitive& p) { p.remote.size_nibbles = 8; },
          "remote.size_nibbles" },
        { sis_type::unidata_request, [](sis_primitive& p) { p.ttl = 1u << 20; }, "ttl" },
        { sis_type::unidata_request,
          [](sis_primitive& p) { p.priority = 16; },
          "priority" },
        { sis_type::unidata_request,
          [](sis_primitive& p) { p.destination_sap = 16; },
          "destination_sap" },
        { sis_type::unidata_request,
          [](sis_primitive& p) { p.destination.address = 0xFFFFFFFF; },
          "destination.address" },
        { sis_type::unidata_request,
          [](sis_primitive& p) { p.payload.resize(65536); },
          "payload size" },
        { sis_type::unidata_request,
          [](sis_primitive& p) { p.payload.resize(65535 - 11); },
          "size field" },
        { sis_type::unidata_indication,
          [](sis_primitive& p) { p.source_sap = 16; },
          "source_sap" },
        { sis_type::unidata_indication,
          [](sis_primitive& p) { p.source.size_nibbles = 9; },
          "source.size_nibbles" },
        { sis_type::unidata_indication,
          [](sis_primitive& p) { p.service_type.tx_mode = sis_tx_mode::arq; },
          "errored_blocks" },
        { sis_type::unidata_indication,
          [](sis_primitive& p) { p.errored_blocks.resize(65536); },
          "errored_blocks count" },
        { sis_type::unidata_request_rejected,
          [](sis_primitive& p) { p.reason = 16; },
          "reason" },
        { sis_type::management_msg_request,
          [](sis_primitive& p) { p.payload.resize(65534); },
          "size field" },
    };
    for (const auto& c : cases) {
        sis_primitive p = sample(c.type);
        EXPECT_NO_THROW(encode(p)) << to_string(c.type);
        c.spoil(p);
        const std::string what = encode_error_of([&] { encode(p); });
        EXPECT_NE(what.find(c.field), std::string::npos)
            << to_string(c.type) << ": expected \"" << c.field << "\" in \"" << what
            << "\"";
    }
    sis_primitive unknown;
    unknown.type = sis_type(0);
    EXPECT_THROW(encode(unknown), encode_error);
    unknown.type = sis_type(28);
    EXPECT_THROW(encode(unknown), encode_error);
}

TEST(SisEncodeErrors, UnusedFieldsAreIgnored)
{
    // A field the type does not carry is not an error, and not on the wire.
    sis_primitive p = sample(sis_type::keep_alive);
    p.sap = 200;
    p.payload = pattern(5);
    EXPECT_EQ(encode(p), hex("90 EB 00 00 01 11"));
    sis_primitive c = sample(sis_type::unidata_request_confirm);
    c.reason = 99;
    c.priority = 99;
    EXPECT_EQ(encode(c)[6] >> 4, 0);
}

// ---- vendor quirk: Rockwell Collins padding -------------------------------------------

TEST(SisQuirks, RockwellPaddingToleratedNeverProduced)
{
    for (sis_type t :
         { sis_type::unidata_indication, sis_type::expedited_unidata_indication }) {
        sis_primitive p = sample(t);
        p.service_type.tx_mode = sis_tx_mode::arq;
        p.errored_blocks.clear();
        p.non_received_blocks.clear();
        const bytes standard = encode(p);
        // 4 stray bytes right after the U_PDU size field; outer size patched to match.
        bytes quirky = standard;
        quirky.insert(quirky.begin() + 6 + 12, { 0x00, 0x00, 0x00, 0x00 });
        const size_t size = quirky.size() - 5;
        quirky[3] = uint8_t(size >> 8);
        quirky[4] = uint8_t(size);

        auto d = decode_sis(quirky);
        ASSERT_TRUE(d.ok()) << d.reason;
        EXPECT_TRUE(d.value.vendor_padding);
        EXPECT_EQ(d.value.payload, p.payload);
        sis_primitive expect = p;
        expect.vendor_padding = true;
        EXPECT_EQ(d.value, expect);
        EXPECT_EQ(encode(d.value), standard); // re-encoded in the standard form

        auto s = decode_sis(standard);
        ASSERT_TRUE(s.ok());
        EXPECT_FALSE(s.value.vendor_padding);

        sis_reassembler r;
        auto out = r.push(quirky.data(), quirky.size());
        ASSERT_EQ(out.size(), 1u);
        EXPECT_TRUE(out[0].vendor_padding);
        EXPECT_EQ(out[0].payload, p.payload);
    }
}

TEST(SisQuirks, NoPaddingDetectionInTxMode3)
{
    sis_primitive p = sample(sis_type::unidata_indication); // tx mode 3, block lists
    bytes f = encode(p);
    f.insert(f.begin() + 6 + 12, { 0, 0, 0, 0 });
    const size_t size = f.size() - 5;
    f[3] = uint8_t(size >> 8);
    f[4] = uint8_t(size);
    auto d = decode_sis(f);
    EXPECT_FALSE(d.ok() && d.value == p);
    EXPECT_FALSE(d.ok() && d.value.vendor_padding);
}

TEST(SisQuirks, TxMode3WithEmptyBlockListsIsNotPadding)
{
    // 4 bytes of zero counts look like the vendor padding (Wireshark 4.0 misreads this).
    sis_primitive p = sample(sis_type::unidata_indication);
    p.errored_blocks.clear();
    p.non_received_blocks.clear();
    auto d = decode_sis(encode(p));
    ASSERT_TRUE(d.ok()) << d.reason;
    EXPECT_FALSE(d.value.vendor_padding);
    EXPECT_EQ(d.value, p);
}

// ---- reassembler ----------------------------------------------------------------------

TEST(SisReassembler, RandomStreamAnyChunking)
{
    std::mt19937 rng(20240);
    const auto prims = random_primitives(rng, 200);
    const bytes stream = encode_all(prims);
    for (size_t max_chunk :
         { size_t(1), size_t(2), size_t(7), size_t(64), size_t(1500), stream.size() }) {
        sis_reassembler r;
        std::vector<sis_primitive> out;
        size_t i = 0;
        while (i < stream.size()) {
            const size_t n = std::min(stream.size() - i, size_t(1 + rng() % max_chunk));
            r.push(stream.data() + i, n, out);
            i += n;
            ASSERT_LE(r.buffered(), r.max_frame());
        }
        ASSERT_EQ(out.size(), prims.size()) << "max chunk " << max_chunk;
        for (size_t k = 0; k < prims.size(); ++k)
            ASSERT_EQ(out[k], prims[k]) << "frame " << k << " max chunk " << max_chunk;
        EXPECT_EQ(r.buffered(), 0u);
        EXPECT_EQ(r.counters().bytes_in, stream.size());
        EXPECT_EQ(r.counters().primitives, prims.size());
        EXPECT_EQ(r.counters().garbage_bytes, 0u);
        EXPECT_EQ(r.counters().decode_errors, 0u);
        EXPECT_EQ(r.counters().oversized, 0u);
        EXPECT_EQ(r.counters().edition1_frames, 0u);
    }
}

TEST(SisReassembler, EverySplitPoint)
{
    std::vector<sis_primitive> prims;
    for (sis_type t : { sis_type::bind_request,
                        sis_type::keep_alive,
                        sis_type::unidata_request,
                        sis_type::bind_accepted,
                        sis_type::unidata_indication,
                        sis_type::data_flow_off })
        prims.push_back(sample(t));
    // Size field 0x0114: the Ed1 reading (size 1, type 20) is plausible too.
    sis_primitive amb;
    amb.type = sis_type::unidata_request;
    amb.payload = pattern(0x114 - 12);
    prims.push_back(amb);
    prims.push_back(sample(sis_type::hard_link_terminate));
    const bytes stream = encode_all(prims);
    ASSERT_EQ(encode(amb)[4], 0x14);

    for (size_t k = 0; k <= stream.size(); ++k) {
        sis_reassembler r;
        std::vector<sis_primitive> out;
        r.push(stream.data(), k, out);
        r.push(stream.data() + k, stream.size() - k, out);
        ASSERT_EQ(out, prims) << "split at " << k;
    }
    sis_reassembler r;
    EXPECT_EQ(feed(r, stream, 1), prims);
}

TEST(SisReassembler, AmbiguousEd3FrameWithSyncInPayload)
{
    // Size field 0x1014 reads as Ed1 "size 16, type 20" too, and the payload puts 90 EB
    // right where that Ed1 frame would end: Ed3 must still win at every split.
    sis_primitive p;
    p.type = sis_type::unidata_request;
    p.payload = pattern(0x1014 - 12);
    p.payload[3] = 0x90; // frame offset 4 + 16 = 20 = 5 + 1 + 11 + 3
    p.payload[4] = 0xEB;
    const bytes f = encode(p);
    ASSERT_EQ(f[3], 0x10);
    ASSERT_EQ(f[4], 0x14);
    ASSERT_EQ(f[20], 0x90);
    sis_primitive k;
    k.type = sis_type::keep_alive;
    const bytes stream = cat({ f, encode(k) });
    for (size_t split = 0; split <= stream.size(); split += 1) {
        sis_reassembler r;
        std::vector<sis_primitive> out;
        r.push(stream.data(), split, out);
        r.push(stream.data() + split, stream.size() - split, out);
        ASSERT_EQ(out.size(), 2u) << "split " << split;
        ASSERT_EQ(out[0], p) << "split " << split;
        ASSERT_EQ(out[1], k);
    }
    sis_reassembler alone;
    auto out = alone.push(f.data(), f.size());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], p);
}

TEST(SisReassembler, GarbageIsSkippedAndCounted)
{
    std::mt19937 rng(31337);
    const auto prims = random_primitives(rng, 100, 200);
    bytes stream;
    size_t garbage = 0;
    const bytes false_syncs[] = { hex("90 EB FF"),
                                  hex("90 EB 00 00 00"),
                                  hex("90 90"),
                                  hex("90"),
                                  hex("EB 90 EB 1C") };
    for (size_t i = 0; i < prims.size(); ++i) {
        bytes g;
        if (i % 5 == 0)
            g = false_syncs[(i / 5) % 5];
        for (size_t n = rng() % 12; n > 0; --n)
            g.push_back(uint8_t(0x30 + rng() % 0x60)); // never 0x90, never a type byte
        garbage += g.size();
        stream.insert(stream.end(), g.begin(), g.end());
        const bytes f = encode(prims[i]);
        stream.insert(stream.end(), f.begin(), f.end());
    }
    stream.insert(stream.end(), { 0x41, 0x42, 0x43 }); // trailing junk
    garbage += 3;
    for (size_t chunk : { size_t(1), size_t(13), stream.size() }) {
        sis_reassembler r;
        const auto out = feed(r, stream, chunk);
        ASSERT_EQ(out, prims) << "chunk " << chunk;
        EXPECT_EQ(r.counters().garbage_bytes, garbage) << "chunk " << chunk;
        EXPECT_EQ(r.counters().primitives, prims.size());
        EXPECT_EQ(r.counters().decode_errors, 0u);
        EXPECT_EQ(r.buffered(), 0u);
    }
}

TEST(SisReassembler, Edition1Frames)
{
    std::mt19937 rng(1);
    // First frame unambiguous (Ed3 reading has type 0x90), then random Ed1 frames.
    std::vector<sis_primitive> prims{ sample(sis_type::bind_request) };
    for (const auto& p : random_primitives(rng, 150, 300))
        prims.push_back(p);
    bytes stream;
    for (const auto& p : prims) {
        const bytes f = as_ed1(encode(p));
        stream.insert(stream.end(), f.begin(), f.end());
    }
    for (size_t chunk : { size_t(1), size_t(3), size_t(100), stream.size() }) {
        sis_reassembler r;
        const auto out = feed(r, stream, chunk);
        ASSERT_EQ(out, prims) << "chunk " << chunk;
        EXPECT_EQ(r.counters().edition1_frames, prims.size());
        EXPECT_EQ(r.counters().garbage_bytes, 0u);
        EXPECT_EQ(r.counters().decode_errors, 0u);
    }
    // The known answer in Edition 1 form.
    sis_reassembler r;
    const bytes ed1 = hex("90 EB 00 04 03 90 08 00");
    auto out = r.push(ed1.data(), ed1.size());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type, sis_type::bind_accepted);
    EXPECT_EQ(out[0].mtu, 2048);
}

TEST(SisReassembler, Edition1KeepAliveThenMore)
{
    // 90 EB 00 01 11 also reads as Ed3 with size 0x0111; the next byte (0x90) is no type.
    sis_primitive k;
    k.type = sis_type::keep_alive;
    const bytes stream =
        cat({ as_ed1(encode(k)), as_ed1(encode(sample(sis_type::bind_accepted))) });
    sis_reassembler r;
    const auto out = feed(r, stream, 1);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0], k);
    EXPECT_EQ(out[1], sample(sis_type::bind_accepted));
    EXPECT_EQ(r.counters().edition1_frames, 2u);
    // Once the stream is known to be Ed1, a lone keep-alive is delivered at once.
    std::vector<sis_primitive> more;
    const bytes ka = as_ed1(encode(k));
    r.push(ka.data(), ka.size(), more);
    EXPECT_EQ(more.size(), 1u);
}

TEST(SisReassembler, AmbiguousEdition1FirstFrame)
{
    // Ed1 UNIDATA_REQUEST, size 15, first body byte 0x05: its Ed3 reading (size 0x0F14,
    // type 5) is plausible and preferred on a fresh stream, but does not decode.
    sis_primitive p;
    p.type = sis_type::unidata_request;
    p.destination_sap = 5;
    p.payload = pattern(3);
    const bytes first = as_ed1(encode(p));
    ASSERT_EQ(to_hex(bytes(first.begin(), first.begin() + 6)), "90eb000f1405");
    std::mt19937 rng(3);
    std::vector<sis_primitive> prims{ p };
    bytes stream = first;
    while (stream.size() < 0x0F14 + 5 + 400) {
        prims.push_back(random_primitive(rng, sis_type(1 + rng() % 27), 100));
        const bytes f = as_ed1(encode(prims.back()));
        stream.insert(stream.end(), f.begin(), f.end());
    }
    for (size_t chunk : { size_t(1), size_t(50), stream.size() }) {
        sis_reassembler r;
        const auto out = feed(r, stream, chunk);
        ASSERT_EQ(out, prims) << "chunk " << chunk;
        EXPECT_EQ(r.counters().decode_errors, 0u);
    }
}

TEST(SisReassembler, OversizedFrameIsSkippedByItsDeclaredSize)
{
    // A frame declaring 65520 bytes: everything inside that extent is skipped unread,
    // even a whole valid frame; the first frame after it comes out.
    const sis_primitive good = sample(sis_type::bind_accepted);
    const sis_primitive after = sample(sis_type::hard_link_terminate);
    const bytes head = hex("90 EB 00 FF F0 03"); // BIND_ACCEPTED of 65520 bytes
    bytes inside = cat({ bytes(30, 0x41), encode(good) });
    inside.resize(0xFFF0 - 1, 0x90); // sync bytes everywhere: none may be hunted
    const bytes stream = cat({ head, inside, encode(after) });
    for (size_t chunk : { size_t(1), size_t(997), stream.size() }) {
        sis_reassembler r;
        const auto out = feed(r, stream, chunk);
        ASSERT_EQ(out, std::vector<sis_primitive>{ after }) << "chunk " << chunk;
        EXPECT_EQ(r.counters().oversized, 1u);
        EXPECT_EQ(r.counters().garbage_bytes, 0u);
        EXPECT_EQ(r.skipping(), 0u);
        EXPECT_LT(r.buffered(), r.max_frame());
        EXPECT_NE(r.last_error().find("exceeds"), std::string::npos) << r.last_error();
        EXPECT_TRUE(r.take_answers().empty()); // not a request: nothing to answer
    }
}

// A 5,000-byte U_PDU holding a whole UNIDATA_REQUEST frame was re-scanned
// after its sync, and the inner frame was executed as a request of its own.
TEST(SisReassembler, OversizedUnidataRequestIsRejectedAndItsUpduNeverParsed)
{
    sis_primitive inner;
    inner.type = sis_type::unidata_request;
    inner.destination = addr(9);
    inner.destination_sap = 3;
    inner.payload = pattern(40);
    const bytes inner_frame = encode(inner);

    sis_primitive big;
    big.type = sis_type::unidata_request;
    big.priority = 4;
    big.destination = addr(0x0A0B0C, 6);
    big.destination_sap = 7;
    big.service_type.tx_mode = sis_tx_mode::arq;
    big.ttl = 30;
    for (size_t i = 0; big.payload.size() < 5000; ++i)
        big.payload.insert(big.payload.end(), inner_frame.begin(), inner_frame.end());
    big.payload.resize(5000);
    ASSERT_GT(encode(big).size(), sis_default_max_frame);

    sis_primitive expedited = big;
    expedited.type = sis_type::expedited_unidata_request;
    expedited.priority = 0;
    const sis_primitive good = sample(sis_type::keep_alive);
    const bytes stream =
        cat({ encode(big), encode(good), encode(expedited), encode(good) });
    for (size_t chunk : { size_t(1), size_t(13), size_t(4096), stream.size() }) {
        sis_reassembler r;
        const auto out = feed(r, stream, chunk);
        ASSERT_EQ(out, (std::vector<sis_primitive>{ good, good })) << "chunk " << chunk;
        const auto answers = r.take_answers();
        ASSERT_EQ(answers.size(), 2u);
        EXPECT_EQ(answers[0].type, sis_type::unidata_request_rejected);
        EXPECT_EQ(answers[1].type, sis_type::expedited_unidata_request_rejected);
        for (const auto& a : answers) {
            EXPECT_EQ(a.reason,
                      uint8_t(sis_unidata_rejected_reason::updu_larger_than_mtu));
            EXPECT_EQ(a.destination_sap, 7);
            EXPECT_EQ(a.destination, addr(0x0A0B0C, 6));
            EXPECT_TRUE(a.payload.empty());
        }
        EXPECT_TRUE(r.take_answers().empty());
        EXPECT_EQ(r.counters().oversized, 2u);
        EXPECT_EQ(r.counters().oversized_requests, 2u);
        EXPECT_EQ(r.counters().answers, 2u);
        EXPECT_EQ(r.counters().garbage_bytes, 0u);
        EXPECT_EQ(r.counters().decode_errors, 0u);
    }

    // A real frame above a small limit: its bytes skipped, the next one kept.
    sis_primitive small_big;
    small_big.type = sis_type::unidata_request;
    small_big.payload = bytes(100, 0x55);
    sis_reassembler small(64);
    const auto out = feed(small, cat({ encode(small_big), encode(good) }), 1);
    EXPECT_EQ(out, std::vector<sis_primitive>{ good });
    EXPECT_EQ(small.counters().garbage_bytes, 0u);
    EXPECT_EQ(small.take_answers().size(), 1u);
}

// A BIND_REQUEST with a 2-byte body was dropped without a reply.
TEST(SisReassembler, UndecodableBindRequestIsAnsweredWithBindRejected)
{
    const sis_primitive good = sample(sis_type::keep_alive);
    const bytes stream = cat({ hex("90 EB 00 00 03 01 90 14"),       // 2-byte body
                               hex("90 EB 00 00 05 01 90 14 00 00"), // 1 trailing byte
                               encode(good) });
    sis_reassembler r;
    EXPECT_EQ(feed(r, stream, 1), std::vector<sis_primitive>{ good });
    EXPECT_EQ(r.counters().decode_errors, 2u);
    const auto answers = r.take_answers();
    ASSERT_EQ(answers.size(), 2u);
    for (const auto& a : answers) {
        EXPECT_EQ(a.type, sis_type::bind_rejected);
        EXPECT_EQ(a.reason, uint8_t(sis_bind_rejected_reason::unknown));
    }
    r.reset();
    EXPECT_TRUE(r.take_answers().empty());
}

TEST(SisReassembler, DecodeErrorSkipsFrameOnly)
{
    sis_primitive good = sample(sis_type::hard_link_terminate);
    bytes bad_updu = encode(sample(sis_type::unidata_request));
    bad_updu[5 + 11] ^= 0x01; // U_PDU size off by one
    const bytes stream = cat({ hex("90 EB 00 00 02 01 90"), bad_updu, encode(good) });
    sis_reassembler r;
    const auto out = feed(r, stream, 3);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], good);
    EXPECT_EQ(r.counters().decode_errors, 2u);
    EXPECT_EQ(r.counters().garbage_bytes, 0u);
    EXPECT_NE(r.last_error().find("S_UNIDATA_REQUEST: U_PDU size"), std::string::npos)
        << r.last_error();
}

TEST(SisReassembler, FuzzNeverThrowsStaysBounded)
{
    std::mt19937 rng(424242);
    const bytes valid = encode_all(random_primitives(rng, 300, 400));
    for (int round = 0; round < 40; ++round) {
        bytes stream = valid;
        for (int k = 0; k < 200; ++k) { // corrupt, insert syncs, cut
            const size_t at = rng() % stream.size();
            switch (rng() % 4) {
            case 0:
                stream[at] = uint8_t(rng());
                break;
            case 1:
                stream.insert(stream.begin() + at, { 0x90, 0xEB });
                break;
            case 2:
                stream.insert(stream.begin() + at,
                              { 0x90,
                                0xEB,
                                0x00,
                                uint8_t(rng()),
                                uint8_t(rng()),
                                uint8_t(1 + rng() % 27) });
                break;
            default:
                stream.erase(stream.begin() + at,
                             stream.begin() + std::min(stream.size(), at + rng() % 8));
            }
        }
        sis_reassembler r(512 + rng() % 4096);
        std::vector<sis_primitive> out;
        size_t i = 0;
        ASSERT_NO_THROW({
            while (i < stream.size()) {
                const size_t n = std::min(stream.size() - i, size_t(1 + rng() % 700));
                r.push(stream.data() + i, n, out);
                i += n;
                ASSERT_LT(r.buffered(), r.max_frame());
            }
        });
        EXPECT_EQ(r.counters().bytes_in, stream.size());
        EXPECT_EQ(r.counters().primitives, out.size());
        for (const auto& p : out) // whatever came out is a valid primitive
            EXPECT_NO_THROW(encode(p));
    }
}

TEST(SisReassembler, ResetDropsPartialFrame)
{
    const bytes f = encode(sample(sis_type::unidata_request));
    sis_reassembler r;
    EXPECT_TRUE(r.push(f.data(), 10).empty());
    EXPECT_EQ(r.buffered(), 10u);
    r.reset();
    EXPECT_EQ(r.buffered(), 0u);
    auto out = r.push(f.data(), f.size());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], sample(sis_type::unidata_request));
    EXPECT_EQ(sis_reassembler(0).max_frame(), 6u);
}
