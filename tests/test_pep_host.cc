/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Transfers through two HF-PEPs in virtual time (traffic/pep_host.h): the section D
 * measurement of anchors.md, connect, send N bytes, wait for the confirmation, close,
 * on the simulated network with the real node and PEP kernels. */
#include "dl/cpdu.h"
#include "dl/dpdu.h"
#include "dl/spdu.h"
#include "net/slep_wire.h"
#include "traffic/pep_host.h"
#include "traffic/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>

using namespace gr::hfstack;
using namespace gr::hfstack::traffic;

namespace {

double
utilisation(const sim::scenario_config& c, size_t bytes, const pep_transfer_record& r)
{
    return 100.0 * double(bytes) * 8 / (sim::waveform_for(c.mode).bit_rate * r.total_s);
}

// One random-payload transfer with data riding the link request (and `options`, node
// options to add), every transmission traced; checked confirmed.
pep_run_result traced_transfer(const std::string& mode,
                               size_t bytes,
                               double duration_s,
                               const std::string& options = "")
{
    sim::scenario_config c;
    c.mode = mode;
    c.duration_s = duration_s;
    c.node_options =
        "data_with_link_request=true" + (options.empty() ? "" : "," + options);
    c.trace = true;
    auto r = run_pep_transfers(c, bytes, 1, pep_payload::random, false);
    EXPECT_TRUE(r.client.transfers.at(0).confirmed) << mode << " " << bytes;
    return r;
}

// The transmissions of one node (0: the client's, 1: the server's), in order.
std::vector<const sim::transmission_record*> transmissions_of(const pep_run_result& r,
                                                              size_t node)
{
    std::vector<const sim::transmission_record*> out;
    for (const auto& t : r.transmissions)
        if (t.node == node)
            out.push_back(&t);
    return out;
}

} // namespace

TEST(PepHost, TransfersAreConfirmedAndTakeTheLinksTime)
{
    for (size_t bytes : { size_t(1000), size_t(100000) }) {
        sim::scenario_config c;
        c.mode = "9600S";
        c.duration_s = 3600;
        const auto r = run_pep_transfers(c, bytes, 2, pep_payload::random, false).client;
        ASSERT_EQ(r.transfers.size(), 2u) << bytes;
        for (const auto& t : r.transfers) {
            EXPECT_TRUE(t.confirmed) << bytes;
            // No faster than the bits on the air allow.
            EXPECT_GT(t.total_s, double(bytes) * 8 / 9600) << bytes;
        }
        std::cout << bytes << " bytes at 9600S: " << utilisation(c, bytes, r.transfers[0])
                  << " % (first), " << utilisation(c, bytes, r.transfers[1])
                  << " % (second)\n";
    }
}

