/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Shared vocabulary of the STANAG 5066 codecs: byte buffers, decode results and
 * big-endian field access. Plain C++17, no GNU Radio dependency. */
#ifndef HFSTACK_KERNELS_DL_CODEC_H
#define HFSTACK_KERNELS_DL_CODEC_H

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

using bytes = std::vector<uint8_t>;

// Maury-Styles sync word, starting both D_PDUs and SIS frames.
constexpr uint8_t sync_byte_0 = 0x90;
constexpr uint8_t sync_byte_1 = 0xEB;

// Why a decode failed. Decoders never throw on bad input: they return one of these
// with a human-readable reason, so a malformed frame from the air is counted, not fatal.
enum class decode_error : uint8_t {
    none = 0,
    truncated,    // fewer bytes than the fields announce
    bad_sync,     // first bytes are not 0x90 0xEB
    bad_version,  // SIS version byte is not 0
    bad_size,     // a size field contradicts the bytes present or the type's layout
    oversized,    // a size field exceeds the protocol maximum
    header_crc,   // D_PDU header CRC-16 mismatch
    segment_crc,  // D_PDU segment CRC-32 mismatch
    unknown_type, // type code not defined by the standard
    bad_field,    // a field holds a value the standard forbids
};

const char* to_string(decode_error e);

template <typename T>
struct decoded {
    T value{};
    decode_error error = decode_error::none;
    std::string reason;

    bool ok() const { return error == decode_error::none; }
    explicit operator bool() const { return ok(); }

    static decoded success(T v)
    {
        decoded d;
        d.value = std::move(v);
        return d;
    }
    static decoded failure(decode_error e, std::string why)
    {
        decoded d;
        d.error = e;
        d.reason = std::move(why);
        return d;
    }
};

// Encoders throw this when asked to put a value on the wire that its field cannot
// hold (a 1024-byte segment, a 17-byte ack map, ...): that is a caller bug, never
// something a remote peer can cause.
struct encode_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

inline void put_u16_be(bytes& out, uint16_t v)
{
    out.push_back(uint8_t(v >> 8));
    out.push_back(uint8_t(v));
}
inline void put_u32_be(bytes& out, uint32_t v)
{
    out.push_back(uint8_t(v >> 24));
    out.push_back(uint8_t(v >> 16));
    out.push_back(uint8_t(v >> 8));
    out.push_back(uint8_t(v));
}
inline uint16_t get_u16_be(const uint8_t* p) { return uint16_t((p[0] << 8) | p[1]); }
inline uint32_t get_u32_be(const uint8_t* p)
{
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) |
           uint32_t(p[3]);
}

// Throws encode_error naming the field when value does not fit in `bits` bits.
inline void require_bits(const char* field, uint64_t value, unsigned bits)
{
    if (bits < 64 && (value >> bits) != 0)
        throw encode_error(std::string(field) + " = " + std::to_string(value) +
                           " does not fit in " + std::to_string(bits) + " bits");
}

// Lower-case hex with no separators, for log lines and error reasons.
std::string to_hex(const uint8_t* data, size_t size);
inline std::string to_hex(const bytes& b) { return to_hex(b.data(), b.size()); }

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
