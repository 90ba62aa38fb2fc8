/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, hfstack, __VA_ARGS__)
/*
  This file contains placeholders for docstrings for the Python bindings.
  Do not edit! These were automatically extracted during the binding process
  and will be overwritten during the build process
 */

static const char* __doc_gr_hfstack_modem_emulator =
    R"doc(A link-level modem: the node's modem contract without DSP. Bursts on `in` go on the emulated air for the PHY timing model's air time; `status` posts tx_started/tx_finished and carrier_on/carrier_off; `out` delivers received bursts with the channel's bit errors. Emulators share a channel by connecting each one's air_out to every other's air_in (collisions, half duplex, carrier sense as in the simulator).)doc";

static const char* __doc_gr_hfstack_modem_emulator_make =
    R"doc(make(time_scale, profile, snr_db, ber, seed, options): profile "" (ber alone), "awgn" or a simulator fading profile; options "key_up_s=..;unkey_s=..;agc_settle_s=..;carrier_detect_s=..;rx_latency_s=..;propagation_s=..;half_duplex=0|1;collisions=0|1;deliver_per_block=0|1".)doc";

static const char* __doc_gr_hfstack_modem_emulator_counters =
    R"doc(Every counter as a dict {name: value}.)doc";
