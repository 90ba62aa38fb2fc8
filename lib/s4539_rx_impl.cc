/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "phy/m110a_receiver.h"
#include "phy/m110c_receiver.h"
#include "phy/m110d_receiver.h"
#include "phy/serial_tone_frontend.h"
#include "phy/waveform_modes.h"

#include "modem_status.h"

#include "fault_guard.h"

#include <gnuradio/hfstack/metadata.h>
#include <gnuradio/hfstack/s4539_rx.h>
#include <gnuradio/io_signature.h>

#include <algorithm>
#include <atomic>
#include <complex>
#include <deque>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gr {
namespace hfstack {

namespace {

const pmt::pmt_t port_out = pmt::mp("out");
const pmt::pmt_t port_status = pmt::mp("status");
const pmt::pmt_t port_burst_info = pmt::mp("burst_info");

// Symbols waiting for a slow consumer before the receiver stops taking input: four
// seconds' worth.
constexpr double max_waiting_s = 4;

// Which receivers listen: STANAG 4539's (110A/B and App C), STANAG 5069's (App D at
// 3 kHz), or both on the same samples.
struct listening {
    bool s4539 = true;
    bool s5069 = false;
};

listening listening_for(const std::string& listen)
{
    if (listen == "4539")
        return { true, false };
    if (listen == "5069")
        return { false, true };
    if (listen == "both")
        return { true, true };
    throw std::invalid_argument(
        "s4539_rx: listen is \"4539\", \"5069\" or \"both\", not \"" + listen + "\"");
}

phy::m110d_receiver_config wide_config(bool deliver_per_block,
                                       const std::string& settings,
                                       const listening& l,
                                       int threads)
{
    if (threads < 1)
        throw std::invalid_argument("s4539_rx: threads is 1 or more, not " +
                                    std::to_string(threads));
    phy::m110d_receiver_config c;
    c.deliver_per_block = deliver_per_block;
    c.threads = unsigned(std::min(threads, 2));
    const std::string why = phy::parse_m110d_receive_settings(settings, c);
    if (!why.empty())
        throw std::invalid_argument("s4539_rx: s5069_settings \"" + settings +
                                    "\": " + why);
    // STANAG 4539 is 3 kHz wide: a wider STANAG 5069 bandwidth is listened for alone.
    if (c.bandwidth_khz != 3 && l.s4539)
        throw std::invalid_argument(
            "s4539_rx: s5069_settings bandwidth_khz=" + std::to_string(c.bandwidth_khz) +
            " needs listen \"5069\" (STANAG 4539's modes are 3 kHz wide)");
    return c;
}

// The front end at the bandwidth listened on: 4 samples per symbol out; the sample rate
// checked against the bandwidth, the reason naming both.
phy::serial_tone_frontend_config
frontend_config(double fs, bool complex_input, unsigned bw_khz)
{
    phy::serial_tone_frontend_config c;
    c.sample_rate = fs;
    c.real_input = !complex_input;
    if (bw_khz != 3) {
        const phy::m110d_mode any =
            *phy::m110d_mode_for(bw_khz, 6, phy::m110d_interleaver::short_);
        const phy::psk_modulator_config m = phy::m110d_modulator_config(any);
        c.symbol_rate = m.symbol_rate;
        c.carrier_hz = m.carrier_hz;
    }
    return c;
}

phy::serial_tone_frontend make_frontend(double fs, bool complex_input, unsigned bw_khz)
{
    try {
        return phy::serial_tone_frontend(frontend_config(fs, complex_input, bw_khz));
    } catch (const std::invalid_argument& e) {
        std::ostringstream os;
        os << "s4539_rx: sample_rate_hz " << fs << " at " << bw_khz
           << " kHz: " << e.what();
        throw std::invalid_argument(os.str());
    }
}

} // namespace

class s4539_rx_impl : public s4539_rx
{
public:
    s4539_rx_impl(double sample_rate_hz,
                  bool complex_input,
                  bool deliver_per_block,
                  const std::string& listen,
                  const std::string& s5069_settings,
                  int threads)
        : gr::block(
              "s4539_rx",
              gr::io_signature::make(
                  1, 1, complex_input ? sizeof(std::complex<float>) : sizeof(float)),
              gr::io_signature::make(0, 1, sizeof(gr_complex))),
          d_complex(complex_input),
          d_listen(listening_for(listen)),
          // Settings are checked whether or not 5069 is listened for, so a bad one is
          // never silently ignored.
          d_wide_config(
              wide_config(deliver_per_block, s5069_settings, d_listen, threads)),
          d_front(
              make_frontend(sample_rate_hz, complex_input, d_wide_config.bandwidth_khz)),
          d_max_waiting(size_t(max_waiting_s * d_front.output_rate() / 4)),
          d_serial(serial_config(deliver_per_block)),
          d_high(high_config(deliver_per_block, d_wide_config))
    {
        if (d_listen.s5069)
            d_wide = std::make_unique<phy::m110d_receiver>(d_wide_config);
        message_port_register_out(port_out);
        message_port_register_out(port_status);
        message_port_register_out(port_burst_info);
    }

