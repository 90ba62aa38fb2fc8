/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The node with S5066-EP5 large windows: negotiated per link, Edition 3 with a peer
 * that does not advertise them. */

#include "node_test_support.h"

namespace {

node_config large(uint32_t address, size_t window)
{
    node_config c = node_at(address);
    c.large_windows = true;
    c.arq_window = window;
    return c;
}

// What the bursts of one node carried.
struct burst_watch {
    size_t max_data_frames = 0; // ARQ data D_PDUs in one burst
    size_t long_frames = 0;     // D_PDUs with long FSNs
    size_t long_arq = 0;        // of which data and acks (not RESET/WIN-RESYNC)
    size_t fsn_frames = 0;      // D_PDUs of types 0-5
    size_t junk_bytes = 0;      // bytes an Edition 3 deframer could not place

    void on(const node_transmission& t)
    {
        dpdu_deframer lfsn;
        lfsn.set_long_fsn([](uint32_t, uint32_t) { return true; });
        size_t data = 0;
        for (auto& f : lfsn.push(t.burst.data(), t.burst.size())) {
            if (!f.frame.long_fsn)
                continue;
            ++long_frames;
            long_arq += f.frame.type != dpdu_type::reset_win_resync;
            data += f.frame.type == dpdu_type::data_only ||
                    f.frame.type == dpdu_type::data_ack;
        }
        dpdu_deframer e3;
        for (auto& f : e3.push(t.burst.data(), t.burst.size())) {
            fsn_frames += carries_fsn(f.frame.type);
            if (long_frames == 0)
                data += f.frame.type == dpdu_type::data_only ||
                        f.frame.type == dpdu_type::data_ack;
        }
        junk_bytes += e3.counters().junk_bytes;
        max_data_frames = std::max(max_data_frames, data);
    }
};

class NodeLargeWindows : public node_network_test
{
protected:
    // Nodes a and b with these configurations, their bursts watched.
    void add(const node_config& ca, const node_config& cb)
    {
        a = net.add_node(ca);
        b = net.add_node(cb);
        net.on_transmission([this](size_t node, const node_transmission& t) {
            (node == a ? wa : wb).on(t);
        });
    }
    // a streams `updus` to b over ARQ; every one must arrive once, in order.
    void transfer(const std::vector<bytes>& updus, double t_max)
    {
        cl.bind(a, 1, sis_tx_mode::arq);
        cl.bind(b, 1, sis_tx_mode::arq);
        cl.stream(a, 1, 2, updus);
        ASSERT_TRUE(net.run_until(
            [&] { return cl.count(b, sis_type::unidata_indication) == updus.size(); },
            t_max))
            << "b got " << cl.count(b, sis_type::unidata_indication);
        EXPECT_TRUE(same_sequence(cl.payloads_from(b, 1), updus));
    }
    burst_watch wa, wb;
};

} // namespace

TEST(NodeLargeWindowsConfig, WindowRangeFollowsTheOption)
{
    node_config c = node_at(1);
    c.arq_window = 129;
    EXPECT_THROW(node_engine{ c }, std::invalid_argument);
    c.large_windows = true;
    EXPECT_NO_THROW(node_engine{ c });
    c.arq_window = 32768;
    EXPECT_NO_THROW(node_engine{ c });
    c.arq_window = 32769;
    EXPECT_THROW(node_engine{ c }, std::invalid_argument);
}

// Two EP5 nodes, a 2 MB transfer with bit errors: every U_PDU once and in order, in
// bursts of far more than 128 D_PDUs, every FSN-carrying D_PDU in the long form.
TEST_F(NodeLargeWindows, PairDeliversMegabytesInOrderWithBitErrors)
{
    use_ber(1e-5, 24);
    add(large(1, 4096), large(2, 4096));
    const auto updus = random_updus(2000, 2048, 5066);
    size_t total = 0;
    for (auto& u : updus)
        total += u.size();
    ASSERT_GT(total, 2000000u);
    transfer(updus, 48 * 3600.0);
    EXPECT_GT(wa.max_data_frames, arq_max_window);
    EXPECT_GT(wa.long_frames, 0u);
    EXPECT_GT(wb.long_frames, 0u); // b's acks
    EXPECT_GT(net.node(a).counters().arq_retransmissions, 0u);
}

// An EP5 node and an Edition 3 one: the link falls back to Edition 3 D_PDUs and the
// 128-frame window, and the data arrive. (An EP5 caller's first FULL RESET goes in the
// long form with its request, which the Edition 3 node cannot read: it is sent again
// in Edition 3 form once the link is up.)
class NodeLargeWindowsFallback : public NodeLargeWindows,
                                 public ::testing::WithParamInterface<bool>
{
};

TEST_P(NodeLargeWindowsFallback, Edition3PeerFallsBack)
{
    const bool ep5_calls = GetParam();
    add(ep5_calls ? large(1, 4096) : node_at(1), ep5_calls ? node_at(2) : large(2, 4096));
    transfer(random_updus(300, 2048, 7), 12 * 3600.0);
    EXPECT_EQ(wa.long_arq + wb.long_arq, 0u);
    EXPECT_LE(wa.long_frames + wb.long_frames, ep5_calls ? 1u : 0u);
    EXPECT_GT(wa.fsn_frames, 0u);
    EXPECT_LE(wa.max_data_frames, arq_max_window);
    if (!ep5_calls) {
        EXPECT_EQ(wa.junk_bytes + wb.junk_bytes, 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(EitherEndCalls, NodeLargeWindowsFallback, ::testing::Bool());

// Data riding with the link request (data_with_link_request): an EP5 caller numbers
// them in the long form; an EP5 peer takes them with the FULL RESET's form, an Edition
// 3 peer cannot read them and gets them again in Edition 3 form. Either way every
// U_PDU arrives once, in order.
class NodeLargeWindowsDataOnRequest : public NodeLargeWindows,
                                      public ::testing::WithParamInterface<bool>
{
};

TEST_P(NodeLargeWindowsDataOnRequest, EveryUpduOnceInOrder)
{
    const bool peer_ep5 = GetParam();
    node_config ca = large(1, 2048), cb = peer_ep5 ? large(2, 2048) : node_at(2);
    ca.data_with_link_request = cb.data_with_link_request = true;
    add(ca, cb);
    transfer(random_updus(200, 2048, 11), 12 * 3600.0);
    EXPECT_GT(net.node(a).counters().data_with_link_request, 0u);
    if (peer_ep5)
        EXPECT_GT(wb.long_frames, 0u);
    else
        EXPECT_EQ(wb.long_frames, 0u);
}

INSTANTIATE_TEST_SUITE_P(PeerEp5OrNot, NodeLargeWindowsDataOnRequest, ::testing::Bool());
