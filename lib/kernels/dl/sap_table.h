/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* SAP bindings of the subnet interface sublayer (STANAG 5066 Annex A): which client
 * holds which SAP, with rank-based pre-emption and the BIND_ACCEPTED / BIND_REJECTED /
 * UNBIND_INDICATION answers. Pure bookkeeping: no time, no I/O. */
#ifndef HFSTACK_KERNELS_DL_SAP_TABLE_H
#define HFSTACK_KERNELS_DL_SAP_TABLE_H

#include "sis.h"

#include <array>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

constexpr unsigned sap_count = 16;
constexpr uint16_t default_mtu = 2048;
constexpr uint16_t broadcast_only_max_mtu = 4096;

struct sap_table_config {
    uint16_t mtu = default_mtu;  // told to every client in S_BIND_ACCEPTED
    bool broadcast_only = false; // ARQ services refused (reason 4)
};

struct sap_binding {
    uint32_t client = 0;
    uint8_t sap = 0;
    uint8_t rank = 0;
    sis_service_type service;
};

// A primitive the node must send to a client.
struct client_message {
    uint32_t client = 0;
    sis_primitive primitive;
    // Nonzero: the node's journal awaits word that this reached the client's socket
    // (node_engine::on_delivery_settled).
    uint64_t delivery = 0;
};
// A primitive of `type` (with `reason`, where the type has one) for `client`.
client_message make_client_message(uint32_t client, sis_type type, uint8_t reason = 0);
// Whether a BIND_REQUEST's service type is one a SAP can be bound with: tx mode 1-3,
// confirmation 0-2, and delivery confirmation (node or client) only with ARQ.
bool valid_bind_service(const sis_service_type& s);

class sap_table
{
public:
    explicit sap_table(sap_table_config config = {});

    // Handles S_BIND_REQUEST from `client`. A client holds one SAP: binding again
    // releases its old one first. A SAP held by a lower-ranked client is taken over
    // (that client gets S_UNBIND_INDICATION, reason pre-empted); an equal or higher
    // rank keeps it and the request gets S_BIND_REJECTED (SAP already allocated).
    // An invalid service type (valid_bind_service) gets S_BIND_REJECTED reason 0.
    std::vector<client_message> bind(uint32_t client, const sis_primitive& request);
    // S_UNBIND_REQUEST or a closed connection: frees the client's SAP, answers nothing.
    // Returns the binding it held, if any.
    std::optional<sap_binding> unbind(uint32_t client);

    const sap_binding* by_sap(uint8_t sap) const;
    const sap_binding* by_client(uint32_t client) const;
    std::vector<sap_binding> bindings() const;
    const sap_table_config& config() const { return d_config; }

private:
    sap_table_config d_config;
    std::array<std::optional<sap_binding>, sap_count> d_saps;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