    uint64_t bursts() const override { return d_bursts; }
    bool carrier_detected() const override { return d_carrier; }

    // Called with the connected ports when the flowgraph starts: the symbols are
    // collected only for a connected output, each receiver's apart (a receiver takes
    // back its own last symbols).
    bool check_topology(int, int noutputs) override
    {
        const bool tap = noutputs > 0;
        d_serial.tap_symbols(tap ? &d_serial_symbols : nullptr);
        d_high.tap_symbols(tap ? &d_high_symbols : nullptr);
        if (d_wide)
            d_wide->tap_symbols(tap ? &d_wide_symbols : nullptr);
        return true;
    }

    // With two threads a burst's last blocks may still be decoding when the input ends:
    // they are handed on here rather than lost with the flowgraph.
    bool stop() override
    {
        if (d_wide) {
            d_faults(d_logger, "stop", [&] {
                d_wide_done.clear();
                d_wide->complete_decoding(d_wide_done);
                hand_on_each(d_wide_done);
            });
        }
        return gr::block::stop();
    }

    void forecast(int, gr_vector_int& ninput_items_required) override
    {
        // Any input is enough: symbols come out at no fixed rate.
        ninput_items_required[0] = 1;
    }

    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override
    {
        const bool symbols_out = !output_items.empty();
        int taken = 0;
        if (!symbols_out || d_waiting.size() < d_max_waiting) {
            taken = ninput_items[0];
            // A kernel failure drops these samples, not the receiver.
            d_faults(d_logger, "in", [&] { receive(input_items[0], size_t(taken)); });
            // Symbols a receiver may still take back (a first block equalised again
            // under the other scrambler reading, blocks not yet judged part of the
            // burst) stay in its tap until settled.
            settle(d_serial_symbols, d_serial.tapped_unsettled());
            settle(d_high_symbols, d_high.tapped_unsettled());
            if (d_wide)
                settle(d_wide_symbols, d_wide->tapped_unsettled());
        }
        consume(0, taken);
        if (!symbols_out)
            return 0;
        const size_t n = std::min(d_waiting.size(), size_t(noutput_items));
        std::copy_n(d_waiting.begin(), n, static_cast<gr_complex*>(output_items[0]));
        d_waiting.erase(d_waiting.begin(), d_waiting.begin() + n);
        return int(n);
    }

private:
    fault_guard d_faults;

    void settle(std::vector<gr_complex>& tapped, size_t unsettled)
    {
        const auto settled = tapped.end() - long(std::min(unsettled, tapped.size()));
        d_waiting.insert(d_waiting.end(), tapped.begin(), settled);
        tapped.erase(tapped.begin(), settled);
    }

    static phy::m110a_receiver_config serial_config(bool deliver_per_block)
    {
        phy::m110a_receiver_config c;
        c.deliver_per_block = deliver_per_block;
        return c;
    }
    // App C shares App D's data scrambler and tail-biting code: the settings' readings
    // of those apply to it too, found or told alike.
    static phy::m110c_receiver_config high_config(bool deliver_per_block,
                                                  const phy::m110d_receiver_config& wide)
    {
        phy::m110c_receiver_config c;
        c.deliver_per_block = deliver_per_block;
        c.readings.scrambler = wide.readings.scrambler;
        c.readings.tail_biting = wide.readings.tail_biting;
        c.find_tail_biting = wide.find_tail_biting;
        c.find_scrambler = wide.find_scrambler;
        return c;
    }

    void receive(const void* input, size_t n_in)
    {
        d_baseband.clear();
        if (d_complex)
            d_front.process(
                static_cast<const std::complex<float>*>(input), n_in, d_baseband);
        else
            d_front.process(static_cast<const float*>(input), n_in, d_baseband);
        // In pieces, so carrier_on is posted near the moment the preamble is found.
        constexpr size_t piece = 960;
        for (size_t k = 0; k < d_baseband.size(); k += piece) {
            // Every receiver listening takes every sample: any mode is received without
            // being named (auto-baud), of either standard with listen "both".
            const size_t n = std::min(piece, d_baseband.size() - k);
            if (d_listen.s4539) {
                d_serial_done.clear();
                d_serial.process(d_baseband.data() + k, n, d_serial_done);
                for (const phy::m110a_burst& b : d_serial_done)
                    hand_on(b.mode,
                            b.bytes,
                            b.continues,
                            b.eom,
                            !b.continues && !b.eom,
                            b.snr_db,
                            b.snr_db_recent,
                            b.frequency_offset_hz,
                            std::string());
                d_high_done.clear();
                d_high.process(d_baseband.data() + k, n, d_high_done);
                hand_on_each(d_high_done);
            }
            if (d_wide) {
                d_wide_done.clear();
                d_wide->process(d_baseband.data() + k, n, d_wide_done);
                hand_on_each(d_wide_done);
            }
            const bool detected = (d_listen.s4539 && (d_serial.carrier_detected() ||
                                                      d_high.carrier_detected())) ||
                                  (d_wide && d_wide->carrier_detected());
            if (detected && !d_carrier) {
                d_carrier = true;
                post_status("carrier_on");
            }
        }
    }

