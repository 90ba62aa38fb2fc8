/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Addresses that a service taking work from the air must not reach by default: the
 * host itself (loopback, "this network", unspecified), link-local, multicast and
 * reserved/broadcast space, and IPv4-mapped IPv6 (which reaches IPv4 loopback through
 * an IPv6 socket). The far PEP refuses them as destinations unless an access rule names
 * them; the IP client drops datagrams from the air that claim or seek them. */
#ifndef HFSTACK_KERNELS_NET_ADDRESS_SCOPE_H
#define HFSTACK_KERNELS_NET_ADDRESS_SCOPE_H

#include "ip_packet.h"

#include <optional>

namespace gr {
namespace hfstack {
namespace net {

// The reserved block containing `a` (0.0.0.0/8, 127.0.0.0/8, 169.254.0.0/16,
// 224.0.0.0/4, 240.0.0.0/4; ::/128, ::1/128, ::ffff:0:0/96, fe80::/10, ff00::/8), or
// nullopt for an ordinary address.
inline std::optional<ip_prefix> reserved_block(const ip_address& a)
{
    const auto block = [&](unsigned length) {
        ip_prefix p;
        p.network = a;
        p.length = length;
        const unsigned bits = a.version == 4 ? 32 : 128;
        for (unsigned i = length; i < bits; ++i)
            p.network.octets[i / 8] &= uint8_t(~(0x80u >> (i % 8)));
        return std::optional<ip_prefix>(p);
    };
    const auto& o = a.octets;
    if (a.version == 4) {
        if (o[0] == 0)
            return block(8);
        if (o[0] == 127)
            return block(8);
        if (o[0] == 169 && o[1] == 254)
            return block(16);
        if (o[0] >= 224)
            return block(4); // multicast 224/4, reserved and broadcast 240/4
        return std::nullopt;
    }
    bool zero_to_14 = true;
    for (int i = 0; i < 15; ++i)
        zero_to_14 = zero_to_14 && o[i] == 0;
    if (zero_to_14 && (o[15] == 0 || o[15] == 1))
        return block(128); // unspecified, loopback
    bool mapped = o[10] == 0xFF && o[11] == 0xFF;
    for (int i = 0; i < 10; ++i)
        mapped = mapped && o[i] == 0;
    if (mapped)
        return block(96);
    if (o[0] == 0xFE && (o[1] & 0xC0) == 0x80)
        return block(10);
    if (o[0] == 0xFF)
        return block(8);
    return std::nullopt;
}

inline bool is_loopback(const ip_address& a)
{
    if (a.version == 4)
        return a.octets[0] == 127;
    for (int i = 0; i < 15; ++i)
        if (a.octets[i] != 0)
            return false;
    return a.octets[15] == 1;
}

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
