/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* What the libFuzzer targets that read a script from their input share: a reader that
 * yields zeros once the input runs out, and a check that aborts (a finding). */
#ifndef HFSTACK_FUZZ_SUPPORT_H
#define HFSTACK_FUZZ_SUPPORT_H

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

inline void check(bool ok)
{
    if (!ok)
        std::abort();
}

// Binds a SIS client kernel as a node would (S_BIND_ACCEPTED with this MTU).
template <typename Client, typename Primitive, typename Type>
void accept_bind(Client& c, uint8_t sap, uint16_t mtu, Type accepted)
{
    c.start(0);
    Primitive p;
    p.type = accepted;
    p.sap = sap;
    p.mtu = mtu;
    c.on_sis(p, 0);
}

struct script_reader {
    const uint8_t* p;
    size_t n;
    uint8_t u8() { return n ? (--n, *p++) : 0; }
    uint16_t u16() { return uint16_t(u8() << 8 | u8()); }
    double f64()
    {
        uint8_t raw[8] = {};
        for (auto& b : raw)
            b = u8();
        double d;
        std::memcpy(&d, raw, sizeof d);
        return d;
    }
    std::vector<uint8_t> take(size_t k)
    {
        k = std::min(k, n);
        std::vector<uint8_t> b(p, p + k);
        p += k;
        n -= k;
        return b;
    }
};

// The stages after a serial-tone receiver's equaliser (its DSP), on data symbols the
// input spells out: each symbol two bytes taken in turn (the input read again from its
// start as often as a block needs), a label and a noise offset on the equaliser's scale,
// demapped at error variance sigma2 into one interleaver block's channel-bit LLRs and
// decoded, `blocks` times. A decoder mode for the receiver targets: thousands of inputs
// a second reach the demapper, the deinterleaver and the block decoder, where the
// sample-level inputs reach them a few times a second. Checks each block gives its
// user_bits() and a reliability that is a number.
template <typename Demapper, typename Decoder>
void decode_symbols(const Demapper& demapper,
                    Decoder& decoder,
                    const uint8_t* data,
                    size_t size,
                    double sigma2,
                    unsigned blocks)
{
    const unsigned bps = demapper.bits_per_symbol();
    const size_t symbols = (decoder.channel_bits() + bps - 1) / bps;
    std::vector<float> llr(symbols * bps);
    std::vector<uint8_t> bits;
    size_t at = 0;
    for (unsigned b = 0; b < blocks; ++b) {
        for (size_t i = 0; i < symbols; ++i, at += 2) {
            const uint8_t label = size ? data[at % size] : 0;
            const uint8_t noise = size ? data[(at + 1) % size] : 0;
            std::complex<double> u =
                demapper.point_of(label & ((1u << bps) - 1), unsigned(i));
            u += std::complex<double>((int(noise & 15) - 8) / 16.0,
                                      (int(noise >> 4) - 8) / 16.0);
            demapper.demap(u, unsigned(i), sigma2, &llr[i * bps]);
        }
        const size_t before = bits.size();
        decoder.decode(llr.data(), bits);
        check(bits.size() - before == decoder.user_bits());
        check(!std::isnan(decoder.reliability()));
    }
}

#endif
