/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Data rate change (DRC) for one STANAG 5066 connection: STANAG 5066 Edition 3 Annex C,
 * EOW messages of C.5 (types 1 and 2) and the procedure of C.6.4.
 *
 * rate_change runs the Annex C handshake with one peer node: advisory EOWs, the
 * MANAGEMENT D_PDU exchange DRC_Request / DRC_Response / DT_ACK / Confirm, retries and
 * timeouts, and says when tx_mode() / rx_mode() change. It is sans-IO (time is the `now`
 * argument, seconds; no clock, socket or thread). Which mode the link should use is
 * rate_policy's (rate_policy.h); the modes' codes and names are modem_mode.h's.
 *
 * ---------------------------------------------------------------------------------
 * Who decides what (C.6.4.2, Tables C-7 "other parameters")
 *  - The RECEIVING node measures the channel, so it is the one that knows which rate
 *    its peer should transmit at. It does not command it: it sends a DRC Request EOW
 *    with "other parameters" = advisory (2: advising node has independent Tx/Rx rates,
 *    3: its Tx and Rx must be equal), piggybacked on the EOW field of any D_PDU (no
 *    acknowledgement is needed, C.5 first paragraph, C.3.1). rate_change::advise_rx()
 *    sets the mode we want the peer to use; take_eow() hands out that advisory.
 *  - The SENDING node takes the final decision (C.6.4.2 "the action and the final
 *    decision remain with the sending node") and becomes DRC master of a procedure
 *    that changes ITS transmit mode: the DRC_Request carries "the intended new transmit
 *    data rate for the DRC master" (C.6.4.2 (7)), "other" 0 (our Tx only) or 1 (our
 *    modem needs Tx = Rx, the change applies to both directions) (C.6.4.2 (8)).
 *    A master started from an advisory requests exactly the advised mode (C.6.4.2
 *    (12)); an advisory for a mode our modem lacks ("not equipped") is ignored.
 *    request_tx() starts a procedure directly (e.g. from the sender's own
 *    retransmission statistics, which C.6.4.2 explicitly allows).
 *  - A request with "other" 0/1 is answered by the DRC slave (C.6.4.2 (18)-(23)):
 *      mode in our capability set              -> accept, reason 0 (unconditional)
 *      ... and our modem needs Tx = Rx while
 *          the master's is independent (other 0) -> accept, reason 1 ((21))
 *      requested mode less robust than the one
 *          we currently advise (local conditions) -> refuse, reason 5 ((23): only for a
 *                                                   less robust mode; optional, config)
 *      mode not supported: a supported mode with
 *          that data rate exists                -> refuse, reason 3 (interleaving)
 *          a supported mode with that
 *          interleaving exists                  -> refuse, reason 2 (data rate)
 *          neither                              -> refuse, reason 4 (either)
 *
 * The handshake (C.6.4.2, Figure C-50, Table C-27), all messages in MANAGEMENT (type 6)
 * D_PDUs (C.6.4.2 (3)) under the stop-and-wait rules of C.3.9:
 *     master                                   slave
 *     DRC_Request(mode)            -->                          [1 outstanding]
 *                                  <--  DRC_Response accept|refuse  (ACK flag set: it
 *                                                                    also acks [1])
 *   accept:
 *     DT_ACK (valid 0, ACK 1)      -->
 *     master switches AFTER sending the DT_ACK ((28)); the DT_ACK itself goes out in
 *     the old mode (take_management() returns the mode to use)
 *                                       slave switches on receiving the DT_ACK ((29))
 *                                  <--  DRC_Response confirm, reason 0 (new mode)
 *     DT_ACK                       -->  ((32)); both return to the prior state ((33))
 *   accept with reason 1: the master replies DT_ACK and the change applies to both
 *     Tx and Rx at both ends (Note 1 / (25)). We never answer reason 1 with cancel.
 *   refuse (any reason):
 *     DRC_Response cancel (ACK 1)  -->  (Table C-27, Note 6 / (27))
 *                                  <--  DT_ACK, procedure ends, no mode changes
 * ((26),(30)) We always cancel; we do not re-request other parameters inside the same
 *     procedure (Notes 3/4 make that optional). Refusal reasons 2/3/4 describe the
 *     peer's modem, so for the rest of this connection we stop asking for a change of
 *     that parameter (Table C-8 note: "all attempts to change that modem parameter
 *     should stop"). After reason 5 the master waits for an updated advisory
 *     (Note 6): the refused mode is not requested again for advisory_holdoff seconds.
 *
 * Retries and timeouts (C.6.4.2 (9)-(11)): every message that needs an answer (request,
 * accept/refuse, cancel, confirm) is resent with the SAME management frame ID (C.3.9
 * (19),(20)) every ack_timeout, max_retries times (default 3, (11)). When they are
 * exhausted the procedure fails and, as (9) demands, the connection is declared lost
 * (event failed with connection_lost = true). We then reset to initial_mode: a new
 * connection starts at 300 bps short interleaving (C.6.4.1 (1)). The engine must pass
 * D_CONNECTION_LOST to the CAS and call reset() when the link is made again. The
 * master, after sending the DT_ACK that switches it, waits for the Confirm for
 * (max_retries + 2) * ack_timeout: the slave may need all its retries of the accept
 * (each repetition gets our DT_ACK again) and then of the confirm.
 *
 * Management frame IDs (C.3.9 (16)-(25)): TX ID starts at 0 and advances by one per
 * unique message; RX ID starts out of range. A received valid MANAGEMENT D_PDU whose
 * ID equals the RX ID is a repetition: it is not processed again, but our reply to it
 * (if any) is sent again, which is how a lost DT_ACK / response is recovered.
 *
 * Choices the annex leaves open (documented, deterministic):
 *  - A pure DT_ACK (valid 0, ACK 1) carries in its frame ID field the ID of the frame it
 *    acknowledges. Received acks are matched to the single outstanding message
 *    (stop-and-wait) whatever their ID, so other implementations interoperate; a copy
 *    delayed beyond ack_timeout could be taken for the ack of a later message.
 *  - Request collision (both ends master at once): the node with the lower address
 *    abandons its own request and answers the peer's; the higher one ignores the
 *    peer's request (without recording its frame ID). The abandoned change is tried
 *    again later (request_tx() is remembered; an advisory is simply repeated).
 *  - A DRC_Request with "other" 0/1 in a non-MANAGEMENT D_PDU, a request while we are
 *    busy in another phase, and responses that do not fit the state are ignored
 *    (counted); the peer's retries bring them back when we can handle them.
 *  - This object owns the MANAGEMENT stop-and-wait state (frame IDs, acks) of the
 *    connection: the engine routes every D_PDU from the peer to on_dpdu(). Valid
 *    MANAGEMENT messages of other EOW types are acknowledged with a DT_ACK (C.3.9 (2))
 *    and otherwise ignored (counted).
 *  - An advisory that arrives in a valid MANAGEMENT D_PDU is acknowledged (DT_ACK) and
 *    then handled like one in any other D_PDU; one in a pure-ack MANAGEMENT D_PDU
 *    (valid 0, C.3.9 (7)) is handled as well.
 *  - After the procedure the annex wants the former slave to send a D_PDU even with no
 *    data queued ((31),(34)); that is the engine's job (completed / failed events).
 *  - copies (default 1): how many identical copies of each MANAGEMENT D_PDU to send
 *    in one transmission (C.6.4.2 "should be repeated ... to (nearly) fill the
 *    interleave buffer"); the engine stamps each copy's EOT ((16),(17)).
 *  - Capability advertisement (EOW type 4) and the HDR change (type 7) are not used.
 *
 * Modes are (data_rate code of Table C-5, interleaving code of Table C-6).
 */
#ifndef HFSTACK_KERNELS_DL_RATE_CHANGE_H
#define HFSTACK_KERNELS_DL_RATE_CHANGE_H

#include "dpdu.h"
#include "modem_mode.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

struct rate_change_config {
    uint32_t own_address = 0;
    uint32_t peer_address = 0;
    // Modes our modem can transmit and receive.
    std::set<modem_mode> supported = default_supported_modes();
    // Our modem must use the same mode for Tx and Rx (Table C-7 other 1 / 3).
    bool tx_equals_rx = false;
    // Mode at connection start and after reset() (C.6.4.1 (1)).
    modem_mode initial_mode = initial_drc_mode;
    // Wait for the answer to each MANAGEMENT message before repeating it. It must
    // cover our burst, the peer's turnaround and its answer (about 25-30 s at 75 bps
    // with long interleaving, like cas_config::response_timeout).
    double ack_timeout = 30.0;
    // Repetitions after the first transmission before failure (C.6.4.2 (11)).
    unsigned max_retries = 3;
    // Identical copies of each MANAGEMENT D_PDU per transmission (C.6.4.2 (15)).
    unsigned copies = 1;
    // Start a master procedure when the peer advises a supported mode ((12)).
    bool follow_advisory = true;
    // As slave, refuse (reason 5) a request less robust than the mode we advise ((23)).
    bool refuse_less_robust_than_advised = true;
    // After a refusal with reason 5 the refused mode is not requested again for this
    // long (Note 6: wait for an updated advisory).
    double advisory_holdoff = 60.0;
    // Both modems recognise the mode of what they receive (autobaud, as STANAG 4539
    // receivers do): C.6.4.2's note lets a node then change its transmit mode on an
    // advisory at once, without the procedure, which a channel bad enough to need the
    // change often cannot carry (S5066-EP4 practice). The receive mode follows the
    // bursts (on_burst_mode). Procedures a peer starts are still answered.
    bool autobaud = false;
};

enum class drc_state : uint8_t {
    idle,
    master_requesting, // DRC_Request sent, waiting for DRC_Response
    master_confirming, // accepted: DT_ACK sent, switched, waiting for Confirm
    master_cancelling, // refused: cancel sent, waiting for DT_ACK
    slave_accepted,    // accept sent, waiting for DT_ACK (then switch)
    slave_confirming,  // switched, Confirm sent, waiting for DT_ACK
    slave_refused,     // refuse sent, waiting for the master's cancel
};
const char* to_string(drc_state s);

enum class drc_role : uint8_t { master, slave };

enum class drc_event_type : uint8_t {
    tx_mode_changed, // mode = new transmit mode
    rx_mode_changed, // mode = new receive mode
    completed,       // a procedure ended with the change made; mode = new mode
    failed,          // a procedure ended without it; see cause / reason
};

enum class drc_cause : uint8_t {
    none = 0,
    refused_by_peer,   // we were master; `reason` is the peer's Table C-8 reason
    refused_by_us,     // we were slave and refused; `reason` is ours
    cancelled_by_peer, // the master cancelled after our accept
    timeout,           // retries exhausted: connection lost (C.6.4.2 (9))
    collision,         // our request yielded to the peer's (lower address yields)
};

struct drc_event {
    drc_event_type type = drc_event_type::completed;
    modem_mode mode;
    drc_role role = drc_role::master;
    drc_cause cause = drc_cause::none;
    uint8_t reason = 0;           // Table C-8 reason for refusals
    bool connection_lost = false; // failed by timeout: send D_CONNECTION_LOST
};

// MANAGEMENT D_PDUs to send now, first in the next transmission (C.3.9 (3)). All of
// them must be sent in `mode`; tx_mode() may differ afterwards (the master switches
// right after its DT_ACK, C.6.4.2 (28)).
struct drc_transmission {
    std::vector<dpdu> dpdus;
    modem_mode mode;
};

struct rate_change_counters {
    uint64_t advisories_sent = 0; // take_eow() results
    uint64_t advisories_received = 0;
    uint64_t advisories_followed =
        0;                          // procedures started (autobaud: changes made) on one
    uint64_t requests_sent = 0;     // DRC_Request transmissions (repeats included)
    uint64_t requests_received = 0; // new (non-repeated) requests processed
    uint64_t accepts_sent = 0;
    uint64_t refusals_sent = 0;
    uint64_t cancels_sent = 0;
    uint64_t confirms_sent = 0;
    uint64_t dt_acks_sent = 0;
    uint64_t retransmissions = 0;       // timeouts that resent a message
    uint64_t duplicates_received = 0;   // repeated frame IDs (reply resent)
    uint64_t ignored = 0;               // messages that did not fit the state
    uint64_t unanswered_step_downs = 0; // autobaud: step_down_unanswered() changes
    uint64_t stale_advisories = 0;      // autobaud: less robust advice ignored after one
    uint64_t completed = 0;
    uint64_t failed = 0;
    uint64_t connection_losses = 0;
};

class rate_change
{
public:
    // Throws std::invalid_argument if initial_mode is not supported or a supported
    // mode is invalid.
    explicit rate_change(const rate_change_config& cfg = rate_change_config());

    // New connection (D_CONNECTION_MADE) or after a loss: initial modes, IDs reset,
    // any procedure dropped without events. Peer capability knowledge is forgotten;
    // the mode set by advise_rx() is kept.
    void reset(double now);

    // Receiver side: the mode we want the peer to transmit to us in (normally
    // rate_policy::recommended()). Advisories go out through take_eow() while it
    // differs from rx_mode() and no procedure runs.
    void advise_rx(const modem_mode& m, double now);
    // Sender side: change our transmit mode to m (DRC master). Returns false (and does
    // nothing) if m is our tx_mode, not supported by us, or needs a parameter the peer
    // said it cannot change. While a procedure runs, the request is remembered and
    // started when the state is idle again.
    bool request_tx(const modem_mode& m, double now);
    // Autobaud: our transmissions in tx_mode() went unanswered, so step down to the more
    // robust m at once; until the peer answers one of our transmissions again
    // (on_peer_answered), its advisories for a less robust mode than ours are ignored:
    // they can only rest on what it measured before. Returns false (nothing done)
    // without autobaud or if m is not more robust and supported.
    bool step_down_unanswered(const modem_mode& m, double now);
    // The peer answered our last transmission.
    void on_peer_answered();
    // Autobaud: the mode a burst from the peer came in (the modem's report).
    void on_burst_mode(const modem_mode& m);

    // Every D_PDU received from the peer (any type; the EOW of non-MANAGEMENT D_PDUs
    // may carry an advisory). D_PDUs from other sources are ignored.
    void on_dpdu(const dpdu& d, double now);
    void on_timer(double now);

    // Advisory EOW for the EOW field of the next D_PDU we send to the peer, if any:
    // (eow_type::drc_request, content). Returned on every call while the advised mode
    // differs from rx_mode(), we support it and no procedure runs (EOWs cost no air
    // time; the peer ignores them while busy).
    std::optional<std::pair<eow_type, uint8_t>> take_eow(double now);
    // MANAGEMENT D_PDUs to send (see drc_transmission). Addresses are filled, EOT is
    // left 0 for the engine.
    std::optional<drc_transmission> take_management(double now);
    std::vector<drc_event> take_events();
    // True when take_management() has MANAGEMENT D_PDUs to hand out.
    bool management_pending() const { return !out_.empty(); }

    modem_mode tx_mode() const { return tx_mode_; }
    modem_mode rx_mode() const { return rx_mode_; }
    drc_state state() const { return state_; }
    double next_deadline() const;
    const rate_change_counters& counters() const { return counters_; }
    // step_down_unanswered() changed our transmit mode and the peer has not answered
    // since (on_peer_answered()).
    bool awaiting_answer_after_step_down() const
    {
        return awaiting_answer_after_step_down_;
    }
    const rate_change_config& config() const { return cfg_; }

private:
    struct mgmt_msg {
        bool valid = false;
        bool ack = false;
        uint8_t frame_id = 0;
        eow_type eow = eow_type::none;
        uint8_t content = 0;
    };

    void on_management(const dpdu& d, double now);
    void on_advisory(const eow_rate_request& r, double now);
    void on_ack(double now);
    void on_request(const eow_rate_request& r, uint8_t id, double now);
    void on_response(const eow_rate_response& r, uint8_t id, double now);
    void answer_as_slave(const eow_rate_request& r, uint8_t id, double now);
    void lose_connection(double now);
    void start_master(const modem_mode& m, double now);
    void send_new(eow_type t, uint8_t content, bool ack, double timeout, double now);
    void send_dt_ack(uint8_t acked_id);
    void set_tx(const modem_mode& m);
    void set_rx(const modem_mode& m);
    void finish_ok(drc_role role, const modem_mode& m);
    void finish_failed(drc_role role, drc_cause cause, uint8_t reason);
    void go_idle(double now);
    uint8_t refusal_reason(const modem_mode& m) const;
    bool peer_allows(const modem_mode& m) const;
    void queue(const mgmt_msg& m);
    bool supported(const modem_mode& m) const { return cfg_.supported.count(m) > 0; }

    rate_change_config cfg_;
    drc_state state_ = drc_state::idle;
    bool awaiting_answer_after_step_down_ = false; // autobaud, see step_down_unanswered
    modem_mode tx_mode_, rx_mode_;
    // Procedure in progress.
    modem_mode proc_mode_;
    bool proc_both_ = false;    // change applies to Tx and Rx at both ends
    bool proc_advised_ = false; // master started from an advisory
    uint8_t proc_reason_ = 0;   // refusal reason (master or slave)
    mgmt_msg outstanding_;      // message awaiting an answer (resent on timeout)
    unsigned retries_ = 0;
    double deadline_ = std::numeric_limits<double>::infinity();
    // Master switch deferred until the DT_ACK has been handed to the engine.
    bool switch_after_take_ = false;
    // Frame IDs (C.3.9).
    uint8_t tx_id_ = 0;
    unsigned rx_id_ = 256;
    std::optional<mgmt_msg> last_reply_; // our reply to the frame rx_id_
    // Inputs.
    std::optional<modem_mode> advised_rx_;
    std::optional<modem_mode> pending_tx_;
    bool peer_fixed_rate_ = false, peer_fixed_interleaving_ = false;
    std::optional<modem_mode> holdoff_mode_;
    double holdoff_until_ = -std::numeric_limits<double>::infinity();
    // Outputs.
    std::vector<mgmt_msg> out_;
    std::vector<drc_event> events_;
    rate_change_counters counters_;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