// Real English for the text payload: the GPL's text, which every Debian system carries
// (base-files); DEFLATE shrinks it about 2.9 times, as prose and markup usually go.
dl::bytes english_text()
{
    std::ifstream f("/usr/share/common-licenses/GPL-3", std::ios::binary);
    return dl::bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TEST(PepHost, CompressionShortensTextTransfers)
{
    const auto text = english_text();
    if (text.empty())
        GTEST_SKIP()
            << "no /usr/share/common-licenses/GPL-3 (Debian's base-files) to send";
    sim::scenario_config c;
    c.mode = "1200S";
    c.duration_s = 7200;
    const auto plain =
        run_pep_transfers(c, 20000, 1, pep_payload::text, false, text).client;
    const auto packed =
        run_pep_transfers(c, 20000, 1, pep_payload::text, true, text).client;
    const auto random_packed =
        run_pep_transfers(c, 20000, 1, pep_payload::random, true).client;
    ASSERT_TRUE(plain.transfers.at(0).confirmed);
    ASSERT_TRUE(packed.transfers.at(0).confirmed);
    ASSERT_TRUE(random_packed.transfers.at(0).confirmed);
    // Prose shrinks about threefold; random bytes cannot, and cost at most a few
    // per cent for the trying (DEFLATE's stored blocks).
    EXPECT_LT(packed.transfers[0].total_s * 2, plain.transfers[0].total_s);
    EXPECT_GT(random_packed.transfers[0].total_s, plain.transfers[0].total_s * 0.98);
    EXPECT_LT(random_packed.transfers[0].total_s, plain.transfers[0].total_s * 1.05);
}

// Without DEFLATE the link carries bytes blind: the payload changes nothing.
TEST(PepHost, WithoutCompressionThePayloadChangesNothing)
{
    sim::scenario_config c;
    c.mode = "9600S";
    c.duration_s = 3600;
    const auto text =
        english_text().empty() ? dl::bytes{ 'a', 'b', 'c' } : english_text();
    const auto random = run_pep_transfers(c, 10000, 1, pep_payload::random, false).client;
    const auto prose =
        run_pep_transfers(c, 10000, 1, pep_payload::text, false, text).client;
    ASSERT_TRUE(random.transfers.at(0).confirmed);
    ASSERT_TRUE(prose.transfers.at(0).confirmed);
    EXPECT_DOUBLE_EQ(random.transfers[0].total_s, prose.transfers[0].total_s);
}

TEST(PepHost, ATextPayloadWithoutATextIsRefused)
{
    sim::scenario_config c;
    c.mode = "9600S";
    EXPECT_THROW(run_pep_transfers(c, 1000, 1, pep_payload::text, false),
                 std::invalid_argument);
}

// A bulk transfer on a clean 9600 bps link: after the first (probing) exchange, a data
// transmission is the whole ARQ window (127 D_PDUs) of full 1023-byte segments, as SLEP
// cuts C_PDUs of exactly two segments and the node does not shorten segments to pack
// an air time the window ends first.
TEST(PepHost, BulkTransmissionsFillTheArqWindowWithWholeSegments)
{
    const auto r = traced_transfer("9600S", 400000, 3600);
    const auto from_client = transmissions_of(r, 0);
    ASSERT_GE(from_client.size(), 3u);
    const auto& bulk = *from_client[1];
    size_t full = 0, off = 0;
    for (size_t sz : bulk.dpdu_sizes) {
        const auto d = dl::decode_dpdu(bulk.burst.data() + off, sz);
        ASSERT_TRUE(d.ok());
        full += d.value.segment.size() == dl::max_segment_size;
        off += sz;
    }
    EXPECT_GE(full, 126u);
    EXPECT_GT(bulk.air_time_s, 100.0); // was 74.6 s with 2048-byte U_PDUs
}

// Until a link's losses are known, a probe burst that more data follow is cut for the
// cautious segment_probe_ber (its long frames, lost again and again on a noisy link,
// would hold the window's lower edge); one that ends the transfer is cut for the prior
// BER, as is any probe with segment_probe_ber 0.
TEST(PepHost, AProbeBurstIsCutFinerOnlyWhenMoreDataFollowIt)
{
    auto largest_segment_of_first_burst = [](const pep_run_result& r) {
        const auto ours = transmissions_of(r, 0);
        EXPECT_FALSE(ours.empty());
        size_t largest = 0, off = 0;
        for (size_t sz : ours.at(0)->dpdu_sizes) {
            const auto d = dl::decode_dpdu(ours[0]->burst.data() + off, sz);
            off += sz;
            EXPECT_TRUE(d.ok());
            if (d.value.type == dl::dpdu_type::data_only)
                largest = std::max(largest, d.value.segment.size());
        }
        return largest;
    };
    const size_t alone =
        largest_segment_of_first_burst(traced_transfer("9600S", 1000, 600));
    const size_t followed =
        largest_segment_of_first_burst(traced_transfer("9600S", 100000, 3600));
    const size_t followed_at_prior = largest_segment_of_first_burst(
        traced_transfer("9600S", 100000, 3600, "segment_probe_ber=0"));
    EXPECT_LT(followed, alone);
    EXPECT_EQ(followed_at_prior, alone);
    EXPECT_LT(alone, dl::max_segment_size); // the prior is not a clean link
}

// The far proxy's answer to a 1 kB transfer at 1200 bps: its accept, the server's
// confirmation and the close leave as one SLEP DATA PDU (coalesce_s), ahead of the
// node's delivery confirmation of the OPEN (a yielding C_PDU), so the confirmation
// reaches the client in the answer's first interleaver block (behind SLEP's first HELLO
// to the peer, 11 bytes).
TEST(PepHost, TheFarProxysAnswerLeadsItsTransmissionAsOnePdu)
{
    const auto r = traced_transfer("1200S", 1000, 600);
    const auto from_server = transmissions_of(r, 1);
    ASSERT_FALSE(from_server.empty());
    const sim::transmission_record* answer = from_server.front();
    // The S_PDUs of its ARQ C_PDUs, in order (each fits one segment here).
    std::vector<dl::spdu> spdus;
    size_t off = 0;
    for (size_t sz : answer->dpdu_sizes) {
        const auto d = dl::decode_dpdu(answer->burst.data() + off, sz);
        off += sz;
        ASSERT_TRUE(d.ok());
        if (d.value.type != dl::dpdu_type::data_only &&
            d.value.type != dl::dpdu_type::data_ack)
            continue;
        ASSERT_TRUE(d.value.cpdu_start && d.value.cpdu_end);
        const auto cp = dl::decode_cpdu(d.value.segment);
        ASSERT_TRUE(cp.ok());
        const auto sp = dl::decode_spdu(cp.value.spdu);
        ASSERT_TRUE(sp.ok());
        spdus.push_back(sp.value);
    }
    // Behind the answer, SLEP's first HELLO to this peer (its incarnation, once per
    // peer), then the confirmation.
    ASSERT_EQ(spdus.size(), 3u);
    EXPECT_EQ(spdus[0].type, dl::spdu_type::data);
    EXPECT_EQ(spdus[1].type, dl::spdu_type::data);
    EXPECT_EQ(spdus[2].type, dl::spdu_type::data_delivery_confirm);
    const auto hello = net::decode_slep(spdus[1].updu);
    ASSERT_TRUE(hello.ok());
    EXPECT_EQ(hello.value.type, net::slep_type::hello);
    const auto slep = net::decode_slep(spdus[0].updu);
    ASSERT_TRUE(slep.ok());
    EXPECT_EQ(slep.value.type, net::slep_type::data);
    EXPECT_TRUE(slep.value.flags & net::slep_flag::fin);
    EXPECT_EQ(slep.value.data.size(), 4u); // status (2 bytes), then the server's "OK"
}
