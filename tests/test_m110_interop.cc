/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Readings of the constants STANAG 4539 App C and STANAG 5069 (110D App D) leave open,
// as other implementations take them, and a receiver that finds them itself:
//  - every App C mode and every App D WN at 3 kHz (WN1/3/6/7 at 6, 12, 24 and 48 kHz),
//    three bursts in a row to one receiver with its default configuration, one under
//    each tail-biting phase, both scrambler readings among them (App D: both preamble
//    PN alignments too): every byte, and the readings named in each burst's report;
//  - K = 9 under each phase;
//  - the recording of another App D implementation (pdn-soundmodem, WN2/3kHz/S, from
//    HFSTACK_VECTORS_DIR/m110d; skipped when absent): its AX.25 frame out of our
//    receiver with nothing told but the mirrored K = 7 code, which is never tried
//    unasked.
#include "chan/watterson_channel.h"
#include "phy/m110c_receiver.h"
#include "phy/m110c_transmitter.h"
#include "phy/m110d_receiver.h"
#include "phy/m110d_transmitter.h"
#include "phy/psk_modulator.h"
#include "phy/s4539_modes.h"
#include "phy/serial_tone_frontend.h"
#include "phy/waveform_modes.h"

#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace gr::hfstack;
using namespace gr::hfstack::phy;
using cf = std::complex<float>;

