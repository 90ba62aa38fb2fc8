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

#endif
