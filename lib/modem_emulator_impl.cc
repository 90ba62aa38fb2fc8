/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "burst_metadata.h"
#include "fault_guard.h"
#include "modem_emulator_impl.h"
#include "modem_status.h"

#include "dl/transmission.h"

#include <gnuradio/io_signature.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace gr {
namespace hfstack {

namespace {

const pmt::pmt_t port_in = pmt::mp("in");
const pmt::pmt_t port_out = pmt::mp("out");
const pmt::pmt_t port_status = pmt::mp("status");
const pmt::pmt_t port_air_in = pmt::mp("air_in");
const pmt::pmt_t port_air_out = pmt::mp("air_out");
// air_out metadata besides the mode and air_time.
const pmt::pmt_t key_source = pmt::mp("source");
const pmt::pmt_t key_start = pmt::mp("air_start");
const pmt::pmt_t key_time_scale = pmt::mp("time_scale");

// Like s4539_tx: no modem transmits for longer.
constexpr double max_air_time_s = 600.0;

// Emulators in one process number themselves 1, 2, ... in order of construction, so
// a flowgraph built the same way draws the same errors (unless given an emulator_id).
std::atomic<uint64_t> next_emulator_id{ 1 };

} // namespace

modem_emulator::sptr modem_emulator::make(double time_scale,
                                          const std::string& profile,
                                          double snr_db,
                                          double ber,
                                          uint64_t seed,
                                          const std::string& options)
{
    return gnuradio::make_block_sptr<modem_emulator_impl>(
        time_scale, profile, snr_db, ber, seed, options);
}

modem_emulator_impl::modem_emulator_impl(double time_scale,
                                         const std::string& profile,
                                         double snr_db,
                                         double ber,
                                         uint64_t seed,
                                         const std::string& options)
    : gr::block("modem_emulator",
                gr::io_signature::make(0, 0, 0),
                gr::io_signature::make(0, 0, 0)),
      d_time_scale(time_scale),
      d_timer(d_mutex, time_scale, block_timer::clock::time_point{})
{
    if (!(time_scale > 0) || !std::isfinite(time_scale))
        throw std::invalid_argument(
            "modem_emulator: time_scale must be a positive number");
    try {
        const sim::emulator_settings settings = sim::parse_emulator_settings(options);
        sim::channel_config channel;
        channel.propagation_s = settings.propagation_s;
        channel.ber = ber;
        channel.snr_db = snr_db;
        channel.fading_profile = profile;
        channel.seed = seed;
        const uint64_t id =
            settings.emulator_id ? settings.emulator_id : next_emulator_id++;
        d_modem = std::make_unique<sim::emulated_modem>(
            id, settings.radio, channel, settings.half_duplex, settings.collisions);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("modem_emulator: ") + e.what());
    }
    message_port_register_in(port_in);
    message_port_register_in(port_air_in);
    message_port_register_out(port_out);
    message_port_register_out(port_status);
    message_port_register_out(port_air_out);
    set_msg_handler(port_in, [this](const pmt::pmt_t& m) {
        d_faults(d_logger, "in", [&] { handle_burst(m); });
    });
    set_msg_handler(port_air_in, [this](const pmt::pmt_t& m) {
        d_faults(d_logger, "air_in", [&] { handle_air(m); });
    });
}

modem_emulator_impl::~modem_emulator_impl() { d_timer.stop(); }

bool modem_emulator_impl::start()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_timer.start([this](double) {
        d_faults(d_logger, "timer", [&] { publish_due(); });
        return d_modem->next_deadline();
    });
    return block::start();
}

bool modem_emulator_impl::stop()
{
    d_timer.stop();
    return block::stop();
}

void modem_emulator_impl::publish_due()
{
    for (auto& ev : d_modem->poll(now())) {
        if (ev.type == sim::modem_event::kind::status) {
            message_port_pub(port_status,
                             pmt::dict_add(modem_status(dl::to_string(ev.status)),
                                           metadata::channel_time(),
                                           pmt::from_double(ev.time)));
            continue;
        }
        pmt::pmt_t meta =
            add_mode_metadata(pmt::make_dict(), *ev.info.mode, ev.s5069_bandwidth_khz);
        if (std::isfinite(ev.info.snr_db))
            meta =
                pmt::dict_add(meta, metadata::snr_db(), pmt::from_double(ev.info.snr_db));
        if (std::isfinite(ev.info.snr_db_recent))
            meta = pmt::dict_add(
                meta, metadata::snr_db_recent(), pmt::from_double(ev.info.snr_db_recent));
        if (ev.info.burst_continues)
            meta = pmt::dict_add(meta, metadata::burst_continues(), pmt::PMT_T);
        if (ev.info.bytes_bad)
            meta = pmt::dict_add(meta, metadata::bytes_bad(), pmt::PMT_T);
        meta = pmt::dict_add(meta, metadata::time(), pmt::from_double(wall_clock_s()));
        meta = pmt::dict_add(meta, metadata::channel_time(), pmt::from_double(ev.time));
        message_port_pub(
            port_out,
            pmt::cons(meta, pmt::init_u8vector(ev.data.size(), ev.data.data())));
    }
}

