/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hard-link manager of the subnetwork interface sublayer, STANAG 5066 Edition 3 Annex A:
 * one node's side of Hard Link Data Exchange Sessions of types 0, 1 and 2. Sans-IO: it
 * takes client primitives, peer S_PDUs (types 3-7), link-loss reports and `now`, and
 * hands back primitives for local clients and S_PDUs for the engine to send.
 *
 * Rules applied (section numbers of Annex A, Edition 3):
 *  - A.1.1.2.1-3 and the Link-Type argument (A.2.2): type 0 keeps a physical link, any
 *    client of the two nodes may use it; type 1 admits only traffic between the
 *    requesting client and any client of the remote node; type 2 only between the
 *    requesting client and the one remote SAP named in the request (see may_use()).
 *  - A.2.1.6 (2),(3),(7): link priority 0-3 and link type 0-2; anything else is refused
 *    locally with S_HARD_LINK_REJECTED, reason 0 (no Annex A value fits). A.2.2, node
 *    address encoding (3): the remote node must be an individual address (group -> same
 * refusal).
 *  - A.3.2.2 (1)-(5): at most one hard link per node; a request is accepted when none
 *    exists; a request of higher precedence ends the existing (or pending) link, one of
 *    lower or equal precedence is refused.
 *  - A.3.2.2.1 precedence, in this order: higher client rank wins; then higher link
 *    priority; then, between the same two nodes, higher link type; otherwise the link
 *    processed first (existing or pending) wins.
 *  - A.3.2.2.2 (2),(3): a local request of lower precedence -> S_HARD_LINK_REJECTED
 *    "higher priority link existing" (2); A.3.2.2.2 (5) and A.3.2.2 (6): a refused type 0
 *    request of the same rank and priority to the node already hard-linked -> reason
 *    "requested type 0 link exists" (5), the existing link left untouched.
 *  - A.3.2.2.2 (8): an accepted request first terminates the lower-precedence link
 *    (A.3.2.2.3: HARD LINK TERMINATE, reason "higher priority link requested"); its local
 *    client(s) get S_HARD_LINK_TERMINATED reason 2 at once (a pending caller-side request
 *    gets S_HARD_LINK_REJECTED reason 2 instead, a pending called-side type 2 request is
 *    answered HARD LINK ESTABLISHMENT REJECTED reason 2).
 *  - A.3.2.2.2 (9)-(12): the caller emits HARD LINK ESTABLISHMENT REQUEST (the engine
 *    makes the physical link through CAS first and sends it expedited, (11)), then waits
 *    `response_timeout` (counted from the client's request, so it covers the link
 * set-up): (13) REJECTED S_PDU -> S_HARD_LINK_REJECTED with the peer's reason; (14)
 * CONFIRM -> S_HARD_LINK_ESTABLISHED (remote node status 1 = OK, A.2.1.8 (4),(5)); (15)
 * timeout -> S_HARD_LINK_REJECTED "remote node not responding" (3). Link loss while
 * waiting gives the same reason 3.
 *  - A.3.2.2.2 (17)-(22), called node: type 2 to an unbound SAP -> REJECTED reason 4;
 *    precedence evaluated with `default_called_rank` for types 0 and 1 and the rank of
 * the client bound to the called SAP for type 2 (19); refused requests get REJECTED
 * reason "remote node busy" (1) when rank and priority tie, "higher priority link
 * existing" (2) otherwise (21); accepted types 0 and 1 are confirmed at once (22) and no
 * local client is told (A.2.1.11 (1): S_HARD_LINK_INDICATION is for type 2 only).
 *  - A.3.2.2.2 (23),(24), called node, type 2: S_HARD_LINK_INDICATION to the client bound
 *    to the called SAP; its S_HARD_LINK_ACCEPT -> CONFIRM; its S_HARD_LINK_REJECT ->
 *    REJECTED with the client's reason if it is 1-4, else "remote node busy" (1); no
 * answer within `accept_timeout` -> REJECTED reason "remote node not responding" (3).
 *  - A.2.1.7 (2): only the client that owns the link may terminate it (caller side: the
 *    requester; called side: the type 2 client that accepted, A.3.2.2.3 (1)).
 *  - A.3.2.2.3 (2),(4),(5) and A.2.1.7 note: S_HARD_LINK_TERMINATE -> HARD LINK TERMINATE
 *    reason "client request"; a TERMINATE CONFIRM ends it silently; no confirm within
 *    `terminate_timeout` -> S_HARD_LINK_TERMINATED "remote node not responding" (3).
 *  - A.3.2.2.3 (3): a received HARD LINK TERMINATE is answered with TERMINATE CONFIRM at
 *    once (also when no link is known, so the peer can finish); the link ends and its
 *    local client(s) get S_HARD_LINK_TERMINATED: reason 2 for an S_PDU reason 2, 4 for 4,
 *    otherwise "terminated by remote" (1). A.2.1.10 (2),(3): for types 0 and 1 only the
 *    requesting client is told (the called node has none), for type 2 both ends' clients.
 *  - A.3.2.2.3 (7),(8): CAS reports the physical link lost -> the link ends,
 *    S_HARD_LINK_TERMINATED "physical link broken" (5) to its local client(s).
 *  - Implementation choices (not in Annex A): a CONFIRM arriving for no pending request
 *    (e.g. after our timeout) is answered with HARD LINK TERMINATE so the peer does not
 *    keep a dangling link; a REQUEST from the peer we already hold a link with replaces
 *    that link (the peer keeps one link only, so it has abandoned the old one) and the
 * old link's local client gets S_HARD_LINK_TERMINATED "terminated by remote" (1); a HARD
 * LINK TERMINATE for a still-pending request ends it with S_HARD_LINK_REJECTED (reason 2
 * if the peer gave 2, else "remote node busy"); S_HARD_LINK_TERMINATE for a request still
 * waiting for CONFIRM cancels it with HARD LINK TERMINATE and reports nothing, even on
 * time-out (the link was never granted); S_HARD_LINK_TERMINATE from a client still asked
 * by an INDICATION counts as its REJECT.
 */
