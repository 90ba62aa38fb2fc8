/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_S4539_RX_H
#define INCLUDED_HFSTACK_S4539_RX_H

#include <gnuradio/block.h>
#include <gnuradio/hfstack/api.h>

#include <cstdint>
#include <string>

namespace gr {
namespace hfstack {

/*!
 * \brief STANAG 4539 and STANAG 5069 receiver, every mode detected automatically
 * (auto-baud): the MIL-STD-188-110A/B serial-tone modes 75-2400 bps and 4800 bps
 * uncoded, and the App C modes 3200-9600 bps and 12800 bps uncoded; with `listen` "5069"
 * or "both", the STANAG 5069 (MIL-STD-188-110D Appendix D) modes at 3 kHz, WN0-WN13;
 * with listen "5069" and s5069_settings bandwidth_khz=6..48, those of that bandwidth
 * (Table D-I; WN0-WN12, up to 240000 bps at 48 kHz).
 * Samples in, one PDU per burst out.
 * \ingroup hfstack
 *
 * Port `out` posts each received burst as a PDU (or, deliver_per_block, in pieces as
 * its interleaver blocks are decoded): the decoded user bytes, metadata `mode` (its
 * name, such as "2400S" or "WN8/3kHz/L"), `data_rate` (user bps),
 * `interleaver` (as s4539_tx names it; STANAG 5069: "ultra_short", "short", "medium",
 * "long"), `snr_db` (dB in 3 kHz; in the bandwidth listened on; the burst's mean),
 * `snr_db_recent` (the same over the burst's last 20 s), `frequency_offset_hz`,
 * `bytes_bad` (true when the burst was cut before its end-of-message: the bytes may
 * be wrong) and `time` (seconds since the epoch when the burst was posted). Port
 * `status` posts `event` "carrier_on" when a preamble is detected and "carrier_off"
 * when its burst ends, as the node expects on phy_status.
 *
 * Port `burst_info` posts, for each burst, a dict of the same metadata plus `bytes`
 * (user bytes decoded), without the bytes: for displays of SNR and offset over time.
 *
 * Input: real audio with the signal on an 1800 Hz carrier (300 Hz + BW / 2 above
 * 3 kHz), or complex baseband, resampled to 4 samples a symbol; a rate that cannot hold
 * the bandwidth's RRC-0.35 band (complex: under 1.35 symbol rates; real: under twice
 * the carrier plus 1.35 symbol rates, or a band reaching below 0 Hz, as above 6 kHz)
 * is refused at construction, naming both.
 *
 * Optional output 0 (gr_complex): the equalised data symbols of every burst as they
 * are decided (descrambled onto the mode's constellation at the probes' scale: PSK on
 * the unit circle, QAM's outer points at amplitude 1; probes and preamble left out;
 * 75 bps and STANAG 5069 WN0: the Walsh chips), for a constellation display. The
 * output signature is 0..1 streams, so flowgraphs without it are unchanged, and the
 * symbols are only collected while the output is connected. It carries no fixed rate
 * (at most 2400 symbols per second of input, none between bursts); when a slow
 * consumer lets more than a few seconds of symbols wait, the receiver stops taking
 * input until they drain.
 */
class HFSTACK_API s4539_rx : virtual public gr::block
{
public:
    typedef std::shared_ptr<s4539_rx> sptr;

    /*!
     * \param sample_rate_hz input rate (8000, 9600, 48000 or any rate from 4 kHz up that
     *        holds the bandwidth: 96000 or 250000 for 48 kHz, say)
     * \param complex_input complex baseband instead of real audio
     * \param deliver_per_block post the bytes each interleaver block completes as soon
     *        as it is decoded, as a streaming modem does (metadata `burst_continues`
     *        true on all but a burst's last PDU; `burst_info` once, at its end); what a
     *        node wants, so a long burst's first data need not wait for its end
     * \param listen "4539" (110A/B and App C), "5069" (App D) or "both": the
     *        receivers of both standards search the same samples, and whichever finds a
     *        burst delivers it (each costs its own processing time)
     * \param s5069_settings STANAG 5069 readings of the constants the spec leaves
     *        uncertain, NAME=VALUE words separated by spaces or commas
     *        (scrambler=a|b, tail_biting=full_register|block_start,
     *        pn_alignment=per_symbol|continuous, wid_parity=checksum|caption_d2_zero;
     *        the first of each the default; the sender's must match), preamble=find
     *        to find the PN alignment and WID parity from each preamble,
     *        scrambler=auto and tail_biting=auto to try both readings of the data
     *        (the receiver keeps the one they fit), and
     *        frequency_loop=second_order to follow a swept carrier offset (D.6.5's
     *        3.5 Hz/s; costs errors on fading channels), preamble_walsh=scaled|capped
     *        (the preamble's Walsh symbols above 24 kHz) and bandwidth_khz=3..48 (the
     *        bandwidth listened on; above 3 with listen "5069" only)
     * \param threads threads the STANAG 5069 receiver may use, 1 or 2 (more counts as
     *        2): with 2, each interleaver block is decoded on a thread of its own while
     *        the next block's frames are equalised, and the search, the equaliser's
     *        factorisations and long blocks' decoding are shared (docs/modem-design.md,
     *        "Two threads"). The bursts, bytes, SNR and symbols are the same as with 1;
     *        a burst is posted at the first call after its last block's decoding has
     *        finished (within the samples of one more interleaver block at the latest),
     *        and the bursts still decoding when the flowgraph stops are posted then.
     *
     * Throws std::invalid_argument (ValueError in Python) for a bad listen, setting or
     * thread count, naming it and why.
     */
    static sptr make(double sample_rate_hz,
                     bool complex_input = false,
                     bool deliver_per_block = false,
                     const std::string& listen = "4539",
                     const std::string& s5069_settings = "",
                     int threads = 1);

    //! Bursts posted so far.
    virtual uint64_t bursts() const = 0;
    //! True while a burst is being received.
    virtual bool carrier_detected() const = 0;
};

} // namespace hfstack
} // namespace gr

#endif /* INCLUDED_HFSTACK_S4539_RX_H */
