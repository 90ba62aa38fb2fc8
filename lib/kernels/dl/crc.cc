/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "crc.h"

#include <array>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

template <typename T, T reflected_poly>
struct crc_table {
    std::array<T, 256> t{};
    constexpr crc_table()
    {
        for (unsigned i = 0; i < 256; ++i) {
            T r = T(i);
            for (int b = 0; b < 8; ++b)
                r = (r & 1) ? T((r >> 1) ^ reflected_poly) : T(r >> 1);
            t[i] = r;
        }
    }
};

// Slicing-by-4 tables for the segment CRC: the deframer checks every data byte, so
// this is the hot loop of the receive path.
struct crc32_slices {
    std::array<std::array<uint32_t, 256>, 4> t{};
    constexpr crc32_slices()
    {
        constexpr crc_table<uint32_t, 0xF3A4E550u> base{};
        for (unsigned i = 0; i < 256; ++i)
            t[0][i] = base.t[i];
        for (unsigned i = 0; i < 256; ++i)
            for (int s = 1; s < 4; ++s)
                t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    }
};

constexpr crc_table<uint16_t, 0x9299> crc16_table{};
constexpr crc32_slices crc32_tables{};

} // namespace

uint16_t crc16_s5066(const uint8_t* data, size_t size, uint16_t crc)
{
    for (size_t i = 0; i < size; ++i)
        crc = uint16_t((crc >> 8) ^ crc16_table.t[(crc ^ data[i]) & 0xFF]);
    return crc;
}

uint32_t crc32_s5066(const uint8_t* data, size_t size, uint32_t crc)
{
    const auto& t = crc32_tables.t;
    size_t i = 0;
    for (; i + 4 <= size; i += 4) {
        crc ^= uint32_t(data[i]) | (uint32_t(data[i + 1]) << 8) |
               (uint32_t(data[i + 2]) << 16) | (uint32_t(data[i + 3]) << 24);
        crc = t[3][crc & 0xFF] ^ t[2][(crc >> 8) & 0xFF] ^ t[1][(crc >> 16) & 0xFF] ^
              t[0][crc >> 24];
    }
    for (; i < size; ++i)
        crc = (crc >> 8) ^ t[0][(crc ^ data[i]) & 0xFF];
    return crc;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
