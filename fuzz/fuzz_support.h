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
