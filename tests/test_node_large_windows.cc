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
    void watch()
    {
        net.on_transmission([this](size_t node, const node_transmission& t) {
            (node == a ? wa : wb).on(t);
        });
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
    a = net.add_node(large(1, 4096));
    b = net.add_node(large(2, 4096));
    watch();
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    const auto updus = random_updus(2000, 2048, 5066);
    size_t total = 0;
    for (auto& u : updus)
        total += u.size();
    ASSERT_GT(total, 2000000u);
    cl.stream(a, 1, 2, updus);
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(b, sis_type::unidata_indication) == updus.size(); },
        48 * 3600.0))
        << "b got " << cl.count(b, sis_type::unidata_indication);
    EXPECT_TRUE(same_sequence(cl.payloads_from(b, 1), updus));
    EXPECT_GT(wa.max_data_frames, arq_max_window);
    EXPECT_GT(wa.long_frames, 0u);
    EXPECT_GT(wb.long_frames, 0u); // b's acks
    EXPECT_GT(net.node(a).counters().arq_retransmissions, 0u);
}

// An EP5 node and an Edition 3 one: the link falls back to Edition 3 D_PDUs and the
// 128-frame window (clean channel: an Edition 3 deframer places every byte), and the
// data arrive.
class NodeLargeWindowsFallback : public NodeLargeWindows,
                                 public ::testing::WithParamInterface<bool>
{
};

TEST_P(NodeLargeWindowsFallback, Edition3PeerFallsBack)
{
    const bool ep5_calls = GetParam();
    a = net.add_node(ep5_calls ? large(1, 4096) : node_at(1));
    b = net.add_node(ep5_calls ? node_at(2) : large(2, 4096));
    watch();
    cl.bind(a, 1, sis_tx_mode::arq);
    cl.bind(b, 1, sis_tx_mode::arq);
    const auto updus = random_updus(300, 2048, 7);
    cl.stream(a, 1, 2, updus);
    ASSERT_TRUE(net.run_until(
        [&] { return cl.count(b, sis_type::unidata_indication) == updus.size(); },
        12 * 3600.0));
    EXPECT_TRUE(same_sequence(cl.payloads_from(b, 1), updus));
    EXPECT_EQ(wa.long_frames + wb.long_frames, 0u);
    EXPECT_GT(wa.fsn_frames, 0u);
    EXPECT_LE(wa.max_data_frames, arq_max_window);
    EXPECT_EQ(wa.junk_bytes + wb.junk_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(EitherEndCalls, NodeLargeWindowsFallback, ::testing::Bool());