#ifndef HFSTACK_KERNELS_DL_HARD_LINK_H
#define HFSTACK_KERNELS_DL_HARD_LINK_H

#include "sap_table.h"
#include "sis.h"
#include "spdu.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

struct hard_link_config {
    // Caller: from S_HARD_LINK_ESTABLISH until CONFIRM / REJECTED (A.3.2.2.2 (12)).
    double response_timeout = 120.0;
    // Called, type 2: from S_HARD_LINK_INDICATION until ACCEPT / REJECT (A.3.2.2.2 (23)).
    double accept_timeout = 60.0;
    // From HARD LINK TERMINATE until TERMINATE CONFIRM (A.3.2.2.3 (4), A.3.1.6 (6)).
    double terminate_timeout = 60.0;
    // Rank used for incoming type 0 / 1 requests (A.3.2.2.2 (19)), and for local clients
    // when no sap_table is given.
    uint8_t default_called_rank = 0;
};

enum class hard_link_role : uint8_t { caller, called };

enum class hard_link_state : uint8_t {
    requesting,      // caller: REQUEST sent, waiting for CONFIRM / REJECTED
    awaiting_client, // called, type 2: INDICATION sent, waiting for ACCEPT / REJECT
    established,
};

// The node's one hard link (A.3.2.2 (1)).
struct hard_link_info {
    uint32_t peer = 0;  // remote node address (28 bits)
    sis_address remote; // as written in the primitives to the local client
    hard_link_type type = hard_link_type::link_reservation;
    uint8_t priority = 0; // 0-3
    uint8_t rank = 0;     // rank used for precedence (A.3.2.2.1)
    hard_link_role role = hard_link_role::caller;
    hard_link_state state = hard_link_state::requesting;
    // Local client holding the link: the requester (caller) or, for type 2, the client
    // that was asked / accepted (called). None at the called node for types 0 and 1.
    std::optional<uint32_t> client;
    uint8_t local_sap = 0; // the local client's SAP (meaningless when client is empty)
    // Caller: the requested remote SAP (meaningful for type 2 only, A.2.1.6 (10));
    // called: the requesting SAP of the peer's client (A.3.1.4 (5)).
    uint8_t remote_sap = 0;
};

struct hard_link_spdu {
    uint32_t peer = 0;
    spdu pdu; // types 3-7; all go expedited (A.3.2.2.2 (11),(25), A.3.2.2.3 (6))
};

struct hard_link_counters {
    uint64_t requests_local = 0;  // S_HARD_LINK_ESTABLISH received
    uint64_t requests_remote = 0; // HARD LINK ESTABLISHMENT REQUEST received
    uint64_t established = 0;     // links that reached `established` (either role)
    uint64_t rejected_local = 0;  // S_HARD_LINK_REJECTED issued
    uint64_t rejected_remote = 0; // HARD LINK ESTABLISHMENT REJECTED sent
    uint64_t preempted = 0;       // links ended by a higher-precedence request
    uint64_t terminated = 0;      // established links ended (any cause)
    uint64_t timeouts = 0;        // response, accept and terminate time-outs
    uint64_t links_lost = 0;      // links ended by on_link_lost
    uint64_t ignored = 0;         // unexpected S_PDUs / answers / terminates
};

