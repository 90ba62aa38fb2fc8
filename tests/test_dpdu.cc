/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "dl/crc.h"
#include "dl/dpdu.h"
#include "hex_support.h"

#include <gtest/gtest.h>

#include <random>

using namespace gr::hfstack::dl;

namespace {

dpdu sample(dpdu_type t)
{
    dpdu d;
    d.type = t;
    d.eot = 200;
    d.address_size = 4;
    d.destination = 0x1234;
    d.source = 0xABCD;
    return d;
}

} // namespace

// Known answer of STANAG 5066 Annex C.
TEST(Dpdu, WarningVectorEncodes)
{
    dpdu d;
    d.type = dpdu_type::warning;
    d.destination = 5;
    d.source = 100;
    d.received_frame_type = 0;
    d.warning_reason = 2;
    EXPECT_EQ(encode(d), hex("90 EB F0 00 00 47 05 64 02 5F 1E"));
}

TEST(Dpdu, WarningVectorDecodes)
{
    const bytes w = hex("90 EB F0 00 00 47 05 64 02 5F 1E");
    auto r = decode_dpdu(w.data(), w.size());
    ASSERT_TRUE(r.ok()) << r.reason;
    EXPECT_EQ(r.value.type, dpdu_type::warning);
    EXPECT_EQ(r.value.address_size, 2);
    EXPECT_EQ(r.value.destination, 5u);
    EXPECT_EQ(r.value.source, 100u);
    EXPECT_EQ(r.value.received_frame_type, 0);
    EXPECT_EQ(r.value.warning_reason, 2);
}

// A DATA-ONLY D_PDU worked out by hand from Annex C: flags byte START|END|
// DELIVER-IN-ORDER with size 3, then sequence 7; header size 9.
TEST(Dpdu, DataOnlyLayoutByHand)
{
    dpdu d;
    d.type = dpdu_type::data_only;
    d.eot = 10;
    d.destination = 1;
    d.source = 2;
    d.cpdu_start = d.cpdu_end = d.deliver_in_order = true;
    d.tx_sequence = 7;
    d.segment = { 'a', 'b', 'c' };
    bytes w = encode(d);
    // sync, type 0/EOW 0, EOW 0, EOT 10, m=1 h=9, address 0x12, flags, size, seq
    bytes head = hex("90 EB 00 00 0A 29 12 E0 03 07");
    ASSERT_GE(w.size(), head.size());
    EXPECT_EQ(bytes(w.begin(), w.begin() + 10), head);
    EXPECT_EQ(get_crc16_le(w.data() + 10), crc16_s5066(w.data() + 2, 8));
    EXPECT_EQ(bytes(w.begin() + 12, w.begin() + 15), d.segment);
    EXPECT_EQ(get_crc32_le(w.data() + 15), crc32_s5066(d.segment.data(), 3));
    EXPECT_EQ(w.size(), 19u);
}

// NON-ARQ header size must be 15 (open code has written 13) and the 12-bit C_PDU
// ID is split 4 bits high in byte 0 and 8 bits in byte 2.
TEST(Dpdu, NonArqLayoutByHand)
{
    dpdu d;
    d.type = dpdu_type::non_arq_data;
    d.destination = broadcast_address;
    d.source = 0x0FFFFFFF;
    d.cpdu_id = 0xABC;
    d.deliver_in_order = true;
    d.cpdu_size = 0x0102;
    d.segment_offset = 0x0304;
    d.reception_window = 0x0506;
    d.segment = bytes(0x155, 0x5A);
    bytes w = encode(d);
    EXPECT_EQ(w[2], 0x70);
    EXPECT_EQ(w[5], (7 << 5) | 15);
    const uint8_t* t = w.data() + 6 + 7;
    EXPECT_EQ(t[0], 0xA0 | 0x08 | 0x04 | 0x01);
    EXPECT_EQ(t[1], 0x55);
    EXPECT_EQ(t[2], 0xBC);
    EXPECT_EQ(bytes(t + 3, t + 9), hex("01 02 03 04 05 06"));
    auto r = decode_dpdu(w.data(), w.size());
    ASSERT_TRUE(r.ok()) << r.reason;
    EXPECT_EQ(r.value.destination, broadcast_address);
    EXPECT_EQ(r.value, [&] {
        auto e = d;
        e.address_size = 7;
        return e;
    }());
}