namespace {

// The settings word of a phase ("tail_biting=first_pair_bit_7").
std::string phase_word(tail_biting_start phase)
{
    m110d_readings r;
    r.tail_biting = phase;
    std::string text = m110d_readings_text(r);
    const size_t at = text.find("tail_biting=");
    return text.substr(at, text.find(' ', at) - at);
}

// A mode's name as a gtest parameter name ("WN8/3kHz/S" -> "WN8_3kHz_S").
std::string param_name(const testing::TestParamInfo<std::string>& info)
{
    std::string name = info.param;
    std::replace(name.begin(), name.end(), '/', '_');
    return name;
}

// ---- App C ---------------------------------------------------------------------------

std::vector<std::string> app_c_modes()
{
    std::vector<std::string> names;
    for (const std::string& name : waveform_mode_names()) {
        const auto m = waveform_mode_by_name(name);
        if (m && m->s4539 && m->s4539->high)
            names.push_back(name);
    }
    return names;
}

class AppCPhases : public testing::TestWithParam<std::string>
{
};

// One receiver, default settings: three bursts, one per phase, both scrambler readings
// among them (12800U, uncoded, has neither a phase nor a block to judge a scrambler by:
// sent with the default one), each whole and named.
TEST_P(AppCPhases, EveryPhaseAndScramblerFoundBurstByBurst)
{
    const m110c_mode mode = *waveform_mode_by_name(GetParam())->s4539->high;
    const x9_orientation scramblers[] = { x9_orientation::b,
                                          x9_orientation::a,
                                          x9_orientation::b };
    std::vector<float> audio;
    std::vector<std::vector<uint8_t>> sent;
    for (size_t i = 0; i < std::size(tail_biting_starts); ++i) {
        m110c_readings readings;
        readings.tail_biting = tail_biting_starts[i];
        if (mode.coded)
            readings.scrambler = scramblers[i];
        sent.push_back(random_bytes(30, uint32_t(40 + i)));
        const std::vector<float> one = padded_audio(
            m110c_transmit_points(
                mode, sent.back().data(), sent.back().size(), false, readings),
            9600);
        audio.insert(audio.end(), one.begin(), one.end());
    }
    const std::vector<m110c_burst> bursts =
        receive_serial_tone_audio<m110c_receiver, m110c_burst>(
            through_channel(audio, 9600, 40, 10, 3), 9600, m110c_receiver_config{});
    ASSERT_EQ(bursts.size(), sent.size()) << mode.name();
    for (size_t i = 0; i < sent.size(); ++i) {
        SCOPED_TRACE(mode.name() + " " + phase_word(tail_biting_starts[i]));
        EXPECT_TRUE(bursts[i].eom);
        EXPECT_FALSE(bursts[i].bytes_bad);
        EXPECT_EQ(bursts[i].bytes, sent[i]);
        // 12800U is not coded: no phase to tell.
        const std::string scrambler = scramblers[i] == x9_orientation::a ? "a" : "b";
        EXPECT_EQ(bursts[i].readings,
                  mode.coded
                      ? "scrambler=" + scrambler + " " + phase_word(tail_biting_starts[i])
                      : "scrambler=a");
    }
}

INSTANTIATE_TEST_SUITE_P(EveryMode,
                         AppCPhases,
                         testing::ValuesIn(app_c_modes()),
                         param_name);

// Told a phase, the receiver keeps to it: a burst sent under another is not whole.
TEST(AppCPhasesTold, AForcedPhaseIsNotSearched)
{
    const m110c_mode mode = *m110c_mode_for(4800, m110c_interleaver::short_);
    const std::vector<uint8_t> data = random_bytes(30, 50);
    m110c_readings sent;
    sent.tail_biting = tail_biting_start::from_full_register;
    const std::vector<float> audio = padded_audio(
        m110c_transmit_points(mode, data.data(), data.size(), false, sent), 9600);
    m110c_receiver_config told;
    told.find_tail_biting = false;
    const auto wrong =
        receive_serial_tone_audio<m110c_receiver, m110c_burst>(audio, 9600, told);
    EXPECT_FALSE(wrong.size() == 1 && wrong[0].eom && wrong[0].bytes == data);
    told.readings.tail_biting = tail_biting_start::from_full_register;
    const auto right =
        receive_serial_tone_audio<m110c_receiver, m110c_burst>(audio, 9600, told);
    ASSERT_EQ(right.size(), 1u);
    EXPECT_EQ(right[0].bytes, data);
}

// ---- App D ---------------------------------------------------------------------------

std::vector<std::string> app_d_modes()
{
    std::vector<std::string> names;
    for (unsigned wn = 0; wn <= m110d_max_wn; ++wn)
        names.push_back(m110d_mode_for(3,
                                       wn,
                                       wn == 0 ? m110d_interleaver::short_
                                               : m110d_interleaver::ultra_short)
                            ->name());
    for (unsigned bw : { 6u, 12u, 24u, 48u })
        for (unsigned wn : { 1u, 3u, 6u, 7u })
            names.push_back(
                m110d_mode_for(bw, wn, m110d_interleaver::ultra_short)->name());
    return names;
}

// A transmission's complex baseband at the mode's modem rate with 0.3 s of silence
// before and after, through a carrier offset and AWGN at 40 dB over its mean power in
// the mode's bandwidth (digital silence would make the search's noise estimate 0).
std::vector<cf> baseband(const m110d_mode& mode,
                         const std::vector<uint8_t>& data,
                         const m110d_transmit_options& options,
                         double offset_hz,
                         uint64_t seed)
{
    return m110d_on_the_air(mode, data, 0, 40, offset_hz, seed, options, {}, {}, 0, 0.3);
}

std::vector<m110d_burst> received(const std::vector<cf>& samples,
                                  const m110d_mode& mode,
                                  m110d_receiver_config config = {})
{
    return m110d_bursts_received(samples, mode, 0, config);
}

class AppDReadings : public testing::TestWithParam<std::string>
{
};

// One receiver, default settings: three bursts, each phase once, both PN alignments and
// both scrambler readings among them; each whole, its readings reported.
TEST_P(AppDReadings, EveryPhaseAlignmentAndScramblerFoundBurstByBurst)
{
    const m110d_mode mode = *m110d_mode_by_name(GetParam());
    struct sent_under {
        tail_biting_start phase;
        m110d_pn_alignment alignment;
        x9_orientation scrambler;
    };
    const sent_under under[] = {
        { tail_biting_start::first_pair_bit_7,
          m110d_pn_alignment::per_symbol,
          x9_orientation::b },
        { tail_biting_start::from_full_register,
          m110d_pn_alignment::continuous,
          x9_orientation::a },
        { tail_biting_start::from_block_start,
          m110d_pn_alignment::continuous,
          x9_orientation::b },
    };
    std::vector<cf> samples;
    std::vector<std::vector<uint8_t>> sent;
    std::vector<std::string> readings;
    for (size_t i = 0; i < std::size(under); ++i) {
        m110d_transmit_options options;
        options.readings.tail_biting = under[i].phase;
        options.readings.pn_alignment = under[i].alignment;
        options.readings.scrambler = under[i].scrambler;
        sent.push_back(random_bytes(
            std::min<size_t>(40, mode.input_bits_per_block / 8 - 4), uint32_t(60 + i)));
        const std::vector<cf> one = baseband(mode, sent.back(), options, 15, 80 + i);
        samples.insert(samples.end(), one.begin(), one.end());
        // At 24 and 48 kHz (Walsh symbols of 256 and 512 chips) the two PN alignments
        // make the same preamble: the configured one is reported.
        if (mode.bw_khz == 24 || mode.bw_khz == 48)
            options.readings.pn_alignment = m110d_pn_alignment::per_symbol;
        std::string words = m110d_readings_text(options.readings);
        words = words.substr(0, words.find(" preamble_walsh="));
        if (mode.wn == 0) // WN0's Trinomial scrambler has no reading
            words = words.substr(words.find(' ') + 1);
        readings.push_back(words);
    }
    const std::vector<m110d_burst> bursts = received(samples, mode);
    ASSERT_EQ(bursts.size(), sent.size()) << mode.name();
    for (size_t i = 0; i < sent.size(); ++i) {
        SCOPED_TRACE(mode.name() + " " + readings[i]);
        EXPECT_EQ(bursts[i].mode, mode.name());
        EXPECT_TRUE(bursts[i].eom);
        EXPECT_FALSE(bursts[i].bytes_bad);
        EXPECT_EQ(bursts[i].bytes, sent[i]);
        EXPECT_EQ(bursts[i].readings, readings[i]);
    }
}

INSTANTIATE_TEST_SUITE_P(ModesAndBandwidths,
                         AppDReadings,
                         testing::ValuesIn(app_d_modes()),
                         param_name);

// K = 9 under each phase (K - 1 = 8: full_register and block_start then differ by a
// whole byte, so the data fill their block, as a burst must for the two to be told
// apart by its EOM).
TEST(AppDReadingsK9, EveryPhaseFound)
{
    const m110d_mode mode = *m110d_mode_by_name("WN6/3kHz/US");
    std::vector<cf> samples;
    std::vector<std::vector<uint8_t>> sent;
    for (size_t i = 0; i < std::size(tail_biting_starts); ++i) {
        m110d_transmit_options options;
        options.constraint_length = 9;
        options.readings.tail_biting = tail_biting_starts[i];
        sent.push_back(random_bytes(mode.input_bits_per_block / 8 - 4, uint32_t(70 + i)));
        const std::vector<cf> one = baseband(mode, sent.back(), options, -12, 90 + i);
        samples.insert(samples.end(), one.begin(), one.end());
    }
    const std::vector<m110d_burst> bursts = received(samples, mode);
    ASSERT_EQ(bursts.size(), sent.size());
    for (size_t i = 0; i < sent.size(); ++i) {
        SCOPED_TRACE(phase_word(tail_biting_starts[i]));
        EXPECT_EQ(bursts[i].bytes, sent[i]);
        EXPECT_NE(bursts[i].readings.find(phase_word(tail_biting_starts[i])),
                  std::string::npos);
    }
}

// ---- pdn-soundmodem's recording
// --------------------------------------------------------

std::string pdn_recording_path()
{
    return std::string(HFSTACK_VECTORS_DIR) + "/m110d/pdn-wn2-3kHz-S-ax25-ui.wav";
}

// The samples of a 16-bit PCM WAV file (its "data" chunk) as floats; false when the
// file is missing or not such a file.
bool read_wav(const std::string& path, std::vector<float>& out, unsigned& rate)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return false;
    const std::vector<char> raw((std::istreambuf_iterator<char>(f)),
                                std::istreambuf_iterator<char>());
    const auto u32 = [&](size_t at) {
        return uint32_t(uint8_t(raw[at])) | uint32_t(uint8_t(raw[at + 1])) << 8 |
               uint32_t(uint8_t(raw[at + 2])) << 16 |
               uint32_t(uint8_t(raw[at + 3])) << 24;
    };
    if (raw.size() < 12 || std::memcmp(raw.data(), "RIFF", 4) != 0 ||
        std::memcmp(raw.data() + 8, "WAVE", 4) != 0)
        return false;
    for (size_t at = 12; at + 8 <= raw.size();) {
        const uint32_t size = u32(at + 4);
        if (std::memcmp(raw.data() + at, "fmt ", 4) == 0)
            rate = u32(at + 12);
        if (std::memcmp(raw.data() + at, "data", 4) == 0) {
            const size_t n = std::min<size_t>(size, raw.size() - at - 8) / 2;
            out.resize(n);
            for (size_t k = 0; k < n; ++k)
                out[k] = float(int16_t(uint16_t(uint8_t(raw[at + 8 + 2 * k])) |
                                       uint16_t(uint8_t(raw[at + 9 + 2 * k])) << 8)) /
                         32768.0f;
            return true;
        }
        at += 8 + size + (size & 1);
    }
    return false;
}

