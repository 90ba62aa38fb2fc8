// The STANAG 5069 (MIL-STD-188-110D App D) transmitter at 3 kHz: its length against the
// air-time model m110d_timing, its layout (preamble, probes with the boundary rule, EOT),
// and a noise-free loopback through hard decisions and the block decoder that gives
// back the bytes and the EOM for every WN, interleaver, code and reading.
#include "phy/m110d_timing.h"
#include "phy/m110d_transmitter.h"
#include "phy/m110d_decoder.h"
#include "phy/m110d_waveform.h"
#include "phy/psk_modulator.h"

#include "modem_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace gr::hfstack::phy;

namespace {

using cf = std::complex<float>;

std::vector<m110d_mode> modes_3khz() { return m110d_modes_at(3); }

size_t symbols_of(const m110d_mode& m, size_t bytes, const m110d_transmit_options& o)
{
    return size_t(std::lround(m110d_transmission_time(m, bytes, o.timing).total_s * m.symbol_rate()));
}

size_t preamble_symbols(const m110d_mode& m, const m110d_transmit_options& o)
{
    const unsigned walsh = o.timing.preamble.tlc_blocks +
                           (o.timing.preamble.superframes == 1 ? 10 : 18 * o.timing.preamble.superframes);
    return walsh * m110d_preamble_walsh_chips(m, o.timing.preamble);
}

// Hard decisions on a transmission's data, back to channel bits (+1 / -1 LLRs).
std::vector<float> hard_channel_llrs(const m110d_mode& m, const std::vector<cf>& points,
                                     const m110d_transmit_options& o)
{
    std::vector<float> llr;
    const auto push_bits = [&llr](unsigned v, unsigned n) {
        for (unsigned b = 0; b < n; ++b)
            llr.push_back(((v >> (n - 1 - b)) & 1u) ? -1.0f : 1.0f);
    };
    const auto psk8_number = [](cf z) {
        return unsigned(std::lround(std::arg(z) / (M_PI / 4)) + 8) % 8;
    };
    size_t k = preamble_symbols(m, o);
    if (m.wn == 0) {
        const auto& t = m110d_trinomial_sequence();
        const size_t per_block = m.frames_per_block;
        for (size_t w = 0; k + 32 <= points.size(); ++w, k += 32) {
            unsigned best = 0, best_match = 0;
            for (unsigned dibit = 0; dibit < 4; ++dibit) {
                unsigned match = 0;
                for (unsigned j = 0; j < 32; ++j)
                    match += psk8_number(points[k + j]) ==
                             (m110d_wn0_walsh_chip(dibit, j) + t[((w % per_block) * 32 + j) % 2048]) % 8;
                if (match > best_match) {
                    best_match = match;
                    best = dibit;
                }
            }
            push_bits(best, 2);
        }
        return llr;
    }
    const unsigned nb = m110d_bits_per_symbol(m.wn);
    const auto scrambler = m110d_data_scrambler(m, o.readings.scrambler);
    const auto& table = m110d_constellation(nb);
    k += m.probe_symbols;
    for (; k + m.data_symbols + m.probe_symbols <= points.size(); k += m.data_symbols + m.probe_symbols)
        for (unsigned i = 0; i < m.data_symbols; ++i) {
            const cf z = points[k + i];
            unsigned symbol = 0;
            if (nb <= 3) {
                symbol = (psk8_number(z) + 8 - scrambler[i]) % 8;
            } else {
                float nearest = 1e9f;
                for (unsigned p = 0; p < table.size(); ++p)
                    if (std::abs(z - table[p]) < nearest) {
                        nearest = std::abs(z - table[p]);
                        symbol = p ^ scrambler[i];
                    }
            }
            unsigned v = 0;
            while (m110d_map_bits(v, nb) != symbol)
                ++v;
            push_bits(v, nb);
        }
    return llr;
}

std::vector<uint8_t> decode_all(const m110d_mode& m, const std::vector<float>& llr, const m110d_transmit_options& o)
{
    m110d_block_decoder decoder(m, o.constraint_length, o.readings.tail_biting);
    std::vector<uint8_t> bits;
    for (size_t at = 0; at + decoder.channel_bits() <= llr.size(); at += decoder.channel_bits())
        decoder.decode(llr.data() + at, bits);
    return bits;
}

// The user bits a transmission of `data` must carry: bytes LSB first, EOM, zeros.
void expect_message(const std::vector<uint8_t>& bits, const std::vector<uint8_t>& data, const std::string& what)
{
    ASSERT_GE(bits.size(), 8 * data.size() + 32) << what;
    std::vector<uint8_t> bytes(data.size());
    for (size_t i = 0; i < data.size(); ++i)
        for (unsigned b = 0; b < 8; ++b)
            bytes[i] |= uint8_t(bits[8 * i + b] << b);
    EXPECT_EQ(bytes, data) << what;
    uint32_t eom = 0;
    for (unsigned b = 0; b < 32; ++b)
        eom = eom << 1 | bits[8 * data.size() + b];
    EXPECT_EQ(eom, m110d_eom) << what;
    for (size_t i = 8 * data.size() + 32; i < bits.size(); ++i)
        ASSERT_EQ(bits[i], 0) << what << " fill bit " << i;
}

} // namespace

