/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "sap_table.h"

namespace gr {
namespace hfstack {
namespace dl {

client_message make_client_message(uint32_t client, sis_type type, uint8_t reason)
{
    client_message m;
    m.client = client;
    m.primitive.type = type;
    m.primitive.reason = reason;
    return m;
}

bool valid_bind_service(const sis_service_type& s)
{
    // A bind names the default service, so "ignore" (0) means nothing there; modes
    // 4-15 and confirmation 3 are undefined; delivery confirmation needs ARQ.
    if (s.tx_mode == sis_tx_mode::ignore ||
        unsigned(s.tx_mode) > unsigned(sis_tx_mode::non_arq_with_errors))
        return false;
    if (unsigned(s.delivery_confirmation) > unsigned(sis_delivery_confirmation::client))
        return false;
    return s.delivery_confirmation == sis_delivery_confirmation::none ||
           s.tx_mode == sis_tx_mode::arq;
}

sap_table::sap_table(sap_table_config config) : d_config(config) {}

std::vector<client_message> sap_table::bind(uint32_t client, const sis_primitive& request)
{
    std::vector<client_message> out;
    const uint8_t sap = request.sap & 0x0F;
    if (!valid_bind_service(request.service_type)) {
        // Annex A has no reason of its own for this: 0, unknown.
        out.push_back(make_client_message(
            client, sis_type::bind_rejected, uint8_t(sis_bind_rejected_reason::unknown)));
        return out;
    }
    if (d_config.broadcast_only && request.service_type.tx_mode == sis_tx_mode::arq) {
        out.push_back(make_client_message(
            client,
            sis_type::bind_rejected,
            uint8_t(sis_bind_rejected_reason::arq_unsupportable_during_broadcast)));
        return out;
    }
    const auto& holder = d_saps[sap];
    if (holder && holder->client != client && holder->rank >= request.rank) {
        out.push_back(make_client_message(
            client,
            sis_type::bind_rejected,
            uint8_t(sis_bind_rejected_reason::sap_already_allocated)));
        return out;
    }
    unbind(client); // one SAP per client
    if (d_saps[sap]) {
        out.push_back(
            make_client_message(d_saps[sap]->client,
                                sis_type::unbind_indication,
                                uint8_t(sis_unbind_reason::preempted_by_higher_rank)));
        d_saps[sap].reset();
    }
    d_saps[sap] =
        sap_binding{ client, sap, uint8_t(request.rank & 0x0F), request.service_type };
    client_message accepted = make_client_message(client, sis_type::bind_accepted);
    accepted.primitive.sap = sap;
    accepted.primitive.mtu = d_config.mtu;
    out.push_back(accepted);
    return out;
}

std::optional<sap_binding> sap_table::unbind(uint32_t client)
{
    for (auto& b : d_saps)
        if (b && b->client == client) {
            auto held = b;
            b.reset();
            return held;
        }
    return std::nullopt;
}

const sap_binding* sap_table::by_sap(uint8_t sap) const
{
    const auto& b = d_saps[sap & 0x0F];
    return b ? &*b : nullptr;
}

const sap_binding* sap_table::by_client(uint32_t client) const
{
    for (const auto& b : d_saps)
        if (b && b->client == client)
            return &*b;
    return nullptr;
}

std::vector<sap_binding> sap_table::bindings() const
{
    std::vector<sap_binding> out;
    for (const auto& b : d_saps)
        if (b)
            out.push_back(*b);
    return out;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
