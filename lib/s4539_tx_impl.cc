/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "phy/psk_modulator.h"
#include "phy/waveform_modes.h"

#include "modem_status.h"

#include "fault_guard.h"

#include <gnuradio/hfstack/metadata.h>
#include <gnuradio/hfstack/s4539_tx.h>
#include <gnuradio/io_signature.h>

#include <complex>
#include <deque>
#include <map>
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

// The mode for a rate and interleaver name; throws std::invalid_argument naming them.
phy::waveform_mode mode_for(long data_rate, const std::string& interleaver)
{
    if (data_rate > 0)
        if (auto m = phy::s4539_mode_for(unsigned(data_rate), interleaver))
            return *phy::waveform_mode_by_name(m->name);
    throw std::invalid_argument(
        "s4539_tx: no STANAG 4539 mode for data_rate " + std::to_string(data_rate) +
        " with interleaver \"" + interleaver +
        "\" (75-2400 bps: short or long; 4800: none, or an App C interleaver; 3200-9600: "
        "ultra_short, very_short, short, medium, long or very_long; 12800: none; "
        "STANAG 5069 modes by `mode` name, such as WN8/3kHz/L)");
}

// The mode of a name, 4539 or 5069; throws std::invalid_argument saying why not.
phy::waveform_mode mode_named(const std::string& name)
{
    if (auto m = phy::waveform_mode_by_name(name))
        return *m;
    throw std::invalid_argument("s4539_tx: mode \"" + name +
                                "\": " + phy::waveform_mode_problem(name));
}

phy::m110d_transmit_options s5069_options(const std::string& settings)
{
    phy::m110d_transmit_options o;
    const std::string why = phy::parse_m110d_transmit_settings(settings, o);
    if (!why.empty())
        throw std::invalid_argument("s4539_tx: s5069_settings \"" + settings +
                                    "\": " + why);
    return o;
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
                  double rolloff,
                  const std::string& mode,
                  const std::string& s5069_settings)
        : gr::sync_block(
              "s4539_tx",
              gr::io_signature::make(0, 0, 0),
              gr::io_signature::make(
                  1, 1, complex_output ? sizeof(std::complex<float>) : sizeof(float))),
          d_complex(complex_output),
          d_default(mode.empty() ? mode_for(data_rate, interleaver) : mode_named(mode)),
          d_s5069(s5069_options(s5069_settings)),
          d_sample_rate(sample_rate_hz),
          d_level(level),
          d_rolloff(rolloff)
    {
        // The default mode's modulator now: a sample rate that cannot carry its
        // bandwidth, or a bad level or roll-off, is refused at construction.
        const std::string why = modulator_problem(d_default);
        if (!why.empty())
            throw std::invalid_argument(why);
        message_port_register_in(port_in);
        message_port_register_out(port_ptt);
        message_port_register_out(port_status);
        set_msg_handler(port_in, [this](const pmt::pmt_t& msg) {
            d_faults(d_logger, "in", [&] { handle_pdu(msg); });
        });
    }

    size_t queued() const override
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        return d_queue.size();
    }

    int work(int noutput_items,
             gr_vector_const_void_star&,
             gr_vector_void_star& output_items) override
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
                add_item_tag(
                    0, nitems_written(0) + uint64_t(produced), tag_sob, pmt::PMT_T);
                message_port_pub(port_ptt, pmt::PMT_T);
                post_status("tx_started");
            }
            const size_t length =
                d_complex ? d_current.baseband.size() : d_current.audio.size();
            const size_t n =
                std::min(size_t(noutput_items - produced), length - d_position);
            if (d_complex)
                std::copy_n(d_current.baseband.begin() + long(d_position),
                            n,
                            static_cast<std::complex<float>*>(output_items[0]) +
                                produced);
            else
                std::copy_n(d_current.audio.begin() + long(d_position),
                            n,
                            static_cast<float*>(output_items[0]) + produced);
            d_position += n;
            produced += int(n);
            if (d_position == length) {
                add_item_tag(
                    0, nitems_written(0) + uint64_t(produced) - 1, tag_eob, pmt::PMT_T);
                d_active = false;
                d_current = {};
                message_port_pub(port_ptt, pmt::PMT_F);
                post_status("tx_finished");
            }
        }
        // Silence between transmissions keeps the stream going.
        const size_t item = d_complex ? sizeof(std::complex<float>) : sizeof(float);
        std::fill_n(static_cast<char*>(output_items[0]) + size_t(produced) * item,
                    size_t(noutput_items - produced) * item,
                    char(0));
        return noutput_items;
    }