TEST(m110d_transmitter, symbol_count_matches_the_air_time_model)
{
    std::vector<m110d_transmit_options> variants(3);
    variants[1].timing.preamble.tlc_blocks = 3;
    variants[1].timing.preamble.superframes = 4;
    variants[1].constraint_length = 9;
    variants[2].timing.preamble.superframes = 20;
    variants[2].timing.eot_extension = true;
    for (const m110d_mode& m : modes_3khz())
        for (const auto& o : variants)
            for (size_t bytes : { size_t(0), size_t(1), size_t(m.input_bits_per_block / 8), size_t(700) }) {
                const std::vector<uint8_t> data = random_bytes(bytes, unsigned(bytes) + m.wn);
                const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
                ASSERT_EQ(points.size(), symbols_of(m, bytes, o)) << m.name() << " " << bytes << " bytes";
            }
}

TEST(m110d_transmitter, lays_out_preamble_probes_and_eot)
{
    const std::vector<uint8_t> data = random_bytes(400, 9);
    for (const m110d_mode& m : modes_3khz()) {
        if (m.wn == 0)
            continue;
        m110d_transmit_options o;
        o.timing.preamble.superframes = 2;
        o.timing.eot_extension = true;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        const std::vector<uint8_t> preamble = m110d_preamble(m, o.timing.preamble, 7);
        const auto& psk8 = m110d_constellation(3);
        for (size_t k = 0; k < preamble.size(); ++k)
            ASSERT_LT(std::abs(points[k] - psk8[preamble[k]]), 1e-6f) << m.name() << " preamble " << k;
        const unsigned K = m.probe_symbols, frame = m.data_symbols + K;
        const size_t extension = m110d_eot_extension_symbols(m);
        const size_t frames = (points.size() - preamble.size() - K - extension) / frame;
        ASSERT_EQ(preamble.size() + K + frames * frame + extension, points.size()) << m.name();
        ASSERT_EQ(frames % m.frames_per_block, 0u) << m.name();
        for (int64_t f = -1; f < int64_t(frames); ++f) {
            const size_t at = preamble.size() + size_t(f + 1) * frame;
            const bool last = f + 1 == int64_t(frames);
            const unsigned length = K + (last ? unsigned(extension) : 0);
            const auto want = m110d_mini_probe(K, m110d_probe_is_boundary(m, f), length);
            for (unsigned i = 0; i < length; ++i)
                ASSERT_LT(std::abs(points[at + i] - want[i]), 1e-6f) << m.name() << " probe after frame " << f;
        }
        // Every symbol's amplitude is at most the probes' (QAM as printed).
        for (const cf& p : points)
            ASSERT_LE(std::abs(p), 1.0001f) << m.name();
    }
}

TEST(m110d_transmitter, every_3khz_mode_loops_back_through_hard_decisions)
{
    const std::vector<uint8_t> data = random_bytes(333, 21);
    for (const m110d_mode& m : modes_3khz())
        for (unsigned k : { 7u, 9u }) {
            m110d_transmit_options o;
            o.constraint_length = k;
            if (k == 9) { // the alternative readings ride along with K = 9
                o.readings.scrambler = x9_orientation::b;
                o.readings.tail_biting = tail_biting_start::from_block_start;
                o.readings.pn_alignment = m110d_pn_alignment::continuous;
            }
            const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
            const std::vector<float> llr = hard_channel_llrs(m, points, o);
            EXPECT_EQ(llr, [&] {
                std::vector<float> want;
                for (uint8_t b : m110d_channel_bits(m, data.data(), data.size(), o))
                    want.push_back(b ? -1.0f : 1.0f);
                return want;
            }()) << m.name() << " K" << k;
            expect_message(decode_all(m, llr, o), data, m.name() + " K" + std::to_string(k));
        }
}