class hard_link_manager
{
public:
    // `saps` (may be null) tells bound SAPs and client ranks; it must outlive the
    // manager. Without it every SAP counts as bound with rank default_called_rank.
    explicit hard_link_manager(hard_link_config config = {},
                               const sap_table* saps = nullptr);

    // S_HARD_LINK_ESTABLISH from `client` bound at `client_sap` (A.3.2.2.2).
    void on_establish(uint32_t client,
                      uint8_t client_sap,
                      const sis_primitive& establish,
                      double now);
    // S_HARD_LINK_TERMINATE from `client` (A.2.1.7); ignored unless it owns the link.
    void on_terminate(uint32_t client, double now);
    // The client unbound or disconnected: its link is terminated towards the peer with
    // reason "client request" (types 0, 1 and caller-side 2) or "destination SAP ID
    // unbound" (called-side type 2); no primitive is issued. A pending type 2 indication
    // to it is refused with "destination SAP ID not bound".
    void on_client_gone(uint32_t client, double now);
    // S_HARD_LINK_ACCEPT / S_HARD_LINK_REJECT from a client asked by an INDICATION.
    void on_client_answer(uint32_t client, const sis_primitive& answer, double now);
    // A decoded S_PDU of types 3-7 from `peer`; other types are ignored.
    void on_spdu(uint32_t peer, const spdu& pdu, double now);
    // CAS: the physical link to `peer` is permanently broken (A.3.2.2.3 (7)).
    void on_link_lost(uint32_t peer, double now);
    void on_timer(double now);

    std::vector<client_message> take_client_messages();
    std::vector<hard_link_spdu> take_spdus();

    // The current hard link (pending or established), if any. Links being terminated
    // (waiting for TERMINATE CONFIRM) are not reported.
    const std::optional<hard_link_info>& active() const { return d_link; }
    // Whether traffic between local SAP `local_sap` and `destination_sap` at node
    // `destination` is admitted (A.1.1.2.1-3). With no established hard link: always
    // (soft-link rules apply). With one: traffic to any other node is held back (the
    // physical link is kept to the hard-link peer, A.1.1.2 "irrespective of the
    // destinations of other queued U_PDUs"); to the peer, type 0 admits everything,
    // type 1 only traffic involving the link's owning client, type 2 only the owning SAP
    // pair. Applies to both directions: the engine may call it for received traffic with
    // local = destination SAP and destination = source node / SAP.
    bool may_use(uint8_t local_sap, uint32_t destination, uint8_t destination_sap) const;
    // Earliest pending time-out, +infinity if none.
    double next_deadline() const;
    const hard_link_counters& counters() const { return d_counters; }
    const hard_link_config& config() const { return d_config; }

private:
    struct closing {
        uint32_t peer = 0;
        double deadline = 0;
        hard_link_info link;
        bool owner_told = false; // TERMINATED already issued (or nobody to tell)
    };

    uint8_t rank_of_sap(uint8_t sap) const;
    bool sap_bound(uint8_t sap) const;
    std::optional<uint32_t> client_of_sap(uint8_t sap) const;

    void send(uint32_t peer, spdu pdu);
    void tell(uint32_t client, sis_type type, uint8_t reason, const hard_link_info& l);
    void reject_local(uint32_t client,
                      const sis_primitive& request,
                      sis_hard_link_rejected_reason reason);
    void reject_remote(uint32_t peer, hard_link_reject_reason reason);
    // Ends d_link because of a higher-precedence request (local or from `new_peer`).
    void preempt_current(uint32_t new_peer, double now);
    // Ends d_link after a local decision to terminate: TERMINATE to the peer, then wait.
    void start_closing(uint8_t reason, bool owner_told, double now);
    void end_current(sis_hard_link_terminated_reason reason);

    hard_link_config d_config;
    const sap_table* d_saps;
    std::optional<hard_link_info> d_link;
    double d_deadline = 0; // time-out of d_link while requesting / awaiting_client
    std::vector<closing> d_closing;
    std::vector<client_message> d_messages;
    std::vector<hard_link_spdu> d_spdus;
    hard_link_counters d_counters;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
