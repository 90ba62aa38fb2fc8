/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The STANAG 5066 node: subnet interface (Annex A), channel access (Annex B, CAS-1) and
 * data transfer with transmission control (Annex C, Annex K) composed into one sans-IO
 * engine. No clock, socket or thread inside: every input carries `now` (seconds, real or
 * virtual); after each input the driver collects take_actions() and calls on_timer() at
 * next_deadline() (or at the next input, whichever comes first).
 *
 *   clients  --on_sis / on_client_*-->  node_engine  --transmissions-->  modem
 *   clients  <--client messages-------              <--on_burst / on_phy_status-- modem
 *
 * Drivers: the `node` block (real time), tests and the simulator (virtual time).
 * docs/node-design.md explains the choices; node_config documents every default. */
#ifndef HFSTACK_KERNELS_DL_NODE_ENGINE_H
#define HFSTACK_KERNELS_DL_NODE_ENGINE_H

#include "arq.h"
#include "carrier_sense.h"
#include "cas.h"
#include "client_supervision.h"
#include "deframer.h"
#include "hard_link.h"
#include "node_journal.h"
#include "non_arq.h"
#include "rate_change.h"
#include "rate_policy.h"
#include "sap_table.h"
#include "transmission.h"
#include "updu_queue.h"
#include "wideband_modes.h"

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace dl {

// Air time model of a mode on the STANAG 4539 waveform (phy/s4539_modes.h): serial tone
// up to 2400 bps, Appendix C from 3200 bps (4800 bps too, 4800U being serial tone), any
// App C interleaver; no interleaving is Z (serial tone) or US where the modem has no
// uncoded mode. node_config::timing overrides it (the simulator's wideband modes).
phy::waveform_timing default_waveform_timing(const modem_mode& mode);
// The mode a STANAG 4539 name means, as the modem names them ("2400S", "9600VS",
// "12800U"; letters in any case, the old "4800N" too); std::invalid_argument with
// phy::s4539_mode_problem's line for any other name, 2400Z included.
modem_mode node_mode_by_name(const std::string& name);


// The back-off seed a node derives from its address when channel_access.seed is 0, with
// `salt` mixed in (0: the address alone). Nodes on one channel then draw apart.
uint32_t derived_backoff_seed(uint32_t address, uint64_t salt = 0);

struct node_config {
    // Own node address (28 bits) and the group addresses (bit 28 set) it receives
    // besides broadcast 31.255.255.255.
    uint32_t address = 1;
    std::vector<uint32_t> groups;

    // Subnet interface (Annex A).
    uint16_t mtu =
        default_mtu; // told to clients in S_BIND_ACCEPTED; larger U_PDUs are rejected
    bool broadcast_only = false; // no ARQ, no links: non-ARQ (broadcast) data only
    // Differs from one start of the node to the next (the node block sets it from the
    // clock, in seconds): non-ARQ C_PDU IDs start at it (mod 4096), so a restarted node's
    // first link request is not taken by a peer for a copy of one from its former life,
    // which the peer suppresses for a minute or more.
    uint32_t incarnation = 0;
    // Where the node block keeps this node's journal (node_journal.h): what its ARQ
    // receivers hold, so that after a restart it goes on with each peer where it stopped
    // and delivers every C_PDU once. Empty: no journal (a restart then agrees new windows
    // with each peer by a FULL RESET, and the peers send again what they had in flight).
    // The engine never touches the file: it emits records (node_actions::journal).
    std::string state_dir;
    // Flow control thresholds and the total queue cap. flow_off_bytes 0 (the default):
    // two of the longest transmissions at `mode`, at least 64 KiB, so the queue never
    // runs dry inside a transmission at high rates; flow_on_bytes 0: half of that.
    updu_queue_limits queue = [] {
        updu_queue_limits q;
        q.flow_off_bytes = 0;
        q.flow_on_bytes = 0;
        return q;
    }();
    client_supervision_config supervision;
    hard_link_config hard_link;
    // Bytes of the U_PDU returned in DATA DELIVERY CONFIRM / FAIL S_PDUs (the peer
    // matches them to its request; Annex A allows all or part of the U_PDU).
    size_t confirm_prefix_bytes = 16;

    // Channel access (Annex B). own_address and broadcast_only are taken from above.
    // Up to 16 links at once (cas.max_nonexclusive_links), served in turn on a network
    // (serve_in_turn_s); a node that has heard no network keeps one.
    // cas.yield_link_after_s (see cas.h) is 120 s here: a hub called by a waiting
    // station gives up a link that has had two minutes; and a link of ours that has
    // been up that long is released (reason higher-priority link request pending) when
    // another node we have data for has waited as long. Neither happens on a channel
    // with one peer.
    cas_config cas = [] {
        cas_config c;
        c.yield_link_after_s = 120.0;
        c.max_nonexclusive_links = 16;
        return c;
    }();
    // The node keeps to the rules of a network (channel_access.max_exchange_s and
    // contended_burst_s, one link request at a time, answers that do not collide)
    // while it has heard D_PDUs from two or more other nodes within this long, or has
    // ARQ data queued for a node it has no link with while a second node has data or a
    // link. A two-node link never does.
    double network_memory_s = 3600.0;
    // Keep to those rules from the start, as if two other stations had been heard: a
    // station configured for a net knows it shares the channel before it hears anyone,
    // and may hear no one if the first calls all collide. Off: only what is heard counts.
    bool network_assumed = false;
    // Keep to those rules also for network_memory_s after a peer's data came in two
    // bursts in a row each cut between half and all of channel_access.network_burst_s:
    // the peer keeps a net's rules while it has more to send. A station whose call went
    // out with every other's at a net's first instant heard no collision and, linked
    // first, sent bursts of max_transmission_s while the others waited to call; its hub
    // knew of the net (it had data for stations without a link) and said so by the
    // length of its bursts.
    bool network_from_peer_bursts = false;
    // A station that wants the channel while two others exchange without a gap (it
    // heard both, has waited its longest back-off, and the channel has been busy for
    // longer than a pair keeping the network rules keeps it: channel_access.
    // max_exchange_s plus the longest burst) calls at the end of a burst it hears,
    // within the turnaround before the answer (half the time, drawn per burst). The
    // answering station hears its carrier before keying up and defers, both hear its
    // call whole, and having heard a third station they keep to the network rules.
    // Never on a channel where only one other station is heard.
    bool call_into_turnaround = true;
    // On a network, a node with links to several peers (a hub) serves them in turn:
    // each of its bursts carries ARQ data for one peer alone, the same peer for up to
    // this long while it has work, then the next (by address, round robin); the burst
    // that turns away acknowledges what the last peer sent without sending it more.
    // A peer that called us or sent us data gets its turns too, with a burst that
    // acknowledges alone (its turn to send). A peer whose last burst to us carried
    // data for another node alone has turned to it: we neither answer it at once nor
    // contend to send it data until it turns to us again, so its links stay up and
    // nobody collides over whose turn it is. Links waiting their turn count as active
    // (cas.idle_timeout). It needs cas.max_nonexclusive_links above 1 (16 by
    // default). From the hub-and-spoke measurements in docs/networks.md: a spoke's
    // share of an hour is a whole number of turns, more or less, and 45 s puts more
    // rounds in it than 60 s (the worst flow at N = 8 nearer an equal share) while the
    // changes of turn cost the spokes' own traffic less than 30 s. +infinity: off (a
    // burst serves every linked peer, and links are kept only while they are used).
    double serve_in_turn_s = 45.0;
    // Serving in turn, a peer we have data for and no link with, while the linked ones
    // are served, is owed its share of that time (the time over the number of peers
    // waiting, linked or not), up to this long; once linked, each of its turns is
    // longer by up to serve_in_turn_s of it until paid. A spoke whose link came up
    // late (calls lost among the others') otherwise ends the hour a turn short of the
    // others. 0: off (docs/networks.md).
    double serve_in_turn_catch_up_s = 0.0;
    // Serving in turn, a round of every peer waiting for a turn (linked with work, or
    // with data queued and no link yet) lasts about this long at most: each turn is
    // serve_in_turn_s or this over the number of those peers, whichever is shorter (a
    // turn is still at least one burst each way). With fifteen spokes an hour
    // otherwise holds two rounds of turns of about 118 s, and the turns a spoke linked
    // late misses decide the worst flow. 600 s changes nothing up to ten peers waiting
    // (docs/networks.md: N = 16 fairer but at 9600S moderate 20 dB). +infinity: off.
    double serve_in_turn_round_s = 600.0;
    // Serving in turn, a turn given by an acknowledgement alone that went unanswered
    // is given again this many times before the peer gets no more turns until we hear
    // from it: an unanswered one was most often lost in a fade (the peer, which has
    // data, waits for its turn and would wait for good).
    unsigned bare_turn_retries = 3;
    // Serving in turn, a peer whose turns by acknowledgement went unanswered
    // bare_turn_retries times gets one again this long after the last, until we hear
    // from it. Without it (+infinity) a spoke that lost those turns in fades waited
    // for its turn, and the hub for the spoke, for the rest of the hour.
    double bare_turn_retry_after_s = 420.0;
    // On a network, a burst lasts at most this over twice the number of other stations
    // heard (within network_memory_s), never less than 10 s, and serving in turn a
    // turn is then one burst each way: a hub's round of its spokes takes about this
    // long, so an hour holds enough rounds that one turn more or less no longer
    // decides the worst flow (fifteen spokes at 30 s bursts: four rounds an hour). It
    // binds only where it is shorter than channel_access.network_burst_s: at 420 s and
    // 30 s bursts, from eight other stations heard (sixteen stations: 14 s bursts).
    // +infinity: off.
    double network_round_s = 420.0;
    // network_round_s counts one burst per station heard, not two, where data do not
    // flow both ways through us (we have no ARQ data queued, or no peer has data for
    // us): spokes that only report to a hub that only acknowledges send one data burst
    // a turn, so their round is as long with bursts twice as long (sixteen stations:
    // 28 s bursts, and 5-11 % more delivered).
    bool network_round_by_directions = true;
    // On a net a link request repeated after an unanswered one carries our FULL RESET
    // again where the windows were never agreed, as the first request did.
    bool reset_with_repeated_request = true;
    // A link that comes up forgets that the peer had turned away from us (served
    // others) before it: a spoke that heard its hub serve other spokes before its own
    // link came up otherwise takes the hub's accept, sent beside another spoke's
    // acknowledgement, as the hub still serving that spoke, and waits for a turn by
    // acknowledgement alone.
    bool turned_away_cleared_at_link_up = true;
    // On a network, a caller whose PHYSICAL LINK ACCEPTED came in a burst that asks
    // another node for an answer too (accepts its call as well) answers after a
    // back-off, not at once: every caller accepted in the burst would follow it at once
    // with its data, and the bursts would meet. Until a burst with data for us: then it
    // serves us.
    bool accepted_beside_others_contends = true;
    // On a network, a burst that asks a node for a link and nothing of any other node
    // leaves it the channel to answer (turnaround, a short answer and
    // response_margin_s), unless it is heard first. Else our next burst, to another
    // node, meets the answer, and the link is up at the called node's end only: it
    // takes our later requests for repeats and its answers meet our bursts again.
    bool link_request_holds_channel = true;
    // Serving in turn, turns given and taken by acknowledgements alone: a turn to a
    // peer we have no data for is our acknowledgement of its data alone (the others'
    // acknowledgements wait for their turns), and a burst of acknowledgements alone to
    // another node, from a peer that serves us in turn, is its turn to that node: we
    // wait for ours rather than contend when it falls silent. Off, with traffic from
    // the spokes alone, the hub acknowledged two spokes in one burst, neither could
    // tell whose turn it was, every spoke contended in the gap, and their data bursts
    // met (docs/networks.md).
    bool turns_by_acknowledgement = true;
    // Serving in turn, a node that called us and whose link is up but not yet in use
    // (no FULL RESET from it: our acceptance went beside another peer's turn, and it
    // waits for its own) is served in turn: its turn is our FULL RESET alone. Without
    // it such a link gets no turn and breaks as idle, and the caller calls again. Off
    // by default: over 27 back-off seeds from the spokes alone it starves fewer flows at
    // sixteen stations, but three traced seeds of the tests lose a flow with it
    // (docs/networks.md).
    bool unsynced_callers_served = false;
    // With turns_by_acknowledgement, a turn given by an acknowledgement alone holds the
    // channel for the peer's answer this long after our burst (it answers at once: two
    // turnarounds and the detection of its carrier), not the whole answer time: where
    // the acknowledgement was lost in a fade the net waited 10.2 s at 9600S (the others
    // wait through another's turn). From the spokes-to-hub tables (docs/networks.md).
    double ack_turn_answer_wait_s = 2.0;
    // With turns_by_acknowledgement, a turn given by an acknowledgement alone that
    // nothing answers by then is given again at once (up to bare_turn_retries times,
    // then to the next peer): the peer may not have heard it, or we its answer. Off,
    // the net waits for the peer's own answer time-out (about 30 s at 9600S) after such
    // a turn lost in a fade. Off by default: with traffic from the spokes alone it
    // raised the aggregate at N = 4-8 on a fading channel but cost the worst flow and
    // fairness, most at N = 16, where it fills the gaps nodes waiting for a link call
    // in (docs/networks.md).
    bool ack_turn_repeated = false;
    // Serving in turn, the next turn goes to the peer served least, not simply the next
    // in address order. Served: the ARQ data that got through to it or from it, in
    // seconds at their bit rate, in the direction with data waiting that got least. The
    // spoke whose link came up first is served alone until the others' calls get
    // through, and a spoke whose bursts to us were lost in fades got less than its
    // turns: with round robin both ended the hour as they began it. A peer's lag behind
    // the most served counts up to this much, so one linked late or back after an
    // absence takes no more than this in turns ahead of the others. 0: round robin.
    double serve_in_turn_lag_max_s = 120.0;
    // Serving the peer served least, at least this share of the time of the turns it
    // got counts as served (in each direction with data, half a turn each way), whatever
    // got through: with 0, a spoke on a poor path (6 dB, moderate fading, beside clear
    // ones) took turn after turn to catch up, more air than the others together, and
    // the net's aggregate fell to 49 % of round robin's; 0.25 gives 61 % and leaves the
    // hub-and-spoke and spokes-to-hub tables as they are; 0.5 gives 77 % but lowers
    // the worst flow at 9600S on a fading channel below round robin's
    // (docs/networks.md).
    double serve_in_turn_service_floor = 0.25;
    // Serving the peer served least, peers within this many turns' service of the least
    // served count as served alike and go in round robin, so that small exchanges (a
    // datagram relayed between two spokes) do not reorder the turns. Half a turn let a
    // spoke end the hour a turn's data short of the others; a quarter evens the hour
    // out more, and less than that left more flows empty at N = 16 (docs/networks.md).
    double serve_in_turn_alike_turns = 0.25;
    // Serving in turn, a carrier in our gap at a change of turn that brought no burst
    // was callers whose calls met (our linked peers wait for their turns): callers we
    // have never read. Until network_memory_s after it, they count as a station heard
    // without a link, and the gap's first slot is left to callers
    // (channel_access.turn_change_backoff_min_s). Without it, two spokes whose calls
    // met each other, and then each our own gap burst in the slot it drew, were never
    // heard and delivered nothing in the hour (docs/networks.md).
    bool turn_change_floor_for_unheard_callers = true;
    // Serving in turn, our burst that ended a gap at a change of turn and was answered
    // by no one counts as the gap used by callers we have not read (with
    // turn_change_floor_for_unheard_callers, their first slot is left to them): a
    // caller that drew our slot met our burst unheard (we were on the air), and with
    // the exchange bound stretched by unused gaps (channel_access.max_exchange_stretch_s)
    // it was left a gap only every eight minutes, each one shared with our burst; at
    // N = 8 such a spoke delivered nothing in the hour (docs/networks.md).
    bool unanswered_gap_burst_ends_stretch = true;
    // Serving in turn, channel_access.max_exchange_s bounds the turns, not the bursts
    // within one: a peer serving in turn that has turned to us is answered at once, and
    // the first burst of a new turn (sent after the contention the bound asks for) is
    // not held to channel_access.contended_burst_s. So the served peer's answer to a
    // 127 s burst is as long as the burst, and the waiting stations' gap comes at every
    // change of turn. With it too: a burst to us alone from a peer that has served
    // others is our turn, and several link slots are used only once the network is
    // heard. Off: the bound counts every burst (docs/networks.md).
    bool exchange_bound_per_turn = true;
    // Serving in turn, a turn's time counts from the first burst that serves the peer,
    // not from when the turn was chosen: a burst asking another node for a link serves
    // no one (so the answer owed is the link's), and while the links come up a request
    // and the new peer's answer could take a turn's whole time, the peer served nothing
    // until the next round. The clock starts one turn length after the turn began at
    // the latest. Off: over ten seeds no fairer at eight or sixteen stations, and the
    // worst flow lower at 9600S on a fading channel (docs/networks.md).
    bool serve_in_turn_from_service = false;
    // Serving in turn, a turn is counted in our bursts that serve the peer: as many as
    // its length holds at the longest burst on the net (60 s at 30 s bursts: two each
    // way), not time. Counted in time, a turn of 60 s held two exchanges of 59.4 s or,
    // after a contended change of turn (30 s first burst) or one 0.6 s longer burst,
    // one: the peer served had half the turn by a fraction of a second.
    bool serve_in_turn_by_bursts = false;
    // Serving in turn, a turn with nothing of ours for the served peer but its
    // acknowledgements goes on while another peer's data wait only after a burst of
    // the served peer's data at least this long: one shorter
    // held all it had then (a datagram, a message), and what it sends next waits for
    // its next turn, as the others' data otherwise would (a datagram relayed through
    // us waited out the turn of the spoke that sent it, which went on sending small
    // ones). From the hub test bed and the traffic files in docs/networks.md ("IP
    // through a hub"). 0: after any burst.
    double sender_turn_min_burst_s = 10.0;
    // Serving the peer served least, a peer we have nothing for whose last burst of
    // data was shorter than sender_turn_min_burst_s (it sent all it had) keeps its
    // place in the round: being served less does not put it ahead of peers we have
    // data for. Put ahead, it was given turns of acknowledgements it had nothing to
    // answer, and a datagram relayed through us to another spoke waited out two of
    // them (the relayed chat of docs/networks.md, 90th percentile 45 s against 6.7 s).
    bool short_senders_keep_their_place = true;
    // After a link could not be made, wait this long before asking again while data for
    // that node is still queued.
    // Wait after a failed link (the peer answered none of our requests) before asking
    // again; doubled for each further failure in a row, up to link_retry_max_s. A peer
    // that has failed is only probed beside the links to live peers, never instead.
    double link_retry_s = 20.0;
    double link_retry_max_s = 600.0;

    // Data transfer (Annex C).
    // ARQ window: 1..128, or 1..32768 with large_windows (a link to a peer without
    // S5066-EP5 uses at most 128).
    size_t arq_window = arq_max_window;
    // S5066-EP5 large windows: advertise Long Frame Sequence Numbers in our CAS-1 link
    // requests (a spare bit an Edition 3 peer ignores) and use them, with a window of
    // arq_window, on links whose peer advertises them too. Off: Edition 3 on the wire.
    // On, the FULL RESET sent with a link request (and data_with_link_request's data)
    // is in the long form until the peer answers: an Edition 3 peer ignores it, and
    // gets the reset again in Edition 3 form once the link is up.
    bool large_windows = false;
    // ARQ segment bytes (1..1023); 0 = per link, from its measured frame losses
    // (segment_size_policy), packed to fill the longest transmission.
    size_t segment_size = 0;
    // With segment_size 0: new data a link may carry per transmission, seconds of air,
    // until the link's frame losses are known (see segment_size_policy.h).
    double segment_probe_s = 20.0;
    // With rate adaptation and autobaud: after a transmission the peer left unanswered
    // stepped our transmit mode down (rate_policy_config::unanswered_step_down), each
    // transmission to it carries at most this many seconds of ARQ data until it answers.
    // The unanswered one was often sent whole into a drop in SNR, and the mode stepped
    // to is a guess: a short probe lets the peer's answer, with its SNR report, choose
    // before another long transmission goes out in a mode the channel may not carry
    // (docs/node-design.md, data rate). 0: off.
    double unanswered_probe_s = 20.0;
    // Data with the link request: on first contact, ARQ data ride in the burst that
    // carries our PHYSICAL LINK REQUEST and FULL RESET (our windows reset as we send
    // it), saving the link set-up's round trip. An extension of STANAG 5066 Ed. 3, off
    // by default: a peer holding no windows for us takes the data, any other drops them
    // (they follow after the reset); a peer that answers them with a WARNING gets none
    // again. Both ends of a link should set it.
    bool data_with_link_request = false;
    // With data_with_link_request: a first-contact link request waits this long after
    // the data for the peer began to come, so an application's writes ride together.
    double link_request_hold_s = 0.1;
    // With segment_size 0: the bit error rate a link is assumed to have until measured.
    double segment_prior_ber = 1e-5;
    // With segment_size 0: until a link's own acknowledgements have measured its
    // losses, its segments are sized from the ARQ data D_PDUs heard from the peer (to
    // any node) whose segment CRC failed, taking the path as reciprocal. On a network a
    // station hears its peer long before their first exchange, so the first burst of
    // data is cut for the channel instead of for segment_prior_ber: at 9600S on a
    // fading channel segments cut too long are lost again and again, and hold the
    // window's lower edge for rounds. Nothing changes on the air.
    bool segment_from_heard_frames = true;
    // On a link whose frames are being lost (as its acks measure, or until they do as
    // heard from the peer: segment_from_heard_frames), the ack that
    // rides in the first data D_PDU of a burst goes once more in an ACK-ONLY D_PDU after
    // the data (Annex C allows any number of ACK-ONLY D_PDUs; the peer takes the copy as
    // the same ack). A lost ack costs the whole burst it answers.
    bool arq_ack_copy_on_lossy_link = true;
    // On a link losing frames (as for arq_ack_copy_on_lossy_link), every burst of ARQ
    // data to a peer carries an ack of what we hold from it, also when nothing came
    // since the last one: that ack may have been lost, and serving in turn the next
    // chance to repeat it is a round away.
    bool arq_ack_with_every_data_burst = true;
    // With segment_size 0: the bit error rate the segments of a probe burst are sized
    // for (at least) when more data follow it (see segment_size_policy.h).
    double segment_probe_ber = 3e-5;
    // Non-ARQ segment bytes; 0 = segment_size if set, else 1023 (a lost segment loses its
    // whole C_PDU whatever the size, so fewer headers only help).
    size_t non_arq_segment_size = 0;
    // A non-ARQ request (a group destination turns ARQ into non-ARQ) asking delivery
    // confirmation: S_UNIDATA_REQUEST_CONFIRM once its last copy is sent (true), or
    // S_UNIDATA_REQUEST_REJECTED reason 5 at once, nothing sent (false).
    bool confirm_non_arq_when_sent = true;
    // U_PDUs still queued when their client closes its connection or unbinds: sent
    // anyway, answered to nobody (false), or discarded and counted (true).
    bool discard_on_client_close = false;
    unsigned non_arq_repeats = 0; // extra copies of non-ARQ D_PDUs (a client's minimum
                                  // retransmissions raises it for its own U_PDUs)
    double non_arq_window_margin_s = 10.0; // added to every reception window sent
    // Consecutive unanswered ARQ transmissions after which the link is considered lost:
    // it is broken and made again when the node answers; data stays queued.
    unsigned max_response_timeouts = 6;

    // Transmission control (Annex C, Annex K).
    double max_transmission_s = default_max_transmission_s; // longest burst, <= 127.5
    // Radio and modem turnaround: the node keys up no sooner than this after the channel
    // (its own burst or a received one) went quiet, so a peer is listening again.
    double turnaround_s = 0.5;
    // Added to the expected answer time before a transmission counts as unanswered.
    double response_margin_s = 4.0;
    // Listen-before-transmit. Its seed (0 by default) is derived from the node address,
    // so nodes sharing a channel draw different back-offs.
    // On a network (network_memory_s), from the hub-and-spoke measurements in
    // docs/networks.md: an ARQ exchange that has held the channel for two minutes lets
    // the stations waiting for it contend before it goes on (max_exchange_s), and a
    // burst sent after a back-off lasts at most 20 s (contended_burst_s), so a
    // collision of two stations that drew the same slot costs little; and no burst
    // lasts more than 30 s (network_burst_s), so a hub goes round its spokes several
    // times an hour (at N = 8 and 2400S, 127 s bursts gave about two rounds, and the
    // first minutes' link set-up decided the worst flow). Serving in turn, the gap
    // left at a change of turn is a back-off of at most 15 s (turn_change_backoff_max_s):
    // a draw over the whole 3-30 s left 7 % of the hour idle at N = 8 with no station
    // waiting, and a waiting station still wins one gap in five. Once five gaps in a row
    // went unused the exchange bound doubles, up to 480 s (max_exchange_stretch_s): with
    // every spoke linked the gaps are idle air. And while a station heard has no link
    // with us, the gap's first slot is left to callers (turn_change_backoff_min_s): with
    // the bound stretched, a caller that drew it met our own gap burst there, unheard,
    // gap after gap.
    carrier_sense_config channel_access = [] {
        carrier_sense_config c;
        c.seed = 0;
        c.max_exchange_s = 120.0;
        c.contended_burst_s = 20.0;
        c.network_burst_s = 30.0;
        c.turn_change_backoff_max_s = 15.0;
        c.waiting_caller_backoff_max_s = 15.0;
        c.turn_change_backoff_min_s = 6.0;
        c.max_exchange_stretch_s = 480.0;
        return c;
    }();
    // Fixed waveform mode, and the initial mode of every link when rate adaptation runs.
    modem_mode mode{ rate_2400, interleaving_short };
    // 0: `mode` and every mode below are STANAG 4539's. Else the STANAG 5069 bandwidth
    // (kHz) they are WNs of (dl/wideband_modes.h); the `mode` option sets it from a name
    // such as WN12/48kHz/US.
    unsigned s5069_bandwidth_khz = 0;
    // EOW data rate change (Annex C.6.4) driven by the SNR of received bursts.
    bool rate_adaptation = false;
    rate_policy_config rate_policy;
    rate_change_config rate_change; // addresses and initial mode are filled per link
    // With rate adaptation and autobaud: a transmission that carries no data (acks,
    // advice) goes in this mode where our transmit mode is less robust. It costs a few
    // tenths of a second, and a lost answer costs its sender a timeout and a step down
    // of a transmit mode that was fine. Empty: answers go in the transmit mode.
    std::optional<modem_mode> answer_mode = modem_mode{ rate_600, interleaving_short };
    // Air time of a burst in a mode (waveform_timing_of when empty).
    std::function<phy::waveform_timing(const modem_mode&)> timing;
};

// Configuration by name, for Python, GRC and the command line: the same names as the
// fields above (nested ones as `cas.idle_timeout`, `queue.flow_off_bytes`, ...).
struct node_option {
    std::string name;
    std::string default_value;
    std::string help;
};
std::vector<node_option> node_options();
// Sets option `name` from text. Throws std::invalid_argument naming the option and the
// accepted values when the name is unknown or the value does not parse or is out of
// range.
void set_node_option(node_config& config,
                     const std::string& name,
                     const std::string& value);
// "name=value;name=value" (also ',' or newlines as separators; blanks ignored).
void set_node_options(node_config& config, const std::string& assignments);
// The splitting set_node_options does, for other option sets: set(name, value) for each
// item, both trimmed; an item without '=' throws std::invalid_argument naming `what`.
void for_each_assignment(
    const std::string& assignments,
    const std::string& what,
    const std::function<void(const std::string&, const std::string&)>& set);
// Values as set_node_option reads them; std::invalid_argument naming the option.
double parse_option_number(const std::string& name,
                           const std::string& value); // >= 0, or inf
bool parse_option_bool(const std::string& name, const std::string& value);
// The current value of an option as text (same forms set_node_option accepts).
std::string get_node_option(const node_config& config, const std::string& name);

struct burst_info {
    double snr_db = std::nan(""); // modem's SNR estimate, NaN if none
    double snr_db_recent =
        std::nan("");               // the same over the burst's last 20 s, NaN if none
    std::optional<modem_mode> mode; // mode the burst was received in, if known
    bool bytes_bad = false;         // the modem flagged errors it could not correct
    // More decoded bytes of this burst follow in later calls: a streaming modem hands
    // on each interleaver block as it decodes it. The node answers a burst only after
    // its last piece (the sender is still on the air until then).
    bool burst_continues = false;
};

enum class phy_event : uint8_t { tx_started, tx_finished, carrier_on, carrier_off };
const char* to_string(phy_event e);

// One transmission for the modem: D_PDUs back to back, in `mode`, starting now.
struct node_transmission {
    bytes burst;
    modem_mode mode;
    double start = 0;               // `now` of the call that produced it
    double air_time_s = 0;          // expected duration under the timing model
    std::vector<size_t> dpdu_sizes; // D_PDU boundaries inside burst, in order
};

// What the driver must do after an input. Order: client messages, then disconnects
// (a disconnected client's S_UNBIND_INDICATION is among the messages), then
// transmissions.
struct node_actions {
    std::vector<client_message> to_clients;
    std::vector<client_disconnect> disconnects;
    std::vector<node_transmission> transmissions;
    // With state_dir: journal records to append (journal_rewrite: the whole journal, to
    // replace the file). They must be written before anything of these or later actions
    // goes to a client or a modem, and be durable (fsync) before that.
    bytes journal;
    bool journal_rewrite = false;
    bool empty() const
    {
        return to_clients.empty() && disconnects.empty() && transmissions.empty() &&
               journal.empty() && !journal_rewrite;
    }
};

// Figures a field engineer asks for. Sub-layer details stay in the pieces' counters.
struct node_counters {
    // Air interface.
    uint64_t transmissions = 0;
    uint64_t bytes_sent = 0;
    uint64_t dpdus_sent = 0;
    double air_time_s = 0;
    uint64_t bursts_received = 0;
    uint64_t bytes_received = 0;
    uint64_t dpdus_received = 0; // good header, addressed to us (or a group of ours)
    uint64_t dpdus_not_for_us = 0;
    uint64_t header_crc_errors = 0;
    uint64_t segment_crc_errors = 0;
    uint64_t junk_bytes = 0;
    // ARQ.
    // Segment bytes of new good data D_PDUs, counted as they arrive: what the link
    // carried, before reassembly holds them for in-order delivery.
    uint64_t arq_bytes_received = 0;
    uint64_t arq_segments_sent = 0; // first transmissions
    uint64_t arq_retransmissions = 0;
    uint64_t response_timeouts = 0;
    uint64_t resets_sent = 0; // RESET/WIN-RESYNC requests
    uint64_t resets_received = 0;
    uint64_t warnings_sent = 0;
    uint64_t warnings_received = 0;
    // Rate adaptation: SNR reports of bursts with no readable header, given to the peer
    // whose answer was awaited (or, awaiting none, the one linked peer), and the repeated
    // acks sent because such a report advised a more robust mode.
    uint64_t snr_reports_unattributed = 0;
    uint64_t answers_unattributed = 0;
    // Rate adaptation: what changed our recommendation of the peers' transmit modes
    // (rate_policy's counters, summed over peers), our own transmit mode's steps down
    // on unanswered transmissions, and our transmissions cut short as probes after one.
    uint64_t rate_step_ups = 0;
    uint64_t rate_step_downs_snr = 0;
    uint64_t rate_step_downs_held = 0; // SNR step downs a working burst held off
    uint64_t rate_step_downs_retx = 0;
    uint64_t rate_step_downs_unanswered = 0;
    uint64_t rate_probes = 0;
    uint64_t data_with_link_request = 0; // bursts whose link request carried ARQ data
    uint64_t dpdus_dropped_unsynced = 0; // data with a link request whose reset was lost
    // Links.
    uint64_t link_setups = 0;
    uint64_t link_failures = 0;
    uint64_t links_down = 0;
    // Links we released for another peer that had waited (cas.yield_link_after_s), or
    // broke to accept a waiting node's request.
    uint64_t links_yielded = 0;
    // Answers that contended for the channel because the exchange had reached
    // channel_access.max_exchange_s on a network.
    uint64_t exchanges_yielded = 0;
    // Turns begun, serving linked peers one at a time (serve_in_turn_s).
    uint64_t turns_served = 0;
    // Carriers heard while we were not on the air that brought no burst: two other
    // stations' bursts destroyed each other, so others share the channel.
    uint64_t collisions_heard = 0;
    // Calls into a pair's turnaround (call_into_turnaround).
    uint64_t turnaround_calls = 0;
    // Clients and U_PDUs.
    uint64_t clients_connected = 0; // connected now (a snapshot)
    uint64_t clients_accepted = 0;  // connections since the start
    uint64_t updus_accepted = 0;
    uint64_t updus_rejected = 0; // every S_(EXPEDITED_)UNIDATA_REQUEST_REJECTED
    uint64_t ttl_expired = 0;
    // TTL passed while the peer might already hold the U_PDU (every segment sent, the
    // acknowledgement outstanding): kept until the peer's answer decides.
    uint64_t ttl_awaiting_verdict = 0;
    uint64_t updus_discarded =
        0; // queued by a client that left (discard_on_client_close)
    uint64_t updus_confirmed = 0;
    uint64_t updus_delivered = 0;     // indications to clients
    uint64_t updus_undeliverable = 0; // received for a SAP nobody holds
    uint64_t non_arq_discarded = 0;   // incomplete non-ARQ C_PDUs not delivered
    // With state_dir: deliveries from ARQ owed again after a restart (never reported
    // written to the client before the process ended), and those then handed out again.
    uint64_t deliveries_owed = 0;
    uint64_t deliveries_repeated = 0;
    // Deliveries given up from the journal's list of owed ones, its limit reached (a
    // transport that never reports its writes).
    uint64_t deliveries_unsettled_dropped = 0;
    // Snapshots.
    uint64_t queued_updus = 0;
    uint64_t queued_bytes = 0;
    uint64_t links_up = 0;
};
// One peer's link, for status displays: CAS state and the modes each way.
struct link_status {
    uint32_t peer = 0;
    cas_link_state state = cas_link_state::idle;
    modem_mode tx_mode; // what we send to the peer in
    modem_mode rx_mode; // what the peer sends to us in
};

// (name, value) of every counter, for the stats port and logs.
std::vector<std::pair<std::string, double>> counter_list(const node_counters& c);

class node_engine
{
public:
    // Throws std::invalid_argument naming the field for an invalid configuration.
    explicit node_engine(node_config config = node_config());
    ~node_engine();
    node_engine(const node_engine&) = delete;
    node_engine& operator=(const node_engine&) = delete;

    // Clients. A client that sends a primitive without on_client_connected is
    // registered then (in-process clients need no connection events).
    // reports_written: the transport tells on_delivery_settled when each indication
    // that carries a delivery number has reached the client's socket (sis_server does).
    void on_client_connected(uint32_t client, double now, bool reports_written = false);
    void on_client_closed(uint32_t client, double now);
    // With state_dir, ARQ deliveries to a client that reports its writes carry a
    // delivery number (client_message::delivery); the journal keeps each until this
    // says it reached the client's socket (written) or the client was gone. What is
    // unsettled when the process ends is handed again, once, after the restart, to the
    // client that binds its SAP.
    void on_delivery_settled(uint64_t delivery, bool written, double now);
    void on_sis(uint32_t client, const sis_primitive& p, double now);
    // A frame from the client that could not be decoded (`why` says what was wrong).
    // fatal: the transport gave up on the connection; it is told and dropped at once.
    void
    on_client_invalid(uint32_t client, const std::string& why, bool fatal, double now);

    // Modem.
    void on_burst(const uint8_t* data, size_t size, const burst_info& info, double now);
    void on_burst(const bytes& b, const burst_info& info, double now)
    {
        on_burst(b.data(), b.size(), info, now);
    }
    void on_phy_status(phy_event e, double now);

    void on_timer(double now);
    // Before any other input: what the journal of state_dir held (the file's bytes).
    // Each peer it names is taken as synchronised, its receivers as they were; our own
    // transmit windows restart at 0, and the peer's receiver follows them by a
    // RESET/WIN-RESYNC (RESET-RX-WIN command) at the next link. Returns the number of
    // peers restored; throws journal_error (node_journal.h) for a journal it cannot use.
    size_t restore_journal(const bytes& journal, double now);
    node_actions take_actions();
    // When on_timer must run next (+inf if nothing is pending). May lie in the past.
    double next_deadline() const;

    node_counters counters() const;
    const node_config& config() const { return d_cfg; }
    uint32_t address() const { return d_cfg.address; }
    // State for tests and status displays.
    cas_link_state link_state(uint32_t peer) const;
    std::vector<uint32_t> bound_clients() const;
    std::vector<sap_binding> bindings() const;
    // Every peer the node keeps state for, by address.
    std::vector<link_status> links() const;
    bool transmitting(double now) const;
    // Whether the modem hears another station's carrier now (the carrier sense).
    bool channel_busy() const;

private:
    struct impl;
    node_config d_cfg;
    std::unique_ptr<impl> d;
};

} // namespace dl
} // namespace hfstack
} // namespace gr

#endif