TEST(Dpdu, AddressSizeIsSmallestThatFits)
{
    EXPECT_EQ(address_size_for(0, 0), 1);
    EXPECT_EQ(address_size_for(15, 15), 1);
    EXPECT_EQ(address_size_for(16, 0), 2);
    EXPECT_EQ(address_size_for(0, 0xFFFFF), 5);
    EXPECT_EQ(address_size_for(0x0FFFFFFF, 1), 7);
}

TEST(Dpdu, OddAddressSizePacksNibbles)
{
    dpdu d = sample(dpdu_type::ack_only);
    d.address_size = 3; // 3 nibbles each: 0x123 and 0x456 -> 12 34 56
    d.destination = 0x123;
    d.source = 0x456;
    bytes w = encode(d);
    EXPECT_EQ(bytes(w.begin() + 6, w.begin() + 9), hex("12 34 56"));
    auto r = decode_dpdu(w.data(), w.size());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value.destination, 0x123u);
    EXPECT_EQ(r.value.source, 0x456u);
}

TEST(Dpdu, EowLayouts)
{
    EXPECT_EQ(eow_content(eow_rate_request{ 11, 2, 1 }), 0xB9);
    EXPECT_EQ(eow_content(eow_rate_response{ 1, 5 }), 0x25);
    eow_capability c;
    c.adaptive = c.mil_std_188_110a = c.arcs = true;
    EXPECT_EQ(eow_content(c), 0xA1);
    EXPECT_EQ(eow_content(eow_hdr_rate_request{ 3, 2 }), 0x1A);
    EXPECT_EQ(eow_as_rate_request(0xB9).data_rate, 11);
    EXPECT_EQ(eow_as_rate_request(0xB9).interleaving, 2);
    EXPECT_EQ(eow_as_rate_request(0xB9).other, 1);
    EXPECT_EQ(eow_as_rate_response(0x25).response, 1);
    EXPECT_EQ(eow_as_rate_response(0x25).reason, 5);
    EXPECT_TRUE(eow_as_capability(0xA1).arcs);
    EXPECT_FALSE(eow_as_capability(0xA1).full_duplex);
    EXPECT_EQ(eow_as_hdr_rate_request(0x1A).waveform, 3);
    EXPECT_THROW(eow_content(eow_rate_request{ 16, 0, 0 }), encode_error);

    dpdu d = sample(dpdu_type::data_ack);
    d.eow = eow_type::drc_request;
    d.eow_content = 0xB9;
    bytes w = encode(d);
    EXPECT_EQ(w[2], 0x21);
    EXPECT_EQ(w[3], 0xB9);
}

