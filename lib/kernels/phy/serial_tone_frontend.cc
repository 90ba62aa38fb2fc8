/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "serial_tone_frontend.h"

#include <liquid/liquid.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#if defined(__x86_64__) && defined(__GNUC__)
#define HFSTACK_LOWPASS_AVX 1
#endif

namespace gr {
namespace hfstack {
namespace phy {

namespace {

constexpr double two_pi = 6.283185307179586476925286766559;
constexpr unsigned lowpass_taps = 65;
// 1900 Hz at 2400 Bd: half the RRC-0.35 signal band plus the offsets followed.
constexpr double lowpass_cutoff_symbols = 1900.0 / 2400.0;
constexpr double block_s = 0.01; // fixed processing block (see the header)

[[noreturn]] void bad(const char* parameter, const std::string& what, double value)
{
    std::ostringstream os;
    os << "serial_tone_frontend: " << parameter << " " << what << ", got " << value;
    throw std::invalid_argument(os.str());
}

} // namespace

struct serial_tone_frontend::liquid_objects {
    msresamp_crcf resampler = nullptr;
    ~liquid_objects()
    {
        if (resampler)
            msresamp_crcf_destroy(resampler);
    }
};

serial_tone_frontend::serial_tone_frontend(const serial_tone_frontend_config& config)
    : d_cfg(config), d_liquid(new liquid_objects)
{
    if (!(d_cfg.sample_rate >= 4000 && d_cfg.sample_rate <= 1e6))
        bad("sample_rate", "must be in [4000, 1e6] Hz", d_cfg.sample_rate);
    if (d_cfg.real_input &&
        !(d_cfg.carrier_hz > 0 && d_cfg.carrier_hz < d_cfg.sample_rate / 2))
        bad("carrier_hz", "must be in (0, sample_rate / 2)", d_cfg.carrier_hz);
    if (!(d_cfg.symbol_rate >= 1000 && d_cfg.symbol_rate <= 100000))
        bad("symbol_rate", "must be in [1000, 100000] Bd", d_cfg.symbol_rate);
    // The band the serial-tone modems' RRC-0.35 pulse occupies, in symbol rates: a
    // rate under it folds the pulse's edges onto the signal.
    constexpr double occupied_symbols = 1.35;
    if (!d_cfg.real_input && d_cfg.sample_rate < occupied_symbols * d_cfg.symbol_rate) {
        std::ostringstream os;
        os << "serial_tone_frontend: complex sample_rate " << d_cfg.sample_rate
           << " Hz cannot hold a " << d_cfg.symbol_rate
           << " Bd signal (at least its RRC-0.35 band, "
           << occupied_symbols * d_cfg.symbol_rate << " Hz)";
        throw std::invalid_argument(os.str());
    }
    // Real samples: the band must also stay above 0 Hz, or its lower edge folds onto
    // itself (App D's sub-carrier, 300 Hz + BW / 2, leaves room for 1.25 symbol rates:
    // RRC 0.35 fits up to 6 kHz).
    if (d_cfg.real_input &&
        d_cfg.carrier_hz < 0.5 * occupied_symbols * d_cfg.symbol_rate) {
        std::ostringstream os;
        os << "serial_tone_frontend: a " << d_cfg.symbol_rate << " Bd signal on "
           << d_cfg.carrier_hz << " Hz reaches below 0 Hz (its RRC-0.35 band is "
           << occupied_symbols * d_cfg.symbol_rate
           << " Hz wide): real samples cannot carry it, complex ones can";
        throw std::invalid_argument(os.str());
    }
    const double real_least = 2 * d_cfg.carrier_hz + occupied_symbols * d_cfg.symbol_rate;
    if (d_cfg.real_input && d_cfg.sample_rate < real_least) {
        std::ostringstream os;
        os << "serial_tone_frontend: real sample_rate " << d_cfg.sample_rate
           << " Hz cannot hold a " << d_cfg.symbol_rate << " Bd signal on "
           << d_cfg.carrier_hz << " Hz (at least " << real_least << " Hz)";
        throw std::invalid_argument(os.str());
    }
    if (d_cfg.sample_rate != output_rate())
        d_liquid->resampler =
            msresamp_crcf_create(float(output_rate() / d_cfg.sample_rate), 70.0f);
    d_block = std::max<size_t>(1, size_t(std::lround(d_cfg.sample_rate * block_s)));
    // As a float the 3 kHz receiver's cut-off is 1900.0f / 9600 exactly as before.
    const float cutoff_hz = float(lowpass_cutoff_symbols * d_cfg.symbol_rate);
    // liquid's Kaiser design (as its firfilt_crcf_create_kaiser makes it), filtered here
    // (serial_tone_lowpass): the oldest sample's tap first, as firfilt takes them.
    d_taps_oldest_first.resize(lowpass_taps);
    liquid_firdes_kaiser(lowpass_taps,
                         float(cutoff_hz / output_rate()),
                         70.0f,
                         0.0f,
                         d_taps_oldest_first.data());
    std::reverse(d_taps_oldest_first.begin(), d_taps_oldest_first.end());
    d_history.assign(2 * (lowpass_taps - 1), 0.0f);
}

serial_tone_frontend::~serial_tone_frontend() = default;

double serial_tone_frontend::delay_samples() const
{
    // Not counting the wait for a whole block (up to 10 ms).
    double delay = (lowpass_taps - 1) / 2.0;
    if (d_liquid->resampler)
        delay += msresamp_crcf_get_delay(d_liquid->resampler);
    return delay;
}

void serial_tone_frontend::process(const float* in,
                                   size_t n,
                                   std::vector<std::complex<float>>& out)
{
    if (!d_cfg.real_input)
        throw std::logic_error(
            "serial_tone_frontend: complex input configured; pass complex samples");
    d_real_in.insert(d_real_in.end(), in, in + n);
    while (d_real_in.size() >= d_block)
        run_block(out);
}

void serial_tone_frontend::process(const std::complex<float>* in,
                                   size_t n,
                                   std::vector<std::complex<float>>& out)
{
    if (d_cfg.real_input)
        throw std::logic_error(
            "serial_tone_frontend: real input configured; pass real samples");
    d_complex_in.insert(d_complex_in.end(), in, in + n);
    while (d_complex_in.size() >= d_block)
        run_block(out);
}

void serial_tone_frontend::run_block(std::vector<std::complex<float>>& out)
{
    if (d_cfg.real_input) {
        d_mixed.resize(d_block);
        const double step = d_cfg.carrier_hz / d_cfg.sample_rate;
        const std::complex<double> rotation = std::polar(1.0, -two_pi * step);
        // The phase re-anchored from the exact value at each block start.
        std::complex<double> phasor = std::polar(1.0, -two_pi * d_carrier_cycles);
        for (size_t k = 0; k < d_block; ++k) {
            // sqrt(2) undoes the transmitter's real-part scaling: unit baseband power.
            const std::complex<double> z = double(d_real_in[k]) * std::sqrt(2.0) * phasor;
            d_mixed[k] = std::complex<float>(float(z.real()), float(z.imag()));
            phasor *= rotation;
        }
        d_carrier_cycles = std::fmod(d_carrier_cycles + step * double(d_block), 1.0);
        d_real_in.erase(d_real_in.begin(), d_real_in.begin() + long(d_block));
    } else {
        d_mixed.assign(d_complex_in.begin(), d_complex_in.begin() + long(d_block));
        d_complex_in.erase(d_complex_in.begin(), d_complex_in.begin() + long(d_block));
    }
    finish(d_mixed, out);
}

void serial_tone_frontend::finish(std::vector<std::complex<float>>& mixed,
                                  std::vector<std::complex<float>>& out)
{
    std::vector<std::complex<float>>* src = &mixed;
    if (d_liquid->resampler) {
        d_resampled.resize(size_t(std::ceil(1 + 2 * output_rate() / d_cfg.sample_rate *
                                                    double(mixed.size()))) +
                           8);
        unsigned produced = 0;
        msresamp_crcf_execute(d_liquid->resampler,
                              mixed.data(),
                              unsigned(mixed.size()),
                              d_resampled.data(),
                              &produced);
        d_resampled.resize(produced);
        src = &d_resampled;
    }
    const size_t first = out.size();
    out.resize(first + src->size());
    if (src->empty())
        return;
    // The last taps - 1 samples before the block, then the block, as floats.
    const size_t keep = d_history.size(), m = src->size();
    d_history.resize(keep + 2 * m);
    const float* block = reinterpret_cast<const float*>(src->data());
    std::copy(block, block + 2 * m, d_history.begin() + long(keep));
    serial_tone_lowpass(d_taps_oldest_first.data(),
                        d_taps_oldest_first.size(),
                        d_history.data(),
                        m,
                        reinterpret_cast<float*>(&out[first]));
    d_history.erase(d_history.begin(), d_history.begin() + long(2 * m));
}

namespace {

// One output's sum, as liquid's portable dot product takes it.
void lowpass_one(const float* taps, size_t count, const float* x, float* out)
{
    float re = 0, im = 0;
    for (size_t i = 0; i < count; ++i) {
        re += taps[i] * x[2 * i];
        im += taps[i] * x[2 * i + 1];
    }
    out[0] = re;
    out[1] = im;
}

// Four vectors of V's lanes from output k on (2 x lanes outputs), each lane one
// output's real or imaginary sum; the outputs done returned. Inlined into each
// instruction set's caller, which gives V its instructions.
template <typename V>
__attribute__((always_inline)) inline size_t lowpass_vectors(
    const float* taps, size_t count, const float* x, size_t outputs, float* out, size_t k)
{
    constexpr size_t lanes = sizeof(V) / sizeof(float);
    for (; k + 2 * lanes <= outputs; k += 2 * lanes) {
        V sum[4] = {};
        const float* at = x + 2 * k;
        for (size_t i = 0; i < count; ++i, at += 2) {
            V h;
            for (size_t l = 0; l < lanes; ++l)
                h[l] = taps[i];
            for (size_t v = 0; v < 4; ++v) {
                V y;
                std::memcpy(&y, at + v * lanes, sizeof y);
                sum[v] += h * y;
            }
        }
        for (size_t v = 0; v < 4; ++v)
            std::memcpy(out + 2 * k + v * lanes, &sum[v], sizeof(V));
    }
    return k;
}

typedef float four_floats __attribute__((vector_size(16)));
typedef float eight_floats __attribute__((vector_size(32)));

#if defined(HFSTACK_LOWPASS_AVX)
bool avx_available() { return __builtin_cpu_supports("avx"); }
const bool lowpass_avx = avx_available();

__attribute__((target("avx"))) size_t
lowpass_avx16(const float* taps, size_t count, const float* x, size_t outputs, float* out)
{
    return lowpass_vectors<eight_floats>(taps, count, x, outputs, out, 0);
}
#endif

} // namespace

void serial_tone_lowpass(
    const float* taps, size_t count, const float* samples, size_t outputs, float* out)
{
    // Output k sums taps[i] x[k + i] for i = 0, 1, ... in turn from 0, each product
    // rounded before it is added (no fused multiply-add), as liquid's portable dot
    // product does: the same floats as liquid's firfilt. Several outputs at a time, a
    // vector lane each, so no sum is reordered. (Not VOLK's dot product: it would change
    // every output at the last bit, and Debian's VOLK 2.5 picks a u_avx2_fma kernel for
    // volk_32fc_32f_dot_prod_32fc that loads as aligned and crashes on this buffer,
    // fixed in later VOLK: gnuradio/volk pull request 661.)
    size_t k = 0;
#if defined(HFSTACK_LOWPASS_AVX)
    if (lowpass_avx)
        k = lowpass_avx16(taps, count, samples, outputs, out);
#endif
#if defined(__SSE2__)
    k = lowpass_vectors<four_floats>(taps, count, samples, outputs, out, k);
#endif
    for (; k < outputs; ++k)
        lowpass_one(taps, count, samples + 2 * k, out + 2 * k);
}

} // namespace phy
} // namespace hfstack
} // namespace gr