TEST(m110d_transmitter, readings_change_what_they_name)
{
    const m110d_mode m = *m110d_mode_by_name("WN7/3kHz/S");
    const std::vector<uint8_t> data = random_bytes(100, 2);
    const auto base = m110d_transmit_points(m, data.data(), data.size());
    const size_t preamble = 10 * 32;
    m110d_transmit_options o;
    o.readings.scrambler = x9_orientation::b;
    auto other = m110d_transmit_points(m, data.data(), data.size(), o);
    EXPECT_TRUE(std::equal(base.begin(), base.begin() + preamble + 32, other.begin())); // preamble, first probe
    EXPECT_NE(base, other);
    o = {};
    o.msb_first = true;
    EXPECT_NE(m110d_channel_bits(m, data.data(), data.size(), o), m110d_channel_bits(m, data.data(), data.size()));
    // K = 9 is announced in the WID (d3) and changes the coded bits.
    o = {};
    o.constraint_length = 9;
    other = m110d_transmit_points(m, data.data(), data.size(), o);
    EXPECT_FALSE(std::equal(base.begin(), base.begin() + preamble, other.begin()));
    EXPECT_NE(m110d_channel_bits(m, data.data(), data.size(), o), m110d_channel_bits(m, data.data(), data.size()));
    o.constraint_length = 8;
    EXPECT_THROW(m110d_transmit_points(m, data.data(), data.size(), o), std::invalid_argument);
}

TEST(m110d_transmitter, shapes_samples_like_the_app_c_transmitter)
{
    // 3 kHz: 2400 Bd on an 1800 Hz sub-carrier, shaped by psk_modulator at 9600 Hz.
    const m110d_mode m = *m110d_mode_by_name("WN10/3kHz/S");
    const psk_modulator_config c = m110d_modulator_config(m, 9600);
    EXPECT_EQ(c.symbol_rate, 2400);
    EXPECT_EQ(c.carrier_hz, 1800);
    const psk_modulator modulator(c);
    const std::vector<uint8_t> data = random_bytes(1000, 5);
    const auto points = m110d_transmit_points(m, data.data(), data.size());
    const auto samples = modulator.baseband(points);
    // Four samples a symbol plus the pulse's tails; the air time at 9600 Hz.
    const size_t tails = samples.size() - 4 * points.size();
    EXPECT_LE(tails, 2 * 4 * c.span_symbols + 1);
    const double seconds = m110d_transmission_time(m, data.size()).total_s;
    EXPECT_EQ(4 * points.size(), size_t(std::lround(seconds * 9600)));
    const auto audio = modulator.audio(points);
    EXPECT_EQ(audio.size(), samples.size());
    // 48 kHz: a wider bandwidth's symbol rate and sub-carrier.
    const psk_modulator_config wide = m110d_modulator_config(*m110d_mode_by_name("WN6/24kHz/S"), 96000);
    EXPECT_EQ(wide.symbol_rate, 19200);
    EXPECT_EQ(wide.carrier_hz, 12300);
}

TEST(m110d_transmitter, every_3khz_mode_decodes_through_the_soft_demapper_in_noise)
{
    // Data symbols with white noise at 3 dB above the mode's Table D-LXIV AWGN row
    // (signal: the frames' mean power), demapped (max-log LLRs, the scrambler undone)
    // and block-decoded: the bytes and the EOM come back, with K = 7 and K = 9.
    const int awgn_row_db[14] = { -6, -3, 0, 3, 5, 6, 9, 13, 16, 19, 21, 24, 30, 6 };
    const std::vector<uint8_t> data = random_bytes(400, 31);
    std::mt19937 rng(8);
    for (const m110d_mode& m : modes_3khz()) {
        if (m.wn == 0 || m.interleaver != m110d_interleaver::short_)
            continue;
        for (unsigned k : { 7u, 9u }) {
            m110d_transmit_options o;
            o.constraint_length = k;
            const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
            const double sigma2 = m110d_frame_power(m) * std::pow(10.0, -(awgn_row_db[m.wn] + 3) / 10.0);
            std::normal_distribution<double> noise(0.0, std::sqrt(sigma2 / 2));
            const m110d_demapper demapper(m, o.readings);
            const unsigned nb = demapper.bits_per_symbol();
            std::vector<float> llr;
            const size_t frame = m.data_symbols + m.probe_symbols;
            for (size_t at = preamble_symbols(m, o) + m.probe_symbols; at + frame <= points.size(); at += frame)
                for (unsigned i = 0; i < m.data_symbols; ++i) {
                    const std::complex<double> sent(points[at + i]);
                    const std::complex<double> u = sent + std::complex<double>(noise(rng), noise(rng));
                    float bits[8];
                    demapper.demap(u, i, sigma2, bits);
                    llr.insert(llr.end(), bits, bits + nb);
                }
            expect_message(decode_all(m, llr, o), data, m.name() + " K" + std::to_string(k));
        }
    }
}