TEST(Dpdu, EveryTypeRoundTrips)
{
    for (unsigned t : { 0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 15u }) {
        dpdu d = sample(dpdu_type(t));
        d.eow = eow_type::capability;
        d.eow_content = 0x5A;
        switch (d.type) {
        case dpdu_type::data_only:
        case dpdu_type::data_ack:
            d.cpdu_start = d.drop_cpdu = d.tx_win_lwe = true;
            d.tx_sequence = 201;
            d.segment = bytes(1023, 0xC3);
            if (d.type == dpdu_type::data_ack) {
                d.rx_lwe = 77;
                d.selective_acks = bytes(16, 0x81);
            }
            break;
        case dpdu_type::ack_only:
        case dpdu_type::expedited_ack_only:
            d.rx_lwe = 250;
            d.selective_acks = { 0x01, 0x80 };
            break;
        case dpdu_type::reset_win_resync:
            d.full_reset = d.reset_ack = true;
            d.new_rx_lwe = 9;
            d.reset_frame_id = 200;
            break;
        case dpdu_type::expedited_data_only:
            d.cpdu_end = true;
            d.cpdu_id = 15;
            d.tx_sequence = 3;
            d.segment = { 1, 2, 3 };
            break;
        case dpdu_type::management:
            d.eow = eow_type::hdr_drc_request;
            d.extended_message_flag = d.valid_message = true;
            d.management_frame_id = 42;
            d.extended_message = hex("00 00 25 80 01 00");
            break;
        case dpdu_type::non_arq_data:
        case dpdu_type::expedited_non_arq_data:
            d.destination = group_address_flag | 0x77;
            d.cpdu_id = 4095;
            d.cpdu_size = 2000;
            d.segment_offset = 1000;
            d.reception_window = 60000;
            d.segment = bytes(500, 0x11);
            break;
        case dpdu_type::warning:
            d.received_frame_type = 9;
            d.warning_reason = 1;
            break;
        }
        bytes w = encode(d);
        EXPECT_EQ(w.size(), encoded_size(d)) << to_string(d.type);
        auto r = decode_dpdu(w.data(), w.size());
        ASSERT_TRUE(r.ok()) << to_string(d.type) << ": " << r.reason;
        EXPECT_EQ(r.value, d) << to_string(d.type);
    }
}

// Property: random valid D_PDUs of every type survive encode -> decode unchanged.
TEST(Dpdu, RandomRoundTripProperty)
{
    std::mt19937 rng(5066);
    const unsigned types[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 15 };
    auto u = [&](unsigned bits) { return unsigned(rng() & ((1u << bits) - 1)); };
    auto b = [&]() { return bool(rng() & 1); };
    for (int n = 0; n < 20000; ++n) {
        dpdu d;
        d.type = dpdu_type(types[rng() % 10]);
        d.eow = eow_type(u(4));
        d.eow_content = uint8_t(u(8));
        d.eot = uint8_t(u(8));
        d.source = u(28) >> (4 * (rng() % 7));
        d.destination = u(28) >> (4 * (rng() % 7));
        d.address_size = uint8_t(
            std::max<unsigned>(address_size_for(d.destination, d.source), 1 + rng() % 7));
        auto bytes_of = [&](size_t max) {
            bytes v(rng() % (max + 1));
            for (auto& x : v)
                x = uint8_t(rng());
            return v;
        };
        switch (d.type) {
        case dpdu_type::data_only:
        case dpdu_type::data_ack:
            d.cpdu_start = b(), d.cpdu_end = b(), d.deliver_in_order = b();
            d.drop_cpdu = b(), d.tx_win_uwe = b(), d.tx_win_lwe = b();
            d.tx_sequence = uint8_t(u(8));
            d.segment = bytes_of(max_segment_size);
            if (d.type == dpdu_type::data_ack) {
                d.rx_lwe = uint8_t(u(8));
                d.selective_acks = bytes_of(16);
            }
            break;
        case dpdu_type::ack_only:
        case dpdu_type::expedited_ack_only:
            d.rx_lwe = uint8_t(u(8));
            d.selective_acks = bytes_of(16);
            break;
        case dpdu_type::reset_win_resync:
            d.full_reset = b(), d.reset_tx_win_request = b();
            d.reset_rx_win_command = b(), d.reset_ack = b();
            d.new_rx_lwe = uint8_t(u(8));
            d.reset_frame_id = uint8_t(u(8));
            break;
        case dpdu_type::expedited_data_only:
            d.cpdu_start = b(), d.cpdu_end = b();
            d.cpdu_id = uint16_t(u(4));
            d.tx_sequence = uint8_t(u(8));
            d.segment = bytes_of(max_segment_size);
            break;
        case dpdu_type::management:
            d.extended_message_flag = b(), d.valid_message = b(), d.management_ack = b();
            d.management_frame_id = uint8_t(u(8));
            d.extended_message = bytes_of(23);
            break;
        case dpdu_type::non_arq_data:
        case dpdu_type::expedited_non_arq_data:
            if (b())
                d.destination |= group_address_flag;
            d.deliver_in_order = b();
            d.cpdu_id = uint16_t(u(12));
            d.cpdu_size = uint16_t(u(16));
            d.segment_offset = uint16_t(u(16));
            d.reception_window = uint16_t(u(16));
            d.segment = bytes_of(max_segment_size);
            break;
        case dpdu_type::warning:
            d.received_frame_type = uint8_t(u(4));
            d.warning_reason = uint8_t(u(4));
            break;
        }
        bytes w = encode(d);
        auto r = decode_dpdu(w.data(), w.size());
        ASSERT_TRUE(r.ok()) << n << " " << to_string(d.type) << ": " << r.reason;
        ASSERT_EQ(r.value, d) << n << " " << to_string(d.type);
    }
}

