/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "phy/m110a_transmitter.h"
#include "phy/psk_modulator.h"

#include "modem_status.h"

#include <gnuradio/hfstack/metadata.h>
#include <gnuradio/hfstack/s4539_tx.h>
#include <gnuradio/io_signature.h>

#include <complex>
#include <deque>
#include <mutex>
#include <stdexcept>

namespace gr {
namespace hfstack {

namespace {

const pmt::pmt_t port_in = pmt::mp("in");
const pmt::pmt_t port_ptt = pmt::mp("ptt");
const pmt::pmt_t port_status = pmt::mp("status");
const pmt::pmt_t tag_sob = pmt::mp("tx_sob");
const pmt::pmt_t tag_eob = pmt::mp("tx_eob");
constexpr double max_transmission_s = 600.0;

phy::m110a_interleaver parse_interleaver(const std::string& name)
{
    if (name == "short")
        return phy::m110a_interleaver::short_;
    if (name == "long")
        return phy::m110a_interleaver::long_;
    if (name == "none")
        return phy::m110a_interleaver::zero;
    throw std::invalid_argument("s4539_tx: interleaver must be \"short\", \"long\" or \"none\", not \"" +
                                name + "\"");
}

// The 110A mode for a rate and interleaver, or nullptr.
const phy::m110a_waveform* waveform_for(long data_rate, phy::m110a_interleaver il)
{
    for (const phy::m110a_waveform& w : phy::m110a_waveforms())
        if (long(w.user_bps) == data_rate && w.interleaver == il)
            return &w;
    return nullptr;
}

} // namespace

class s4539_tx_impl : public s4539_tx
{
public:
    s4539_tx_impl(double sample_rate_hz,
                  bool complex_output,
                  int data_rate,
                  const std::string& interleaver,
                  double level,
                  double rolloff)
        : gr::sync_block("s4539_tx",
                         gr::io_signature::make(0, 0, 0),
                         gr::io_signature::make(
                             1, 1, complex_output ? sizeof(std::complex<float>) : sizeof(float))),
          d_complex(complex_output),
          d_default(waveform_for(data_rate, parse_interleaver(interleaver))),
          d_modulator(modulator_config(sample_rate_hz, level, rolloff))
    {
        if (!d_default)
            throw std::invalid_argument("s4539_tx: no 110A mode for data_rate " + std::to_string(data_rate) +
                                        " with interleaver \"" + interleaver + "\"");
        message_port_register_in(port_in);
        message_port_register_out(port_ptt);
        message_port_register_out(port_status);
        set_msg_handler(port_in, [this](const pmt::pmt_t& msg) { handle_pdu(msg); });
    }

    size_t queued() const override
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        return d_queue.size();
    }

    int work(int noutput_items, gr_vector_const_void_star&, gr_vector_void_star& output_items) override
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        int produced = 0;
        while (produced < noutput_items) {
            if (!d_active) {
                if (d_queue.empty())
                    break;
                d_current = std::move(d_queue.front());
                d_queue.pop_front();
                d_position = 0;
                d_active = true;
                add_item_tag(0, nitems_written(0) + uint64_t(produced), tag_sob, pmt::PMT_T);
                message_port_pub(port_ptt, pmt::PMT_T);
                post_status("tx_started");
            }
            const size_t length = d_complex ? d_current.baseband.size() : d_current.audio.size();
            const size_t n = std::min(size_t(noutput_items - produced), length - d_position);
            if (d_complex)
                std::copy_n(d_current.baseband.begin() + long(d_position), n,
                            static_cast<std::complex<float>*>(output_items[0]) + produced);
            else
                std::copy_n(d_current.audio.begin() + long(d_position), n,
                            static_cast<float*>(output_items[0]) + produced);
            d_position += n;
            produced += int(n);
            if (d_position == length) {
                add_item_tag(0, nitems_written(0) + uint64_t(produced) - 1, tag_eob, pmt::PMT_T);
                d_active = false;
                d_current = {};
                message_port_pub(port_ptt, pmt::PMT_F);
                post_status("tx_finished");
            }
        }
        // Silence between transmissions keeps the stream going.
        const size_t item = d_complex ? sizeof(std::complex<float>) : sizeof(float);
        std::fill_n(static_cast<char*>(output_items[0]) + size_t(produced) * item,
                    size_t(noutput_items - produced) * item, char(0));
        return noutput_items;
    }

private:
    struct transmission {
        std::vector<float> audio;
        std::vector<std::complex<float>> baseband;
    };