std::vector<m110d_burst> receive_pdn(const m110d_receiver_config& config)
{
    std::vector<float> audio;
    unsigned rate = 0;
    if (!read_wav(pdn_recording_path(), audio, rate))
        return {};
    EXPECT_EQ(rate, 9600u);
    return receive_serial_tone_audio<m110d_receiver, m110d_burst>(audio, rate, config);
}

#define SKIP_WITHOUT_PDN_RECORDING()                                   \
    do {                                                               \
        std::vector<float> a;                                          \
        unsigned r = 0;                                                \
        if (!read_wav(pdn_recording_path(), a, r))                     \
            GTEST_SKIP() << "no recording at " << pdn_recording_path() \
                         << " (pdn-soundmodem's App D recording of "   \
                            "shared/vectors/m110d; configure with "    \
                            "-DHFSTACK_VECTORS_DIR=DIR)";              \
    } while (0)

// IL2P (the FEC framing pdn-soundmodem puts its AX.25 frames in) descrambles each block
// after its Reed-Solomon parity: bits MSB first through a 9-bit register from 0x1F0,
// each bit XORed with the register's bit 0, then shifted in at bit 8 and XORed into
// bit 3 (IL2P specification v0.6, as Dire Wolf implements it).
std::vector<uint8_t> il2p_descrambled(const uint8_t* in, size_t n)
{
    unsigned reg = 0x1F0;
    std::vector<uint8_t> out(n, 0);
    for (size_t i = 0; i < n; ++i)
        for (int b = 7; b >= 0; --b) {
            const unsigned bit = (in[i] >> b) & 1u;
            out[i] |= uint8_t(((bit ^ reg) & 1u) << b);
            reg = ((reg >> 1) | (bit << 8)) ^ (bit << 3);
        }
    return out;
}

