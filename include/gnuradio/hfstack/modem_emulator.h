/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_MODEM_EMULATOR_H
#define INCLUDED_HFSTACK_MODEM_EMULATOR_H

#include <gnuradio/block.h>
#include <gnuradio/hfstack/api.h>

#include <cstdint>
#include <map>
#include <string>

namespace gr {
namespace hfstack {

/*!
 * \brief A link-level modem: the node's modem contract without DSP, for testing
 * applications against full nodes at any speed.
 * \ingroup hfstack
 *
 * Bursts on `in` (the node's to_phy) go on the emulated air for the PHY timing model's
 * air time of their mode (preamble, data, interleaver flush) after the radio's key-up
 * time; `status` posts tx_started / tx_finished at their start and end, and
 * carrier_on / carrier_off for what this modem hears; `out` delivers what it received
 * (with `data_rate`, `interleaver`, `snr_db`) after the receive latency, with the
 * channel's bit errors: as a streaming modem does, the bytes each interleaver block
 * completes come after that block (`burst_continues` true on all but a burst's last
 * PDU; option deliver_per_block=0: one PDU after the burst). Time runs at `time_scale`
 * protocol seconds per real second, as the node's does.
 *
 * Emulators share a channel through their `air_out` and `air_in` ports: connect each
 * one's air_out to the air_in of every other. Each hears the others' bursts as its
 * receiver would: overlapping receptions destroy each other (collision), its own
 * transmission destroys what it would receive meanwhile (half duplex), and a burst's
 * bytes get the errors of the path from its transmitter (profile, snr_db, ber; one
 * error process per path, seeded from `seed`). These are the simulator's rules
 * (hfstack-sim), so results compare. Emulators share a channel within one process
 * (one clock); an announcement whose start or air time no emulator here could have
 * made is refused and counted in bad_inputs. `status` and `out` are separate ports: a
 * carrier_off and a delivery due at the same instant may reach the node in either
 * order.
 */
class HFSTACK_API modem_emulator : virtual public gr::block
{
public:
    typedef std::shared_ptr<modem_emulator> sptr;

    /*!
     * \param time_scale protocol seconds per real second (> 0; every emulator on one
     *        channel must use the same)
     * \param profile error model of the bursts this modem receives: "" (ber alone),
     *        "awgn" or a fading profile of the simulator ("good", "moderate", "poor",
     *        ...), whose BER follows the burst's mode at snr_db
     * \param snr_db mean SNR of the received bursts, dB in 3 kHz (reported with them)
     * \param ber independent bit errors on top of the profile (0..1)
     * \param seed seed of the error processes
     * \param options radio timing "name=value;...": key_up_s, unkey_s, agc_settle_s,
     *        carrier_detect_s, rx_latency_s, propagation_s (seconds), half_duplex,
     *        collisions and deliver_per_block (0 or 1); defaults as the simulator's radio
     */
    static sptr make(double time_scale = 1.0,
                     const std::string& profile = "",
                     double snr_db = 20.0,
                     double ber = 0.0,
                     uint64_t seed = 1,
                     const std::string& options = "");

    //! Every counter by name: transmissions, air_time_s, bursts_heard,
    //! bursts_delivered, collisions, lost_outage, lost_acquisition, bits_flipped,
    //! bad_inputs.
    virtual std::map<std::string, double> counters() const = 0;
};

} // namespace hfstack
} // namespace gr

#endif /* INCLUDED_HFSTACK_MODEM_EMULATOR_H */
