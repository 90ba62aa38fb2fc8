/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* SIS clients of the node engine: binds, U_PDU requests, confirmations and rejections,
 * flow control. See node_engine_impl.h. */
#include "node_engine_impl.h"

#include <algorithm>

namespace gr {
namespace hfstack {
namespace dl {

void node_engine::impl::to_client(uint32_t client, sis_primitive p)
{
    if (client == departed_client)
        return;
    actions.to_clients.push_back(client_message{ client, std::move(p) });
}

void node_engine::impl::ensure_client(uint32_t client)
{
    if (clients.insert(client).second) {
        supervision.on_connected(client, now);
        counters.clients_accepted += 1;
    }
}

void node_engine::impl::reject(const updu_request& r, sis_unidata_rejected_reason reason)
{
    sis_primitive p;
    p.type = r.expedited ? sis_type::expedited_unidata_request_rejected
                         : sis_type::unidata_request_rejected;
    p.reason = uint8_t(reason);
    p.destination_sap = r.destination_sap;
    p.destination = sis_addr(r.destination);
    p.payload = r.updu;
    counters.updus_rejected += 1;
    if (reason == sis_unidata_rejected_reason::ttl_expired)
        counters.ttl_expired += 1;
    to_client(r.client, std::move(p));
}

void node_engine::impl::confirm(const updu_request& r)
{
    sis_primitive p;
    p.type = r.expedited ? sis_type::expedited_unidata_request_confirm
                         : sis_type::unidata_request_confirm;
    p.destination_sap = r.destination_sap;
    p.destination = sis_addr(r.destination);
    p.payload = r.updu;
    counters.updus_confirmed += 1;
    to_client(r.client, std::move(p));
}

void node_engine::impl::forget_client(uint32_t client)
{
    saps.unbind(client);
    hard.on_client_gone(client, now);
    // What it queued is still sent (its TTL still applies) and answered to nobody,
    // unless the node is told to discard it: never lost in silence.
    if (cfg.discard_on_client_close) {
        for (auto& r : queue.remove_client(client)) {
            note_dequeued(r);
            counters.updus_discarded += 1;
        }
    } else {
        queue.orphan_client(client);
    }
    // U_PDUs already in ARQ senders still go out; their answers reach nobody.
    for (auto& [addr, p] : peers) {
        for (auto* m : { &p->flights, &p->flights_exp })
            for (auto& [h, f] : *m)
                if (f.from_client && f.request.client == client)
                    f.request.client = departed_client;
        for (auto& w : p->awaiting_client)
            if (w.client == client)
                w.client = departed_client;
    }
}

void node_engine::impl::note_dequeued(const updu_request& r)
{
    if (needs_arq(r.service)) {
        auto it = arq_queued_by_peer.find(r.destination);
        if (it != arq_queued_by_peer.end() && --it->second == 0)
            arq_queued_by_peer.erase(it);
        if (r.expedited) {
            auto e = expedited_queued_by_peer.find(r.destination);
            if (e != expedited_queued_by_peer.end() && --e->second == 0)
                expedited_queued_by_peer.erase(e);
        }
    } else {
        non_arq_queued -= 1;
    }
}

void node_engine::impl::on_sis(uint32_t client, const sis_primitive& p)
{
    ensure_client(client);
    switch (p.type) {
    case sis_type::bind_request:
    case sis_type::unbind_request:
    case sis_type::hard_link_establish:
    case sis_type::hard_link_terminate:
    case sis_type::hard_link_accept:
    case sis_type::hard_link_reject:
    case sis_type::keep_alive:
    case sis_type::management_msg_request:
    case sis_type::unidata_request:
    case sis_type::expedited_unidata_request:
        break;
    default:
        supervision.on_invalid(client,
                               std::string(to_string(p.type)) +
                                   " is a node-to-client primitive",
                               now);
        return;
    }
    supervision.on_primitive(client, p, now);
    const sap_binding* own = saps.by_client(client);
    switch (p.type) {
    case sis_type::bind_request: {
        const int previous_sap = own ? own->sap : -1;
        for (auto& m : saps.bind(client, p)) {
            const bool accepted =
                m.client == client && m.primitive.type == sis_type::bind_accepted;
            // A client moving to another SAP leaves its hard link behind; a refused
            // rebind keeps both.
            if (accepted && previous_sap >= 0 && previous_sap != p.sap)
                hard.on_client_gone(client, now);
            if (m.primitive.type == sis_type::unbind_indication && m.client != client)
                forget_client(m.client); // pre-empted by a higher rank
            actions.to_clients.push_back(m);
            if (accepted) {
                sis_primitive s;
                s.type = sis_type::subnet_availability;
                s.subnet_status = sis_subnet_status::on;
                to_client(client, s);
                deliver_owed(client, p.sap);
            }
        }
        break;
    }
    case sis_type::unbind_request:
        forget_client(client);
        break;
    case sis_type::hard_link_establish:
        if (!own) {
            supervision.on_invalid(client, "S_HARD_LINK_ESTABLISH before a bind", now);
            return;
        }
        if ((p.remote.address & node_address_mask) == cfg.address ||
            is_group(p.remote.address)) {
            // A hard link needs another node (Annex A.2.2: an individual address).
            sis_primitive r = p;
            r.type = sis_type::hard_link_rejected;
            r.reason = 0;
            to_client(client, std::move(r));
            return;
        }
        hard.on_establish(client, own->sap, p, now);
        break;
    case sis_type::hard_link_terminate:
        hard.on_terminate(client, now);
        break;
    case sis_type::hard_link_accept:
    case sis_type::hard_link_reject:
        hard.on_client_answer(client, p, now);
        break;
    case sis_type::unidata_request:
    case sis_type::expedited_unidata_request:
        on_unidata_request(client, own, p);
        break;
    default: // keep-alive: answered by supervision; management: not supported
        break;
    }
}

void node_engine::impl::on_unidata_request(uint32_t client,
                                           const sap_binding* own,
                                           const sis_primitive& p)
{
    updu_request r;
    r.client = client;
    r.expedited = p.type == sis_type::expedited_unidata_request;
    r.destination_sap = p.destination_sap;
    r.destination = p.destination.address & (group_address_flag | node_address_mask);
    r.priority = r.expedited ? 15 : p.priority;
    r.service = p.service_type;
    r.updu = p.payload;
    r.deadline = ttl_deadline(p.ttl, now);
    if (!own) {
        supervision.on_invalid(client, "unidata request before a bind", now);
        reject(r, sis_unidata_rejected_reason::unknown);
        return;
    }
    r.source_sap = own->sap;
    if (r.updu.size() > cfg.mtu) {
        reject(r, sis_unidata_rejected_reason::updu_larger_than_mtu);
        return;
    }
    if (r.service.tx_mode == sis_tx_mode::ignore)
        r.service = own->service;
    if (r.service.tx_mode == sis_tx_mode::ignore ||
        unsigned(r.service.tx_mode) > unsigned(sis_tx_mode::non_arq_with_errors)) {
        reject(r, sis_unidata_rejected_reason::tx_mode_not_specified);
        return;
    }
    // ARQ cannot serve a group, and a broadcast-only node has no links: such
    // requests go as non-ARQ (broadcast data exchange).
    if (needs_arq(r.service) && (is_group(r.destination) || cfg.broadcast_only))
        r.service.tx_mode = sis_tx_mode::non_arq;
    // Non-ARQ cannot learn of delivery. A client asking confirmation gets it once
    // the last copy is sent, or (confirm_non_arq_when_sent off) a rejection now;
    // never silence.
    if (!needs_arq(r.service) &&
        r.service.delivery_confirmation != sis_delivery_confirmation::none &&
        !cfg.confirm_non_arq_when_sent) {
        reject(r, sis_unidata_rejected_reason::tx_mode_not_specified);
        return;
    }
    if (r.destination == cfg.address) {
        deliver_local(r);
        return;
    }
    const auto id = queue.push(r, now);
    if (!id) {
        reject(r,
               r.deadline <= now ? sis_unidata_rejected_reason::ttl_expired
                                 : sis_unidata_rejected_reason::unknown);
        return;
    }
    counters.updus_accepted += 1;
    if (needs_arq(r.service)) {
        arq_queued_by_peer[r.destination] += 1;
        if (r.expedited)
            expedited_queued_by_peer[r.destination] += 1;
    } else {
        non_arq_queued += 1;
    }
}

void node_engine::impl::deliver_local(const updu_request& r)
{
    if (!deliver_data(cfg.address,
                      cfg.address,
                      data_spdu(r),
                      r.expedited,
                      r.service.tx_mode,
                      nullptr)) {
        reject(r, sis_unidata_rejected_reason::destination_sap_not_bound);
        return;
    }
    counters.updus_accepted += 1;
    if (r.service.delivery_confirmation != sis_delivery_confirmation::none)
        confirm(r);
}

} // namespace dl
} // namespace hfstack
} // namespace gr