// An IL2P type 1 header's callsign: six SIXBIT characters (ASCII - 0x20) in the low six
// bits of its bytes, trailing spaces dropped.
std::string il2p_callsign(const std::vector<uint8_t>& header, size_t first)
{
    std::string call;
    for (size_t i = first; i < first + 6; ++i)
        call += char((header[i] & 0x3F) + 0x20);
    return call.substr(0, call.find_last_not_of(' ') + 1);
}

} // namespace

// Its burst found with the defaults (its continuous PN alignment, scrambler b and phase
// found), decoded with the one reading told: the mirrored K = 7 code.
TEST(PdnRecording, TheFrameOutOfOurReceiverWithTheMirroredCodeTold)
{
    SKIP_WITHOUT_PDN_RECORDING();
    m110d_receiver_config config;
    config.k7_newest_bit_lsb = true;
    config.msb_first = true; // its bytes go out MSB first (vectors README)
    const std::vector<m110d_burst> bursts = receive_pdn(config);
    ASSERT_EQ(bursts.size(), 1u);
    EXPECT_EQ(bursts[0].mode, "WN2/3kHz/S");
    EXPECT_TRUE(bursts[0].eom);
    EXPECT_FALSE(bursts[0].bytes_bad);
    EXPECT_EQ(bursts[0].readings,
              "scrambler=b tail_biting=full_register pn_alignment=continuous "
              "wid_parity=checksum");
    // IL2P: sync word F15E48, a 13-byte header and 2 parity bytes, the info field in one
    // payload block (55 bytes and 16 parity), the CRC (4 bytes).
    const std::vector<uint8_t>& b = bursts[0].bytes;
    const std::string info = "pdn-soundmodem MIL-STD-188-110D App D WN2 demo de M0LTE";
    ASSERT_EQ(b.size(), 3 + 15 + info.size() + 16 + 4);
    EXPECT_EQ(b[0], 0xF1);
    EXPECT_EQ(b[1], 0x5E);
    EXPECT_EQ(b[2], 0x48);
    const std::vector<uint8_t> header = il2p_descrambled(&b[3], 13);
    EXPECT_EQ(il2p_callsign(header, 6) + ">" + il2p_callsign(header, 0), "M0LTE>PDNODE");
    const std::vector<uint8_t> payload = il2p_descrambled(&b[18], info.size());
    EXPECT_EQ(std::string(payload.begin(), payload.end()), info);
}

// Not told, the receiver does not try the mirrored code: the burst is found, its bytes
// are not the frame (nor its IL2P sync word, either bit order).
TEST(PdnRecording, TheMirroredCodeIsNeverTriedUnasked)
{
    SKIP_WITHOUT_PDN_RECORDING();
    const std::vector<m110d_burst> bursts = receive_pdn(m110d_receiver_config{});
    ASSERT_GE(bursts.size(), 1u);
    EXPECT_EQ(bursts[0].mode, "WN2/3kHz/S");
    const std::vector<uint8_t>& b = bursts[0].bytes;
    EXPECT_FALSE(b.size() > 3 && b[0] == 0xF1 && b[1] == 0x5E && b[2] == 0x48);
    EXPECT_FALSE(b.size() > 3 && b[0] == 0x8F && b[1] == 0x7A && b[2] == 0x12);
}
