/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* CRC-16 (header) and CRC-32 (C_PDU segment) of STANAG 5066 Annex C.
 * Both are the reflected form with initial value 0 and no final XOR; on the wire
 * they go least-significant byte first (see put_crc16_le / put_crc32_le). */
#ifndef HFSTACK_KERNELS_DL_CRC_H
#define HFSTACK_KERNELS_DL_CRC_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

// Generator 0x9949; register constant 0x9299 when shifting right.
uint16_t crc16_s5066(const uint8_t* data, size_t size, uint16_t crc = 0);
// Generator 0x0AA725CF; register constant 0xF3A4E550 when shifting right.
uint32_t crc32_s5066(const uint8_t* data, size_t size, uint32_t crc = 0);

inline void put_crc16_le(std::vector<uint8_t>& out, uint16_t crc)
{
    out.push_back(uint8_t(crc));
    out.push_back(uint8_t(crc >> 8));
}
inline void put_crc32_le(std::vector<uint8_t>& out, uint32_t crc)
{
    for (int i = 0; i < 4; ++i)
        out.push_back(uint8_t(crc >> (8 * i)));
}
inline uint16_t get_crc16_le(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t get_crc32_le(const uint8_t* p)
{
    return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) |
           (uint32_t(p[3]) << 24);
}

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
