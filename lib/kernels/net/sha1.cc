/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "sha1.h"

#include <vector>

namespace gr {
namespace hfstack {
namespace net {

namespace {

uint32_t rotl(uint32_t x, unsigned n) { return x << n | x >> (32 - n); }

} // namespace

std::array<uint8_t, 20> sha1(const uint8_t* data, size_t size)
{
    uint32_t h[5] = { 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0 };
    // The message, a 1 bit, zeros to 56 mod 64 bytes, then its length in bits (64, MSB
    // first).
    std::vector<uint8_t> m(data, data + size);
    m.push_back(0x80);
    while (m.size() % 64 != 56)
        m.push_back(0);
    const uint64_t bits = uint64_t(size) * 8;
    for (int i = 7; i >= 0; --i)
        m.push_back(uint8_t(bits >> (8 * i)));
    for (size_t block = 0; block < m.size(); block += 64) {
        uint32_t w[80];
        for (int t = 0; t < 16; ++t)
            w[t] = uint32_t(m[block + 4 * t]) << 24 |
                   uint32_t(m[block + 4 * t + 1]) << 16 |
                   uint32_t(m[block + 4 * t + 2]) << 8 | m[block + 4 * t + 3];
        for (int t = 16; t < 80; ++t)
            w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int t = 0; t < 80; ++t) {
            uint32_t f, k;
            if (t < 20) {
                f = (b & c) | (~b & d);
                k = 0x5A827999;
            } else if (t < 40) {
                f = b ^ c ^ d;
                k = 0x6ED9EBA1;
            } else if (t < 60) {
                f = (b & c) | (b & d) | (c & d);
                k = 0x8F1BBCDC;
            } else {
                f = b ^ c ^ d;
                k = 0xCA62C1D6;
            }
            const uint32_t next = rotl(a, 5) + f + e + k + w[t];
            e = d;
            d = c;
            c = rotl(b, 30);
            b = a;
            a = next;
        }
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
    }
    std::array<uint8_t, 20> out;
    for (int i = 0; i < 20; ++i)
        out[size_t(i)] = uint8_t(h[i / 4] >> (24 - 8 * (i % 4)));
    return out;
}

std::string sha1_hex(const std::string& text)
{
    const auto d = sha1(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (uint8_t b : d) {
        out.push_back(digits[b >> 4]);
        out.push_back(digits[b & 15]);
    }
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
