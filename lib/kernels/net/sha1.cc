/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "sha1.h"

#include <nettle/sha1.h>

namespace gr {
namespace hfstack {
namespace net {

std::array<uint8_t, 20> sha1(const uint8_t* data, size_t size)
{
    sha1_ctx ctx;
    sha1_init(&ctx);
    sha1_update(&ctx, size, data);
    std::array<uint8_t, 20> digest;
    sha1_digest(&ctx, digest.size(), digest.data());
    return digest;
}

std::string sha1_hex(const std::string& text)
{
    const auto d = sha1(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (uint8_t b : d) {
        out += hex[b >> 4];
        out += hex[b & 15];
    }
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