    static phy::psk_modulator_config modulator_config(double fs, double level, double rolloff)
    {
        phy::psk_modulator_config c;
        c.sample_rate = fs;
        c.rms = level;
        c.rolloff = rolloff;
        return c;
    }

    void post_status(const char* event) { message_port_pub(port_status, modem_status(event)); }

    void handle_pdu(const pmt::pmt_t& msg)
    {
        if (!pmt::is_pair(msg) || !pmt::is_u8vector(pmt::cdr(msg))) {
            d_logger->error("s4539_tx: input is not a PDU (dict, u8vector); dropped");
            return;
        }
        const pmt::pmt_t meta = pmt::is_dict(pmt::car(msg)) ? pmt::car(msg) : pmt::make_dict();
        const phy::m110a_waveform* mode = d_default;
        const pmt::pmt_t rate = pmt::dict_ref(meta, metadata::data_rate(), pmt::PMT_NIL);
        const pmt::pmt_t il = pmt::dict_ref(meta, metadata::interleaver(), pmt::PMT_NIL);
        if (!pmt::is_null(rate) || !pmt::is_null(il)) {
            const long bps = pmt::is_integer(rate) ? pmt::to_long(rate) : long(d_default->user_bps);
            phy::m110a_interleaver interleaver = d_default->interleaver;
            try {
                if (pmt::is_symbol(il))
                    interleaver = parse_interleaver(pmt::symbol_to_string(il));
            } catch (const std::invalid_argument& e) {
                reject(e.what());
                return;
            }
            if (bps == 4800)
                interleaver = phy::m110a_interleaver::zero; // 4800 bps is never interleaved
            mode = waveform_for(bps, interleaver);
            if (!mode) {
                reject("s4539_tx: no 110A mode for data_rate " + std::to_string(bps) +
                       " with that interleaver; transmission dropped");
                return;
            }
        }
        size_t n = 0;
        const uint8_t* bytes = pmt::u8vector_elements(pmt::cdr(msg), n);
        // A transmission is built whole before it starts: bound it (STANAG 5066 sends at
        // most 127.5 s).
        if (double(n) * 8.0 / double(mode->user_bps) > max_transmission_s) {
            reject("s4539_tx: a PDU of " + std::to_string(n) + " bytes would last over " +
                   std::to_string(int(max_transmission_s)) + " s at " + mode->name +
                   "; transmission dropped");
            return;
        }
        const std::vector<uint8_t> symbols = phy::m110a_transmit_symbols(*mode, bytes, n);
        transmission t;
        if (d_complex)
            t.baseband = d_modulator.baseband(symbols);
        else
            t.audio = d_modulator.audio(symbols);
        std::lock_guard<std::mutex> lock(d_mutex);
        d_queue.push_back(std::move(t));
    }

    void reject(const std::string& why)
    {
        d_logger->error("{}", why);
        message_port_pub(port_status, pmt::dict_add(modem_status("tx_error"), metadata::reason(), pmt::mp(why)));
    }

    const bool d_complex;
    const phy::m110a_waveform* d_default;
    const phy::psk_modulator d_modulator;
    mutable std::mutex d_mutex;
    std::deque<transmission> d_queue;
    transmission d_current;
    size_t d_position = 0;
    bool d_active = false;
};

s4539_tx::sptr s4539_tx::make(double sample_rate_hz,
                              bool complex_output,
                              int data_rate,
                              const std::string& interleaver,
                              double level,
                              double rolloff)
{
    return gnuradio::make_block_sptr<s4539_tx_impl>(sample_rate_hz, complex_output, data_rate,
                                                    interleaver, level, rolloff);
}

} // namespace hfstack
} // namespace gr
