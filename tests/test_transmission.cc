#include "dl/transmission.h"

#include <gtest/gtest.h>

using namespace gr::hfstack::dl;

TEST(transmission, air_time_is_linear_in_bytes)
{
    phy_timing phy{ 0.6, 2400.0, 0.2 };
    EXPECT_DOUBLE_EQ(air_time(phy, 0), 0.8);
    EXPECT_DOUBLE_EQ(air_time(phy, 300), 0.6 + 1.0 + 0.2);
}

TEST(transmission, eot_rounds_up_to_half_seconds_and_saturates)
{
    EXPECT_EQ(eot_field(0.0), 0);
    EXPECT_EQ(eot_field(-3.0), 0);
    EXPECT_EQ(eot_field(0.01), 1);
    EXPECT_EQ(eot_field(0.5), 1);
    EXPECT_EQ(eot_field(0.51), 2);
    EXPECT_EQ(eot_field(10.0), 20);
    EXPECT_EQ(eot_field(127.5), 255);
    EXPECT_EQ(eot_field(600.0), 255);
}

// 75 bps: a 200-byte D_PDU takes about 22 s (s5066.md); five of them fill 127.5 s.
TEST(transmission, five_200_byte_dpdus_at_75_bps)
{
    phy_timing phy{ 4.8, 75.0, 0.0 };
    dpdu d;
    d.type = dpdu_type::data_only;
    d.destination = 1;
    d.source = 2;
    d.segment.resize(200 - encoded_size(d));
    ASSERT_EQ(encoded_size(d), 200u);
    EXPECT_NEAR(200 * 8 / 75.0, 21.3, 0.1);
    std::vector<size_t> sizes(10, 200);
    EXPECT_EQ(dpdus_that_fit(sizes, phy), 5u);
    EXPECT_EQ(dpdus_that_fit(sizes, phy, 20.0), 0u);
    EXPECT_EQ(dpdus_that_fit({}, phy), 0u);
}

TEST(transmission, stamped_eot_counts_down_to_the_end_of_the_burst)
{
    phy_timing phy{ 1.0, 1200.0, 0.5 };
    std::vector<dpdu> burst(4);
    for (auto& d : burst) {
        d.type = dpdu_type::data_only;
        d.destination = 1;
        d.source = 2;
        d.segment.resize(300 - encoded_size(d)); // 300 bytes = 2 s each at 1200 bps
    }
    stamp_eot(burst, phy);
    // Burst: 1 s preamble, 4 x 2 s, 0.5 s tail = 9.5 s; D_PDU i starts at 1 + 2i.
    EXPECT_EQ(burst[0].eot, 17); // 8.5 s left
    EXPECT_EQ(burst[1].eot, 13); // 6.5 s
    EXPECT_EQ(burst[2].eot, 9);  // 4.5 s
    EXPECT_EQ(burst[3].eot, 5);  // 2.5 s
    // Stamping does not change sizes, so re-stamping is stable.
    auto again = burst;
    stamp_eot(again, phy);
    for (size_t i = 0; i < burst.size(); ++i)
        EXPECT_EQ(again[i].eot, burst[i].eot);
}
