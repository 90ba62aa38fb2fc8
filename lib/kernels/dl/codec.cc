/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "codec.h"

namespace gr {
namespace hfstack {
namespace dl {

const char* to_string(decode_error e)
{
    switch (e) {
    case decode_error::none:
        return "none";
    case decode_error::truncated:
        return "truncated";
    case decode_error::bad_sync:
        return "bad_sync";
    case decode_error::bad_version:
        return "bad_version";
    case decode_error::bad_size:
        return "bad_size";
    case decode_error::oversized:
        return "oversized";
    case decode_error::header_crc:
        return "header_crc";
    case decode_error::segment_crc:
        return "segment_crc";
    case decode_error::unknown_type:
        return "unknown_type";
    case decode_error::bad_field:
        return "bad_field";
    }
    return "unknown";
}

std::string to_hex(const uint8_t* data, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(size * 2);
    for (size_t i = 0; i < size; ++i) {
        s.push_back(digits[data[i] >> 4]);
        s.push_back(digits[data[i] & 0xF]);
    }
    return s;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
