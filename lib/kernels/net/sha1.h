/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* SHA-1 for the one place the stack needs it: the XMPP component handshake (XEP-0114),
 * which hashes a stream id and a shared secret. Nettle computes it. */
#ifndef HFSTACK_KERNELS_NET_SHA1_H
#define HFSTACK_KERNELS_NET_SHA1_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gr {
namespace hfstack {
namespace net {

std::array<uint8_t, 20> sha1(const uint8_t* data, size_t size);
// Lower-case hex of the digest of `text`'s bytes.
std::string sha1_hex(const std::string& text);

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