    // App C and STANAG 5069 bursts. bytes_bad: cut before its EOM (App C: or a block
    // decoded on little evidence).
    template <typename Burst>
    void hand_on_each(const std::vector<Burst>& done)
    {
        for (const Burst& b : done)
            hand_on(b.mode,
                    b.bytes,
                    b.continues,
                    b.eom,
                    b.bytes_bad,
                    b.snr_db,
                    b.snr_db_recent,
                    b.frequency_offset_hz,
                    b.readings);
    }

    void post_status(const char* event)
    {
        message_port_pub(port_status, modem_status(event));
    }

    // A burst's bytes, or (continues) the bytes its latest interleaver blocks completed.
    void hand_on(const std::string& mode_name,
                 const std::vector<uint8_t>& bytes,
                 bool continues,
                 bool eom,
                 bool bytes_bad,
                 double snr_db,
                 double snr_db_recent,
                 double offset_hz,
                 const std::string& readings)
    {
        if (!d_carrier) { // a burst that began and ended within one piece
            d_carrier = true;
            post_status("carrier_on");
        }
        const auto mode = phy::waveform_mode_by_name(mode_name);
        if (!mode) { // cannot happen: every receiver names its modes so
            d_logger->error("s4539_rx: a burst in unknown mode {} dropped", mode_name);
            return;
        }
        pmt::pmt_t meta = pmt::make_dict();
        meta = pmt::dict_add(
            meta, metadata::data_rate(), pmt::from_long(long(mode->user_bps)));
        meta = pmt::dict_add(meta, metadata::interleaver(), pmt::mp(mode->interleaver));
        meta = pmt::dict_add(meta, metadata::mode(), pmt::mp(mode->name));
        meta = pmt::dict_add(meta, metadata::snr_db(), pmt::from_double(snr_db));
        meta = pmt::dict_add(
            meta, metadata::snr_db_recent(), pmt::from_double(snr_db_recent));
        meta = pmt::dict_add(
            meta, metadata::frequency_offset_hz(), pmt::from_double(offset_hz));
        meta = pmt::dict_add(meta, metadata::bytes_bad(), pmt::from_bool(bytes_bad));
        meta = pmt::dict_add(meta, metadata::time(), pmt::from_double(wall_clock_s()));
        if (!readings.empty())
            meta = pmt::dict_add(meta, metadata::readings(), pmt::mp(readings));
        if (continues)
            meta = pmt::dict_add(meta, metadata::burst_continues(), pmt::PMT_T);
        message_port_pub(port_out,
                         pmt::cons(meta, pmt::init_u8vector(bytes.size(), bytes)));
        d_burst_bytes += bytes.size();
        if (continues)
            return;
        const pmt::pmt_t info =
            pmt::dict_add(meta, metadata::bytes(), pmt::from_uint64(d_burst_bytes));
        message_port_pub(port_burst_info, info);
        ++d_bursts;
        d_logger->debug("{} burst, {} bytes, SNR {:.1f} dB, offset {:.1f} Hz{}{}{}",
                        mode_name,
                        d_burst_bytes,
                        snr_db,
                        offset_hz,
                        !eom        ? ", cut before its end"
                        : bytes_bad ? ", bytes probably bad"
                                    : "",
                        readings.empty() ? "" : ", ",
                        readings);
        d_burst_bytes = 0;
        post_status("carrier_off");
        d_carrier = false;
    }

    const bool d_complex;
    const listening d_listen;
    const phy::m110d_receiver_config
        d_wide_config; // bandwidth, readings (checked always)
    phy::serial_tone_frontend d_front;
    const size_t d_max_waiting;                  // symbols
    phy::m110a_receiver d_serial;                // 75-2400 bps, 4800U
    phy::m110c_receiver d_high;                  // App C: 3200-9600 bps, 12800U
    std::unique_ptr<phy::m110d_receiver> d_wide; // STANAG 5069, when listened for
    std::vector<phy::m110d_burst> d_wide_done;
    std::vector<std::complex<float>> d_baseband;
    std::vector<phy::m110a_burst> d_serial_done;
    std::vector<phy::m110c_burst> d_high_done;
    // The receivers' taps, emptied every call but for what they may take back.
    std::vector<gr_complex> d_serial_symbols;
    std::vector<gr_complex> d_high_symbols;
    std::vector<gr_complex> d_wide_symbols;
    std::deque<gr_complex> d_waiting; // symbols not yet given to the output
    size_t d_burst_bytes = 0;         // of the burst being handed on
    std::atomic<uint64_t> d_bursts{ 0 };
    std::atomic<bool> d_carrier{ false };
};

s4539_rx::sptr s4539_rx::make(double sample_rate_hz,
                              bool complex_input,
                              bool deliver_per_block,
                              const std::string& listen,
                              const std::string& s5069_settings,
                              int threads)
{
    return gnuradio::make_block_sptr<s4539_rx_impl>(sample_rate_hz,
                                                    complex_input,
                                                    deliver_per_block,
                                                    listen,
                                                    s5069_settings,
                                                    threads);
}

} // namespace hfstack
} // namespace gr