private:
    fault_guard d_faults;
    struct transmission {
        std::vector<float> audio;
        std::vector<std::complex<float>> baseband;
    };

    // One modulator per bandwidth, for both standards: STANAG 5069 at 3 kHz is 2400 Bd
    // on 1800 Hz too; wider, 800 Bd per kHz on 300 Hz + BW / 2 (m110d_modulator_config),
    // shaped straight at the block's rate (any rational multiple of the symbol rate:
    // 96 kHz for 48 kHz's 38400 Bd is 5/2). "" or why the mode cannot go out here.
    std::string modulator_problem(const phy::waveform_mode& mode)
    {
        const unsigned bw = phy::waveform_bandwidth_khz(mode);
        if (d_modulators.count(bw))
            return {};
        const std::string why =
            phy::waveform_sample_rate_problem(mode, d_sample_rate, d_complex, d_rolloff);
        if (!why.empty())
            return "s4539_tx: sample_rate_hz: " + why;
        phy::psk_modulator_config c;
        c.sample_rate = d_sample_rate;
        c.symbol_rate = phy::waveform_symbol_rate(mode);
        c.carrier_hz = phy::waveform_carrier_hz(mode);
        c.rms = d_level;
        c.rolloff = d_rolloff;
        try {
            d_modulators.emplace(bw, phy::psk_modulator(c));
        } catch (const std::invalid_argument& e) {
            return std::string("s4539_tx: ") + e.what() + " (" + mode.name + ")";
        }
        return {};
    }

    void post_status(const char* event)
    {
        message_port_pub(port_status, modem_status(event));
    }

    void handle_pdu(const pmt::pmt_t& msg)
    {
        if (!pmt::is_pair(msg) || !pmt::is_u8vector(pmt::cdr(msg))) {
            d_logger->error("s4539_tx: input is not a PDU (dict, u8vector); dropped");
            return;
        }
        const pmt::pmt_t meta =
            pmt::is_dict(pmt::car(msg)) ? pmt::car(msg) : pmt::make_dict();
        phy::waveform_mode mode = d_default;
        const pmt::pmt_t named = pmt::dict_ref(meta, metadata::mode(), pmt::PMT_NIL);
        const pmt::pmt_t rate = pmt::dict_ref(meta, metadata::data_rate(), pmt::PMT_NIL);
        const pmt::pmt_t il = pmt::dict_ref(meta, metadata::interleaver(), pmt::PMT_NIL);
        if (!pmt::is_null(named)) {
            // A mode by name, of either standard, takes precedence over data_rate and
            // interleaver.
            if (!pmt::is_symbol(named)) {
                reject("s4539_tx: PDU metadata `mode` is not a symbol (a name such as "
                       "2400S or "
                       "WN8/3kHz/L); transmission dropped");
                return;
            }
            try {
                mode = mode_named(pmt::symbol_to_string(named));
            } catch (const std::invalid_argument& e) {
                reject(std::string(e.what()) + "; transmission dropped");
                return;
            }
        } else if (!pmt::is_null(rate) || !pmt::is_null(il)) {
            const long bps =
                pmt::is_integer(rate) ? pmt::to_long(rate) : long(d_default.user_bps);
            std::string interleaver =
                pmt::is_symbol(il) ? pmt::symbol_to_string(il) : d_default.interleaver;
            // A rate without an interleaver: 4800 and 12800 bps take "none" when the
            // default has an interleaver only the other family uses.
            if (pmt::is_null(il) &&
                !phy::s4539_mode_for(unsigned(std::max(bps, 0L)), interleaver))
                interleaver = "none";
            try {
                mode = mode_for(bps, interleaver);
            } catch (const std::invalid_argument& e) {
                reject(std::string(e.what()) + "; transmission dropped");
                return;
            }
        }
        size_t n = 0;
        const uint8_t* bytes = pmt::u8vector_elements(pmt::cdr(msg), n);
        // A transmission is built whole before it starts: bound it (STANAG 5066 sends at
        // most 127.5 s).
        if (double(n) * 8.0 / double(mode.user_bps) > max_transmission_s) {
            reject("s4539_tx: a PDU of " + std::to_string(n) + " bytes would last over " +
                   std::to_string(int(max_transmission_s)) + " s at " + mode.name +
                   "; transmission dropped");
            return;
        }
        const std::string why = modulator_problem(mode);
        if (!why.empty()) {
            reject(why + "; transmission dropped");
            return;
        }
        const phy::psk_modulator& modulator =
            d_modulators.at(phy::waveform_bandwidth_khz(mode));
        const std::vector<std::complex<float>> points =
            phy::waveform_transmit_points(mode, bytes, n, d_s5069);
        transmission t;
        if (d_complex)
            t.baseband = modulator.baseband(points);
        else
            t.audio = modulator.audio(points);
        std::lock_guard<std::mutex> lock(d_mutex);
        d_queue.push_back(std::move(t));
    }

    void reject(const std::string& why)
    {
        d_logger->error("{}", why);
        message_port_pub(
            port_status,
            pmt::dict_add(modem_status("tx_error"), metadata::reason(), pmt::mp(why)));
    }

    const bool d_complex;
    const phy::waveform_mode d_default;
    const phy::m110d_transmit_options
        d_s5069; // readings and constraint length of 5069 modes
    const double d_sample_rate, d_level, d_rolloff;
    // By bandwidth (kHz); filled by the message handler only (the default's in the
    // constructor).
    std::map<unsigned, phy::psk_modulator> d_modulators;
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
                              double rolloff,
                              const std::string& mode,
                              const std::string& s5069_settings)
{
    return gnuradio::make_block_sptr<s4539_tx_impl>(sample_rate_hz,
                                                    complex_output,
                                                    data_rate,
                                                    interleaver,
                                                    level,
                                                    rolloff,
                                                    mode,
                                                    s5069_settings);
}

} // namespace hfstack
} // namespace gr