void modem_emulator_impl::handle_burst(const pmt::pmt_t& msg)
{
    if (!pmt::is_pair(msg) || !pmt::is_u8vector(pmt::cdr(msg))) {
        std::lock_guard<std::mutex> lock(d_mutex);
        ++d_bad_inputs;
        d_logger->warn("in: message is not a PDU with a u8vector, dropped");
        return;
    }
    const pmt::pmt_t meta =
        pmt::is_dict(pmt::car(msg)) ? pmt::car(msg) : pmt::make_dict();
    dl::node_waveform mode; // 300 bps short unless the PDU names its mode
    if (auto m = waveform_from_metadata(meta))
        mode = *m;
    size_t n = 0;
    const uint8_t* p = pmt::u8vector_elements(pmt::cdr(msg), n);
    std::lock_guard<std::mutex> lock(d_mutex);
    if (dl::air_time(dl::waveform_timing_of(mode.s5069_bandwidth_khz, mode.mode), n) >
        max_air_time_s) {
        ++d_bad_inputs;
        d_logger->warn("in: a burst of {} bytes would last over {} s in {}, dropped",
                       n,
                       max_air_time_s,
                       dl::waveform_name(mode.s5069_bandwidth_khz, mode.mode));
        return;
    }
    // A node that names the channel time of its decision keys up as of then: the few
    // milliseconds its message took (times the time scale) are not the channel's. A
    // decision older than block_timer::max_channel_lag is taken as that old: its node
    // was stalled that long, and its burst goes out late.
    double at = now();
    const pmt::pmt_t decided =
        pmt::dict_ref(meta, metadata::channel_time(), pmt::PMT_NIL);
    if (pmt::is_real(decided) && std::isfinite(pmt::to_double(decided)))
        at = std::clamp(pmt::to_double(decided), at - d_timer.max_channel_lag(), at);
    const sim::air_transmission b =
        d_modem->transmit(dl::bytes(p, p + n), mode.mode, at, mode.s5069_bandwidth_khz);
    pmt::pmt_t air = add_mode_metadata(pmt::make_dict(), b.mode, b.s5069_bandwidth_khz);
    air = pmt::dict_add(air, key_source, pmt::from_long(long(b.source)));
    air = pmt::dict_add(air, key_start, pmt::from_double(b.start));
    air = pmt::dict_add(air, metadata::air_time(), pmt::from_double(b.air_time_s));
    air = pmt::dict_add(air, key_time_scale, pmt::from_double(d_time_scale));
    message_port_pub(port_air_out,
                     pmt::cons(air, pmt::init_u8vector(b.data.size(), b.data.data())));
    d_timer.wake();
}

void modem_emulator_impl::handle_air(const pmt::pmt_t& msg)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    const bool pdu = pmt::is_pair(msg) && pmt::is_dict(pmt::car(msg)) &&
                     pmt::is_u8vector(pmt::cdr(msg));
    const pmt::pmt_t meta = pdu ? pmt::car(msg) : pmt::make_dict();
    const pmt::pmt_t source = pmt::dict_ref(meta, key_source, pmt::PMT_NIL);
    const pmt::pmt_t start = pmt::dict_ref(meta, key_start, pmt::PMT_NIL);
    const pmt::pmt_t air_time = pmt::dict_ref(meta, metadata::air_time(), pmt::PMT_NIL);
    const pmt::pmt_t scale = pmt::dict_ref(meta, key_time_scale, pmt::PMT_NIL);
    const auto mode = waveform_from_metadata(meta);
    if (!pdu || !pmt::is_integer(source) || !pmt::is_real(start) ||
        !pmt::is_real(air_time) || !pmt::is_real(scale) || !mode) {
        ++d_bad_inputs;
        d_logger->warn("air_in: not another modem_emulator's air_out message, dropped");
        return;
    }
    if (pmt::to_double(scale) != d_time_scale) {
        ++d_bad_inputs;
        d_logger->warn(
            "air_in: a modem_emulator with time_scale {} cannot share a channel with "
            "this one ({}), burst dropped",
            pmt::to_double(scale),
            d_time_scale);
        return;
    }
    sim::air_transmission b;
    b.source = uint64_t(pmt::to_long(source));
    b.start = pmt::to_double(start);
    b.air_time_s = pmt::to_double(air_time);
    b.mode = mode->mode;
    b.s5069_bandwidth_khz = mode->s5069_bandwidth_khz;
    size_t n = 0;
    const uint8_t* p = pmt::u8vector_elements(pmt::cdr(msg), n);
    b.data.assign(p, p + n);
    if (!d_modem->hear(b, now())) {
        ++d_bad_inputs;
        d_logger->warn(
            "air_in: burst from emulator {} refused: its start ({} s) or air time "
            "({} s) is not that of a burst on this channel now",
            b.source,
            b.start,
            b.air_time_s);
        return;
    }
    d_timer.wake();
}

std::map<std::string, double> modem_emulator_impl::counters() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    const sim::emulated_modem_stats& s = d_modem->stats();
    return { { "transmissions", double(s.transmissions) },
             { "air_time_s", s.air_time_s },
             { "bursts_heard", double(s.bursts_heard) },
             { "bursts_delivered", double(s.bursts_delivered) },
             { "collisions", double(s.collisions) },
             { "lost_outage", double(s.lost_outage) },
             { "lost_acquisition", double(s.lost_acquisition) },
             { "bits_flipped", double(s.bits_flipped) },
             { "bad_inputs", double(d_bad_inputs) },
             { "internal_errors", double(d_faults.count()) } };
}

} // namespace hfstack
} // namespace gr
