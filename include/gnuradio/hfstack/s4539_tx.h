/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HFSTACK_S4539_TX_H
#define INCLUDED_HFSTACK_S4539_TX_H

#include <gnuradio/hfstack/api.h>
#include <gnuradio/sync_block.h>

#include <string>

namespace gr {
namespace hfstack {

/*!
 * \brief STANAG 4539 and STANAG 5069 transmitter: PDUs in, a continuous sample stream
 * out. The MIL-STD-188-110A/B serial-tone modes 75-2400 bps (interleaver "short" or
 * "long") and 4800 bps uncoded ("none"); the App C modes 3200, 4800, 6400, 8000, 9600
 * bps (interleaver "ultra_short", "very_short", "short", "medium", "long", "very_long")
 * and 12800 bps uncoded ("none"); and the STANAG 5069 (MIL-STD-188-110D Appendix D)
 * modes at every bandwidth of Table D-I (3-48 kHz), WN0-WN13 with interleaver US, S, M
 * or L, by name ("WN8/3kHz/L", "WN12/48kHz/US").
 * \ingroup hfstack
 *
 * Each PDU on `in` is one transmission. Its metadata may name the mode with `mode`
 * (a symbol: any mode's name, "2400S", "9600VL", "WN8/3kHz/L"), which takes precedence,
 * or with `data_rate` and `interleaver` (STANAG 4539 modes); what it leaves out comes
 * from the block's defaults (a rate alone that the default interleaver does not fit,
 * such as 12800, takes "none").
 * The output carries silence between transmissions (so an audio device or a USRP sees
 * a steady stream); each transmission is tagged tx_sob on its first sample and
 * tx_eob on its last. Port `ptt` posts #t when a transmission's first sample leaves
 * and #f after its last; `status` posts dicts with `event` "tx_started" /
 * "tx_finished" (and `time`, seconds since the epoch) at the same moments, as the node
 * expects on its phy_status port. A PDU asking for a mode the modem lacks, or one
 * that would last over 600 s, is logged and dropped with a "tx_error" status (and
 * `reason`).
 *
 * Output: real audio on an 1800 Hz carrier (rms `level`), or complex baseband; a
 * STANAG 5069 mode above 3 kHz at 800 Bd per kHz, its real audio on 300 Hz + BW / 2.
 * The sample rate must hold the mode's band, (1 + rolloff) symbol rates: complex, that
 * or more (51840 Hz for 48 kHz with RRC 0.35; 96000 Hz, 5/2 samples a symbol, shaped
 * straight at it); real, twice the carrier plus that, and the band must stay above
 * 0 Hz on the carrier (with RRC 0.35 up to 6 kHz: 13080 Hz or more there). The default
 * mode's is checked at construction (std::invalid_argument naming the mode, its bandwidth
 * and the least rate), a PDU's when it comes (tx_error).
 */
class HFSTACK_API s4539_tx : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<s4539_tx> sptr;

    /*!
     * \param sample_rate_hz output rate (8000, 9600, 48000 or another rational multiple
     * of the symbol rate: 2400 Bd at 3 kHz, 800 Bd per kHz above) \param complex_output
     * complex baseband instead of real audio \param data_rate default user data rate, bps
     * \param interleaver default interleaver (see above)
     * \param level output rms (real audio: 0.25 leaves room for the peaks)
     * \param rolloff root-raised-cosine roll-off
     * \param mode default mode by name, either standard ("WN8/3kHz/L", "9600L");
     *        when given, data_rate and interleaver are not used
     * \param s5069_settings STANAG 5069 modes only: NAME=VALUE words separated by
     *        spaces or commas, the readings of the constants the spec leaves uncertain
     *        (scrambler=a|b, tail_biting=full_register|block_start,
     *        pn_alignment=per_symbol|continuous, wid_parity=checksum|caption_d2_zero,
     *        preamble_walsh=scaled|capped;
     *        the first of each the default) and constraint_length=7|9
     *
     * Throws std::invalid_argument (ValueError in Python) for a default mode the modem
     * lacks or a bad setting, naming it and why.
     */
    static sptr make(double sample_rate_hz,
                     bool complex_output = false,
                     int data_rate = 2400,
                     const std::string& interleaver = "short",
                     double level = 0.25,
                     double rolloff = 0.35,
                     const std::string& mode = "",
                     const std::string& s5069_settings = "");

    //! Transmissions waiting (not yet started).
    virtual size_t queued() const = 0;
};

} // namespace hfstack
} // namespace gr

#endif /* INCLUDED_HFSTACK_S4539_TX_H */