TEST(m110d_transmitter, demapper_decisions_are_the_points_sent)
{
    const std::vector<uint8_t> data = random_bytes(300, 3);
    for (unsigned wn = 1; wn <= m110d_max_wn; ++wn) {
        const m110d_mode m = *m110d_mode_for(3, wn, m110d_interleaver::ultra_short);
        const auto points = m110d_transmit_points(m, data.data(), data.size());
        const std::vector<uint8_t> channel = m110d_channel_bits(m, data.data(), data.size());
        const m110d_demapper demapper(m);
        const size_t frame = m.data_symbols + m.probe_symbols;
        size_t next_bit = 0;
        for (size_t at = 10 * 32 + m.probe_symbols; at + frame <= points.size(); at += frame)
            for (unsigned i = 0; i < m.data_symbols; ++i) {
                float llr[8];
                const std::complex<double> sent(points[at + i]);
                ASSERT_LT(std::abs(demapper.demap(sent, i, 1e-2, llr) - sent), 1e-6) << m.name();
                for (unsigned b = 0; b < demapper.bits_per_symbol(); ++b, ++next_bit)
                    ASSERT_EQ(llr[b] < 0, channel[next_bit] == 1) << m.name() << " symbol " << i;
                // The label's point is the one sent.
                unsigned label = 0;
                for (unsigned b = 0; b < demapper.bits_per_symbol(); ++b)
                    label = label << 1 | channel[next_bit - demapper.bits_per_symbol() + b];
                ASSERT_LT(std::abs(demapper.point_of(label, i) - sent), 1e-6) << m.name();
                // PSK unscrambled lands on the transcoded symbol; QAM stays.
                const std::complex<double> u = demapper.unscrambled(sent, i);
                const auto& table = m110d_constellation(demapper.bits_per_symbol());
                const unsigned symbol = m110d_map_bits(label, demapper.bits_per_symbol());
                if (demapper.bits_per_symbol() <= 3)
                    ASSERT_LT(std::abs(u - std::complex<double>(table[symbol])), 1e-6) << m.name();
                else
                    ASSERT_EQ(u, sent);
            }
        EXPECT_EQ(next_bit, channel.size()) << m.name();
    }
    EXPECT_THROW(m110d_demapper(*m110d_mode_by_name("WN0/3kHz/S")), std::invalid_argument);
}

TEST(m110d_transmitter, every_bandwidth_codes_and_lasts_as_the_air_time_model_says)
{
    // The tables cover 3-48 kHz (interleaver increments of one source, S): every WN of
    // every bandwidth with its two shorter interleavers has a code rate in D-L, a
    // probe in D-XXI and the model's length; a few loop back through hard decisions.
    const std::vector<uint8_t> data = random_bytes(60, 12);
    size_t modes = 0;
    for (const std::string& name : m110d_mode_names()) {
        const m110d_mode m = *m110d_mode_by_name(name);
        if (m.interleaver != m110d_interleaver::ultra_short && m.interleaver != m110d_interleaver::short_)
            continue;
        ++modes;
        m110d_transmit_options o;
        o.timing.eot_extension = true;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        ASSERT_EQ(points.size(), symbols_of(m, data.size(), o)) << name;
    }
    EXPECT_GT(modes, 250u);
    for (const char* name : { "WN0/9kHz/S", "WN3/21kHz/US", "WN6/24kHz/S", "WN12/18kHz/US", "WN11/48kHz/US" }) {
        const m110d_mode m = *m110d_mode_by_name(name);
        const m110d_transmit_options o;
        const auto points = m110d_transmit_points(m, data.data(), data.size(), o);
        expect_message(decode_all(m, hard_channel_llrs(m, points, o), o), data, name);
    }
}