TEST(Dpdu, EncodeRejectsValuesThatDoNotFit)
{
    dpdu d = sample(dpdu_type::data_only);
    d.segment = bytes(1024);
    EXPECT_THROW(encode(d), encode_error);

    d = sample(dpdu_type::ack_only);
    d.selective_acks = bytes(17);
    EXPECT_THROW(encode(d), encode_error);

    d = sample(dpdu_type::management);
    d.extended_message = bytes(24); // header size 32 > 31
    EXPECT_THROW(encode(d), encode_error);

    d = sample(dpdu_type::data_only);
    d.destination = group_address_flag | 1; // ARQ to a group
    EXPECT_THROW(encode(d), encode_error);

    d = sample(dpdu_type::data_only);
    d.address_size = 1; // cannot hold 0xABCD
    EXPECT_THROW(encode(d), encode_error);

    d = sample(dpdu_type::expedited_data_only);
    d.cpdu_id = 16;
    EXPECT_THROW(encode(d), encode_error);

    d = sample(dpdu_type::warning);
    d.type = dpdu_type(9);
    EXPECT_THROW(encode(d), encode_error);
}

TEST(Dpdu, DecodeReportsWhy)
{
    const bytes good = encode([] {
        dpdu d = sample(dpdu_type::data_only);
        d.segment = { 1, 2, 3, 4 };
        return d;
    }());

    EXPECT_EQ(decode_dpdu(good.data(), 3).error, decode_error::truncated);
    EXPECT_EQ(decode_dpdu(good.data(), good.size() - 1).error, decode_error::truncated);

    bytes x = good;
    x[0] = 0x91;
    EXPECT_EQ(decode_dpdu(x.data(), x.size()).error, decode_error::bad_sync);

    x = good;
    x[2] = 0x90; // type 9
    EXPECT_EQ(decode_dpdu(x.data(), x.size()).error, decode_error::unknown_type);

    x = good;
    x[5] = uint8_t((x[5] & 0xE0) | 13); // DATA-ONLY with header size 13
    EXPECT_EQ(decode_dpdu(x.data(), x.size()).error, decode_error::bad_size);

    x = good;
    x[5] &= 0x1F; // address size 0
    EXPECT_EQ(decode_dpdu(x.data(), x.size()).error, decode_error::bad_field);

    x = good;
    x[4] ^= 1; // EOT bit flip
    EXPECT_EQ(decode_dpdu(x.data(), x.size()).error, decode_error::header_crc);

    x = good;
    x[x.size() - 6] ^= 0x40; // segment bit flip
    auto r = decode_dpdu(x.data(), x.size());
    EXPECT_EQ(r.error, decode_error::segment_crc);
    EXPECT_EQ(r.value.segment.size(), 4u); // header fields and damaged bytes kept

    x = good;
    x.push_back(0);
    EXPECT_EQ(decode_dpdu(x.data(), x.size()).error, decode_error::bad_size);
}
