// The App C receiver: our transmissions in every rate and interleaver decode through
// noise and a carrier offset; noise alone starts nothing; reserved codes and a cut
// burst neither crash it nor wedge it.
#include "chan/watterson_channel.h"
#include "phy/m110c_receiver.h"
#include "phy/m110c_transmitter.h"
#include "phy/psk_modulator.h"
#include "phy/serial_tone_frontend.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace gr::hfstack;
using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<uint8_t> b(n);
    for (auto& x : b)
        x = uint8_t(rng());
    return b;
}

// Audio in, bursts out, fed in pieces as a block would, with half a second of silence
// after.
std::vector<m110c_burst> receive_audio(std::vector<float> audio, double fs, const m110c_receiver_config& config = {})
{
    audio.resize(audio.size() + size_t(fs / 2), 0.0f);
    serial_tone_frontend_config fc;
    fc.sample_rate = fs;
    serial_tone_frontend front(fc);
    m110c_receiver rx(config);
    std::vector<m110c_burst> bursts;
    std::vector<cf> bb;
    for (size_t k = 0; k < audio.size(); k += 4096) {
        bb.clear();
        front.process(audio.data() + k, std::min<size_t>(4096, audio.size() - k), bb);
        rx.process(bb.data(), bb.size(), bursts);
    }
    return bursts;
}

// Points as audio at fs between silences, through AWGN at snr_db (3 kHz) with a
// carrier offset, or through fading `paths`.
std::vector<float> over_the_air(const std::vector<std::complex<float>>& points, double fs, double snr_db,
                                double offset_hz, uint64_t seed, const std::vector<chan::watterson_path>& paths = {})
{
    psk_modulator_config mc;
    mc.sample_rate = fs;
    mc.rms = 0.25;
    std::vector<float> audio(size_t(0.7 * fs), 0.0f);
    const std::vector<float> burst = psk_modulator(mc).audio(points);
    audio.insert(audio.end(), burst.begin(), burst.end());
    audio.resize(audio.size() + size_t(0.5 * fs), 0.0f);
    chan::watterson_config cc;
    cc.sample_rate_hz = fs;
    cc.real_signal = true;
    cc.signal_power = 0.0625;
    cc.snr_db = snr_db;
    cc.frequency_offset_hz = offset_hz;
    cc.seed = seed;
    cc.paths = chan::normalised_paths(paths);
    chan::watterson_channel channel(cc);
    std::vector<float> out;
    channel.process(audio.data(), audio.size(), out);
    return out;
}

} // namespace

class m110c_round_trip : public ::testing::TestWithParam<const char*>
{
};

TEST_P(m110c_round_trip, decodes_our_burst_through_noise_and_offset)
{
    const std::string name = GetParam();
    const unsigned bps = unsigned(std::stoul(name));
    const std::string letters = name.substr(name.find_first_not_of("0123456789"));
    const char* names[] = { "US", "VS", "S", "M", "L", "VL" };
    m110c_interleaver interleaver = m110c_interleaver::short_;
    for (unsigned i = 0; i < 6; ++i)
        if (letters == names[i])
            interleaver = m110c_interleaver(i);
    const m110c_mode mode = *m110c_mode_for(bps, interleaver);
    ASSERT_EQ(mode.name(), name);
    const std::vector<uint8_t> data = random_bytes(bps / 8 + 100, 7);
    const auto points = m110c_transmit_points(mode, data.data(), data.size());
    const std::vector<m110c_burst> bursts = receive_audio(over_the_air(points, 9600, 35, 20.0, 2), 9600);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_EQ(bursts[0].mode, name);
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_EQ(bursts[0].bytes, data);
    EXPECT_NEAR(bursts[0].frequency_offset_hz, 20.0, 1.0);
    EXPECT_GT(bursts[0].snr_db, 25.0);
}

INSTANTIATE_TEST_SUITE_P(every_mode, m110c_round_trip,
                         ::testing::Values("3200US", "3200VS", "3200S", "3200M", "3200L", "3200VL", "4800US",
                                           "4800VS", "4800S", "4800M", "4800L", "4800VL", "6400US", "6400VS",
                                           "6400S", "6400M", "6400L", "6400VL", "8000US", "8000VS", "8000S",
                                           "8000M", "8000L", "8000VL", "9600US", "9600VS", "9600S", "9600M",
                                           "9600L", "9600VL", "12800U"));
