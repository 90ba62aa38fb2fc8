/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Python bindings of the simulator (traffic/scenario.h) and the test client
 * (traffic/test_client.h), in the submodule hfstack.sim: hfstack-sim runs scenarios,
 * hfstack-console drives the same test client over a live SIS connection; network runs
 * (traffic/network_scenario.h) for hfstack-sim network.
 * Hand-written: these kernels are not public block headers. */
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "phy/m110d_timing.h"
#include "phy/s4539_modes.h"
#include "phy/waveform_modes.h"
#include "traffic/ip_host.h"
#include "traffic/network_scenario.h"
#include "traffic/pep_host.h"
#include "traffic/scenario.h"
#include "traffic/test_client.h"
#include "traffic/xmpp_host.h"

namespace py = pybind11;
using namespace gr::hfstack;
using namespace gr::hfstack::sim;

namespace {

py::dict counters_dict(const dl::node_counters& c)
{
    py::dict d;
    for (const auto& [name, value] : dl::counter_list(c))
        d[py::str(name)] = value;
    return d;
}

py::dict xmpp_report_dict(const traffic::xmpp_host_report& r)
{
    py::dict d;
    py::list trips;
    for (double t : r.round_trips)
        trips.append(t);
    d["round_trips"] = trips;
    d["first_sent_at"] = r.first_sent_at;
    d["received"] = r.received;
    d["presences_received"] = r.presences_received;
    d["errors_received"] = r.errors_received;
    const auto& c = r.bridge;
    py::dict b;
    b["sent"] = c.sent;
    b["resent"] = c.resent;
    b["delivered"] = c.delivered;
    b["failures"] = c.failures;
    b["wire_bytes_sent"] = c.wire_bytes_sent;
    b["to_component"] = c.to_component;
    b["chat_states_dropped"] = c.chat_states_dropped;
    b["chat_states_stripped"] = c.chat_states_stripped;
    b["presence_stripped"] = c.presence_stripped;
    b["bounced"] = c.bounced;
    b["timed_out"] = c.timed_out;
    d["bridge"] = b;
    d["plain_sent"] = r.plain_sent;
    d["wire_sent"] = r.wire_sent;
    d["plain_received"] = r.plain_received;
    d["wire_received"] = r.wire_received;
    return d;
}

py::dict air_dict(const node_stats& s)
{
    py::dict d;
    d["transmissions"] = s.transmissions;
    d["bytes_sent"] = s.bytes_sent;
    d["air_time_s"] = s.air_time_s;
    d["bursts_delivered"] = s.bursts_delivered;
    d["collisions"] = s.collisions;
    d["lost_outage"] = s.lost_outage;
    d["lost_other"] = s.lost_other;
    d["lost_preamble"] = s.lost_preamble;
    d["bits_flipped"] = s.bits_flipped;
    return d;
}

py::dict network_result_dict(const network_result& r)
{
    py::dict d;
    d["nominal_bps"] = r.nominal_bps;
    d["end_time_s"] = r.end_time_s;
    d["completed"] = r.completed;
    d["aggregate_bps"] = r.aggregate_bps;
    d["occupancy"] = r.occupancy;
    d["jain_bulk"] = r.jain_bulk;
    d["worst_bulk_share"] = r.worst_bulk_share;
    d["collisions"] = r.network.collisions;
    d["transmissions"] = r.network.transmissions;
    d["bursts_lost"] = r.network.bursts_lost;
    py::list flows;
    for (const auto& f : r.flows) {
        py::dict e;
        e["kind"] = flow_kind_name(f.flow.kind);
        e["from"] = f.flow.from;
        if (f.flow.kind != flow_kind::broadcast)
            e["to"] = f.flow.to;
        else
            e["to"] = py::none();
        e["messages_sent"] = f.messages_sent;
        e["bytes_sent"] = f.bytes_sent;
        e["messages_delivered"] = f.messages_delivered;
        e["bytes_delivered"] = f.bytes_delivered;
        e["duplicates"] = f.duplicates;
        e["throughput_bps"] = f.throughput_bps;
        e["first_delivery_s"] = f.first_delivery_s;
        e["latency_p50_s"] = f.latency_p50_s;
        e["latency_p90_s"] = f.latency_p90_s;
        e["latency_p99_s"] = f.latency_p99_s;
        e["latency_max_s"] = f.latency_max_s;
        e["round_trip_p50_s"] = f.round_trip_p50_s;
        e["round_trip_p90_s"] = f.round_trip_p90_s;
        e["round_trips"] = f.round_trips_s.size();
        e["round_trips_lost"] = f.round_trips_lost;
        flows.append(e);
    }
    d["flows"] = flows;
    py::list nodes;
    for (size_t k = 0; k < r.nodes.size(); ++k) {
        const auto& n = r.nodes[k];
        py::dict e;
        e["node"] = k;
        e["address"] = n.address;
        e["bytes_delivered"] = n.bytes_delivered;
        e["link_setups"] = n.link_setups;
        e["link_failures"] = n.link_failures;
        e["transmissions"] = n.air.transmissions;
        e["air_time_s"] = n.air.air_time_s;
        e["occupancy"] = n.occupancy;
        e["collisions"] = n.air.collisions;
        e["lost_outage"] = n.air.lost_outage;
        nodes.append(e);
    }
    d["nodes"] = nodes;
    py::list timeline;
    for (const auto& b : r.timeline) {
        py::dict e;
        e["node"] = b.node;
        e["start_s"] = b.start_s;
        e["end_s"] = b.end_s;
        e["to"] = b.to >= 0 ? py::object(py::int_(b.to)) : py::object(py::none());
        e["bytes"] = b.bytes;
        timeline.append(e);
    }
    d["timeline"] = timeline;
    return d;
}

} // namespace

void bind_sim(py::module& m)
{
    py::class_<radio_config>(
        m, "radio_config", "Radio and modem switching times, seconds")
        .def(py::init<>())
        .def_readwrite("key_up_s", &radio_config::key_up_s)
        .def_readwrite("unkey_s", &radio_config::unkey_s)
        .def_readwrite("agc_settle_s", &radio_config::agc_settle_s)
        .def_readwrite("carrier_detect_s", &radio_config::carrier_detect_s)
        .def_readwrite("rx_latency_s", &radio_config::rx_latency_s)
        .def_readwrite("deliver_per_block",
                       &radio_config::deliver_per_block,
                       "decoded bytes delivered after each interleaver block (streaming "
                       "modem); False: all at the burst's end");
    m.def("ideal_radio", &ideal_radio);

    py::class_<channel_config>(m, "channel_config", "Error model of every path")
        .def(py::init<>())
        .def_readwrite("ber", &channel_config::ber)
        .def_readwrite("burst_rate_per_s", &channel_config::burst_rate_per_s)
        .def_readwrite("burst_length_bits", &channel_config::burst_length_bits)
        .def_readwrite("burst_ber", &channel_config::burst_ber)
        .def_readwrite("fade_period_s", &channel_config::fade_period_s)
        .def_readwrite("fade_duration_s", &channel_config::fade_duration_s)
        .def_readwrite("fade_offset_s", &channel_config::fade_offset_s)
        .def_readwrite("fade_ber", &channel_config::fade_ber)
        .def_readwrite("outage_period_s", &channel_config::outage_period_s)
        .def_readwrite("outage_duration_s", &channel_config::outage_duration_s)
        .def_readwrite("outage_offset_s", &channel_config::outage_offset_s)
        .def_readwrite("propagation_s", &channel_config::propagation_s)
        .def_readwrite("snr_db", &channel_config::snr_db)
        .def_readwrite("fading_profile", &channel_config::fading_profile)
        .def_property(
            "snr_steps",
            [](const channel_config& c) {
                std::vector<std::pair<double, double>> out;
                for (const auto& st : c.snr_steps)
                    out.emplace_back(st.t_s, st.snr_db);
                return out;
            },
            [](channel_config& c, const std::vector<std::pair<double, double>>& steps) {
                c.snr_steps.clear();
                for (const auto& [t, db] : steps)
                    c.snr_steps.push_back({ t, db });
            },
            "[(time_s, snr_db), ...]: the mean SNR from each time on")
        .def_readwrite("model_snr_report", &channel_config::model_snr_report);
    m.def("fading_profile_names",
          &fading_profile_names,
          "Fading profiles: awgn, the ITU-R F.1487 conditions and the F.520 names");

    py::enum_<traffic::encapsulation>(m, "encapsulation")
        .value("raw", traffic::encapsulation::raw)
        .value("rcop", traffic::encapsulation::rcop);

    py::class_<traffic::client_config>(m, "client_config", "A test client's settings")
        .def(py::init<>())
        .def_readwrite("sap", &traffic::client_config::sap)
        .def_readwrite("peer", &traffic::client_config::peer)
        .def_readwrite("peer_sap", &traffic::client_config::peer_sap)
        .def_readwrite("arq", &traffic::client_config::arq)
        .def_readwrite("expedited", &traffic::client_config::expedited)
        .def_readwrite("priority", &traffic::client_config::priority)
        .def_readwrite("ttl", &traffic::client_config::ttl)
        .def_readwrite("confirm", &traffic::client_config::confirm)
        .def_readwrite("framing", &traffic::client_config::framing)
        .def_readwrite("application_id", &traffic::client_config::application_id)
        .def_readwrite("flow", &traffic::client_config::flow)
        .def_readwrite("pings", &traffic::client_config::pings)
        .def_readwrite("ping_bytes", &traffic::client_config::ping_bytes)
        .def_readwrite("ping_interval_s", &traffic::client_config::ping_interval_s)
        .def_readwrite("ping_gap_s", &traffic::client_config::ping_gap_s)
        .def_readwrite("ping_timeout_s", &traffic::client_config::ping_timeout_s)
        .def_readwrite("ping_start_s", &traffic::client_config::ping_start_s)
        .def_readwrite("echo", &traffic::client_config::echo)
        .def_readwrite("echo_delay_s", &traffic::client_config::echo_delay_s)
        .def_readwrite("send_bytes", &traffic::client_config::send_bytes)
        .def_readwrite("updu_size", &traffic::client_config::updu_size)
        .def_readwrite("window", &traffic::client_config::window)
        .def_readwrite("send_after_pings", &traffic::client_config::send_after_pings)
        .def_readwrite("hold_sender", &traffic::client_config::hold_sender);
    m.def("validate_client",
          [](const traffic::client_config& c) { traffic::validate(c); });

    py::class_<traffic::ping_record>(m, "ping_record")
        .def_readonly("sent_at", &traffic::ping_record::sent_at)
        .def_readonly("rtt_s", &traffic::ping_record::rtt_s);

    py::class_<traffic::client_report>(m, "client_report")
        .def_readonly("bound", &traffic::client_report::bound)
        .def_readonly("bound_at", &traffic::client_report::bound_at)
        .def_readonly("error", &traffic::client_report::error)
        .def_readonly("pings", &traffic::client_report::pings)
        .def_readonly("updus_sent", &traffic::client_report::updus_sent)
        .def_readonly("bytes_sent", &traffic::client_report::bytes_sent)
        .def_readonly("updus_confirmed", &traffic::client_report::updus_confirmed)
        .def_readonly("bytes_confirmed", &traffic::client_report::bytes_confirmed)
        .def_readonly("updus_rejected", &traffic::client_report::updus_rejected)
        .def_readonly("rejections", &traffic::client_report::rejections)
        .def_readonly("first_send_at", &traffic::client_report::first_send_at)
        .def_readonly("flow_off", &traffic::client_report::flow_off)
        .def_readonly("updus_received", &traffic::client_report::updus_received)
        .def_readonly("bytes_received", &traffic::client_report::bytes_received)
        .def_readonly("duplicates", &traffic::client_report::duplicates)
        .def_readonly("out_of_order", &traffic::client_report::out_of_order)
        .def_readonly("corrupt", &traffic::client_report::corrupt)
        .def_readonly("foreign", &traffic::client_report::foreign)
        .def_readonly("received_by_flow", &traffic::client_report::received_by_flow);

    py::class_<traffic::test_client>(
        m, "test_client", "STANAG 5066 test client, sans-IO (traffic/test_client.h)")
        .def(py::init<traffic::client_config>(), py::arg("config"))
        .def("start", &traffic::test_client::start, py::arg("now"))
        .def("on_primitive",
             &traffic::test_client::on_primitive,
             py::arg("primitive"),
             py::arg("now"))
        .def("on_timer", &traffic::test_client::on_timer, py::arg("now"))
        .def("next_deadline", &traffic::test_client::next_deadline)
        .def("take_outgoing", &traffic::test_client::take_outgoing)
        .def("release_sender", &traffic::test_client::release_sender, py::arg("now"))
        .def("done", &traffic::test_client::done)
        .def("report", &traffic::test_client::report, py::return_value_policy::copy)
        .def("min_updu_size", &traffic::test_client::min_updu_size);

    py::enum_<test_kind>(m, "test_kind")
        .value("ping", test_kind::ping)
        .value("throughput", test_kind::throughput)
        .value("none", test_kind::none);

    py::class_<scenario_config>(
        m, "scenario_config", "One simulator run (traffic/scenario.h)")
        .def(py::init<>())
        .def_readwrite("test", &scenario_config::test)
        .def_readwrite("mode", &scenario_config::mode)
        .def_readwrite("nodes", &scenario_config::nodes)
        .def_readwrite("max_transmission_s", &scenario_config::max_transmission_s)
        .def_readwrite("node_options", &scenario_config::node_options)
        .def_readwrite("radio", &scenario_config::radio)
        .def_readwrite("channel", &scenario_config::channel)
        .def_readwrite("client", &scenario_config::client)
        .def_readwrite("two_way", &scenario_config::two_way)
        .def_readwrite("warm_up", &scenario_config::warm_up)
        .def_readwrite("duration_s", &scenario_config::duration_s)
        .def_readwrite("seed", &scenario_config::seed)
        .def_readwrite("trace", &scenario_config::trace);
    m.def(
        "validate",
        [](const scenario_config& c) { validate(c); },
        py::arg("config"),
        "Raises ValueError naming what is wrong with the settings");

    py::class_<flow_result>(m, "flow_result")
        .def_readonly("from_node", &flow_result::from)
        .def_readonly("to_node", &flow_result::to)
        .def_readonly("updus_sent", &flow_result::updus_sent)
        .def_readonly("bytes_sent", &flow_result::bytes_sent)
        .def_readonly("updus_delivered", &flow_result::updus_delivered)
        .def_readonly("bytes_delivered", &flow_result::bytes_delivered)
        .def_readonly("duplicates", &flow_result::duplicates)
        .def_readonly("out_of_order", &flow_result::out_of_order)
        .def_readonly("corrupt", &flow_result::corrupt)
        .def_readonly("rejected", &flow_result::rejected)
        .def_readonly("first_send_at", &flow_result::first_send_at)
        .def_readonly("first_delivery_at", &flow_result::first_delivery_at)
        .def_readonly("last_delivery_at", &flow_result::last_delivery_at)
        .def_readonly("utilisation", &flow_result::utilisation)
        .def_readonly("steady_utilisation", &flow_result::steady_utilisation)
        .def_readonly("delivered", &flow_result::delivered);

    py::class_<ping_summary>(m, "ping_summary")
        .def_readonly("pings", &ping_summary::pings)
        .def_readonly("first_s", &ping_summary::first_s)
        .def_readonly("later_mean_s", &ping_summary::later_mean_s)
        .def_readonly("later_min_s", &ping_summary::later_min_s)
        .def_readonly("later_max_s", &ping_summary::later_max_s)
        .def_readonly("lost", &ping_summary::lost);

    py::class_<transmission_record>(m, "transmission_record")
        .def_readonly("start_s", &transmission_record::start_s)
        .def_readonly("node", &transmission_record::node)
        .def_property_readonly("bytes", &transmission_record::bytes)
        .def_property_readonly("dpdus", &transmission_record::dpdus)
        .def_readonly("air_time_s", &transmission_record::air_time_s)
        .def_readonly("mode", &transmission_record::mode_name)
        .def_property_readonly("burst",
                               [](const transmission_record& t) {
                                   return py::bytes(
                                       reinterpret_cast<const char*>(t.burst.data()),
                                       t.burst.size());
                               })
        .def_readonly("dpdu_sizes", &transmission_record::dpdu_sizes);

    py::class_<scenario_result>(m, "scenario_result")
        .def_readonly("transmissions", &scenario_result::transmissions)
        .def_readonly("nominal_bps", &scenario_result::nominal_bps)
        .def_readonly("end_time_s", &scenario_result::end_time_s)
        .def_readonly("completed", &scenario_result::completed)
        .def_readonly("stopped", &scenario_result::stopped)
        .def_readonly("flows", &scenario_result::flows)
        .def_readonly("ping", &scenario_result::ping)
        .def_property_readonly("nodes",
                               [](const scenario_result& r) {
                                   py::list out;
                                   for (const auto& n : r.nodes) {
                                       py::dict d;
                                       d["address"] = n.address;
                                       d["counters"] = counters_dict(n.counters);
                                       d["air"] = air_dict(n.air);
                                       out.append(d);
                                   }
                                   return out;
                               })
        .def_property_readonly("network", [](const scenario_result& r) {
            py::dict d;
            d["events"] = r.network.events;
            d["transmissions"] = r.network.transmissions;
            d["collisions"] = r.network.collisions;
            d["bursts_delivered"] = r.network.bursts_delivered;
            d["bursts_lost"] = r.network.bursts_lost;
            d["bits_flipped"] = r.network.bits_flipped;
            return d;
        });

    py::enum_<flow_kind>(m, "flow_kind")
        .value("bulk", flow_kind::bulk)
        .value("chat", flow_kind::chat)
        .value("broadcast", flow_kind::broadcast);
    m.def("flow_kind_by_name", &flow_kind_by_name, py::arg("name"));
    py::class_<network_flow>(m, "network_flow", "One flow of a network run")
        .def(py::init<>())
        .def_readwrite("kind", &network_flow::kind)
        .def_readwrite("from_node", &network_flow::from)
        .def_readwrite("to_node", &network_flow::to)
        .def_readwrite("bytes", &network_flow::bytes)
        .def_readwrite("message_bytes", &network_flow::message_bytes)
        .def_readwrite("messages", &network_flow::messages)
        .def_readwrite("interval_s", &network_flow::interval_s)
        .def_readwrite("start_s", &network_flow::start_s)
        .def_readwrite("expedited", &network_flow::expedited)
        .def_readwrite("via", &network_flow::via);
    py::class_<network_path>(m, "network_path", "One pair's path of a network run")
        .def(py::init<>())
        .def_readwrite("from_node", &network_path::from)
        .def_readwrite("to_node", &network_path::to)
        .def_readwrite("both_ways", &network_path::both_ways)
        .def_readwrite("hears", &network_path::hears)
        .def_readwrite("channel", &network_path::channel);
    py::class_<network_power_cycle>(
        m, "network_power_cycle", "A node's power off and on in a network run")
        .def(py::init<>())
        .def_readwrite("node", &network_power_cycle::node)
        .def_readwrite("off_s", &network_power_cycle::off_s)
        .def_readwrite("on_s", &network_power_cycle::on_s)
        .def_readwrite("journal", &network_power_cycle::journal);
    py::class_<network_scenario_config>(
        m, "network_scenario_config", "A network run (traffic/network_scenario.h)")
        .def(py::init<>())
        .def_readwrite("nodes", &network_scenario_config::nodes)
        .def_readwrite("mode", &network_scenario_config::mode)
        .def_readwrite("max_transmission_s", &network_scenario_config::max_transmission_s)
        .def_readwrite("node_options", &network_scenario_config::node_options)
        .def_readwrite("radio", &network_scenario_config::radio)
        .def_readwrite("channel", &network_scenario_config::channel)
        .def_readwrite("paths", &network_scenario_config::paths)
        .def_readwrite("flows", &network_scenario_config::flows)
        .def_readwrite("power_cycles", &network_scenario_config::power_cycles)
        .def_readwrite("chat_timeout_s", &network_scenario_config::chat_timeout_s)
        .def_readwrite("duration_s", &network_scenario_config::duration_s)
        .def_readwrite("seed", &network_scenario_config::seed)
        .def_readwrite("backoff_seeds_from_seed",
                       &network_scenario_config::backoff_seeds_from_seed);
    m.def("max_network_nodes", [] { return max_network_nodes; });
    m.def("network_preset",
          &network_preset,
          py::arg("name"),
          py::arg("nodes"),
          py::arg("bytes") = 0,
          py::arg("messages") = 10,
          "The flows of a preset (hub-spoke, spokes-to-hub, mesh, bulk, broadcast)");
    m.def("network_preset_names", &network_preset_names);
    m.def("jain_index", &jain_index, py::arg("values"));
    m.def(
        "validate_network",
        [](const network_scenario_config& c) { validate(c); },
        py::arg("config"),
        "Raises ValueError naming what is wrong with the network");
    m.def(
        "run_network",
        [](const network_scenario_config& c) {
            network_result r;
            {
                py::gil_scoped_release release;
                r = run_network(c);
            }
            return network_result_dict(r);
        },
        py::arg("config"),
        "Runs a network in virtual time; returns its figures as a dict");

    m.def("run_scenario",
          &run_scenario,
          py::arg("config"),
          py::arg("progress") = nullptr,
          py::arg("progress_step_s") = 60.0,
          "Runs one scenario in virtual time; progress(now) -> bool is called every "
          "progress_step_s simulated seconds (False stops the run)");
    py::enum_<traffic::ip_request_kind>(m, "ip_request_kind")
        .value("ping", traffic::ip_request_kind::ping)
        .value("dns", traffic::ip_request_kind::dns);
    py::class_<traffic::ip_exchange_result>(m, "ip_exchange_result")
        .def_readonly("round_trips_s", &traffic::ip_exchange_result::round_trips_s)
        .def_readonly("answered", &traffic::ip_exchange_result::answered)
        .def_readonly("completed", &traffic::ip_exchange_result::completed);
    m.def(
        "run_ip_exchange",
        &traffic::run_ip_exchange,
        py::arg("config"),
        py::arg("kind"),
        py::arg("requests"),
        py::arg("gap_s") = 1.0,
        "Two IP hosts behind IP clients (traffic/ip_host.h): node 0's pings or looks up "
        "node 1's `requests` times, one at a time; config gives mode, channel and seed");
    m.def(
        "run_pep_transfers",
        [](const scenario_config& c,
           size_t bytes,
           unsigned transfers,
           const std::string& payload,
           bool compress,
           const py::bytes& text,
           const std::string& pep_options) {
            if (payload != "random" && payload != "text")
                throw py::value_error("payload is random or text, not " + payload);
            const std::string source = text;
            const auto r = traffic::run_pep_transfers(
                c,
                bytes,
                transfers,
                payload == "text" ? traffic::pep_payload::text
                                  : traffic::pep_payload::random,
                compress,
                dl::bytes(source.begin(), source.end()),
                pep_options);
            py::list out;
            for (const auto& t : r.client.transfers)
                out.append(py::make_tuple(t.total_s, t.confirmed));
            return out;
        },
        py::arg("config"),
        py::arg("bytes"),
        py::arg("transfers") = 1,
        py::arg("payload") = "random",
        py::arg("compress") = false,
        py::arg("text") = py::bytes(),
        py::arg("pep_options") = "",
        "Transfers through two HF-PEPs (traffic/pep_host.h): node 0 connects, sends "
        "`bytes` "
        "(seeded random bytes, or `text` repeated for payload 'text'), waits for the "
        "confirmation, closes; [(seconds from connect to confirmation, confirmed)]; "
        "`pep_options` go to both proxies");
    m.def(
        "run_xmpp_exchange",
        [](const scenario_config& c,
           const std::string& test,
           size_t payload_bytes,
           unsigned messages,
           double gap_s,
           double typing_delay_s,
           bool presence,
           size_t queue_depth,
           const std::string& bridge_options) {
            if (test != "ping_pong" && test != "one_way")
                throw py::value_error("test is ping_pong or one_way, not " + test);
            traffic::xmpp_host_config h;
            // The domains are the run's own (a.example, b.example); set before the
            // options so that the bridge's checks see a complete configuration.
            net::set_xmpp_options(h.bridge, bridge_options);
            h.test = test == "one_way" ? traffic::xmpp_test::one_way
                                       : traffic::xmpp_test::ping_pong;
            h.payload_bytes = payload_bytes;
            h.messages = messages;
            h.gap_s = gap_s;
            h.typing_delay_s = typing_delay_s;
            h.presence = presence;
            h.queue_depth = queue_depth;
            h.seed = c.seed;
            traffic::xmpp_run_result r;
            {
                py::gil_scoped_release unlocked;
                r = traffic::run_xmpp_exchange(c, h);
            }
            py::dict d;
            d["initiator"] = xmpp_report_dict(r.initiator);
            d["responder"] = xmpp_report_dict(r.responder);
            d["nominal_bps"] = r.scenario.nominal_bps;
            d["end_time_s"] = r.scenario.end_time_s;
            d["completed"] = r.scenario.completed;
            d["stopped"] = r.scenario.stopped;
            if (c.trace)
                d["transmissions"] = r.scenario.transmissions;
            return d;
        },
        py::arg("config"),
        py::arg("test") = "ping_pong",
        py::arg("payload_bytes") = 0,
        py::arg("messages") = 20,
        py::arg("gap_s") = 0.0,
        py::arg("typing_delay_s") = 0.0,
        py::arg("presence") = true,
        py::arg("queue_depth") = 8,
        py::arg("bridge_options") = "",
        "Two XMPP servers' bridges (traffic/xmpp_host.h) over the simulated link: "
        "alice@a.example on node 0 and bob@b.example on node 1. ping_pong: `messages` "
        "round trips of `payload_bytes`-character bodies, bob answering after "
        "`typing_delay_s`; one_way: alice sends `messages`, `queue_depth` kept waiting. "
        "`bridge_options` (net xmpp options, e.g. transport=x2x-rcop) go to both "
        "bridges. A dict: initiator / responder reports, nominal_bps, end_time_s, "
        "completed, and with config.trace every transmission");
    m.def("mode_names",
          &phy::s4539_mode_names,
          "Every STANAG 4539 mode name, slowest first");
    m.def("wideband_mode_names",
          &phy::m110d_mode_names,
          "Every STANAG 5069 (110D Appendix D) mode name, by bandwidth and WN");
    m.def(
        "nominal_bps",
        [](const std::string& mode) { return waveform_for(mode).bit_rate; },
        py::arg("mode"));
    m.def(
        "s4539_mode",
        [](const std::string& name) -> py::object {
            const auto m = phy::s4539_mode_by_name(name);
            if (!m)
                return py::none();
            return py::make_tuple(m->user_bps, m->interleaver);
        },
        py::arg("name"),
        "(data_rate, interleaver) of a STANAG 4539 mode the modem blocks send and "
        "receive "
        "(\"9600L\" -> (9600, \"long\")), or None");
    m.def(
        "s4539_mode_problem",
        &phy::s4539_mode_problem,
        py::arg("name"),
        "Why a name is no mode the modem sends, \"\" when it is one (the same reason the "
        "node, the simulator and the modem app give)");
    m.def(
        "s4539_air_time",
        [](const std::string& name, size_t bytes) {
            const auto t = phy::s4539_timing(name);
            if (!t)
                throw std::invalid_argument("s4539_air_time: no STANAG 4539 mode " +
                                            name);
            return phy::transmission_time_of(*t, bytes).total_s;
        },
        py::arg("name"),
        py::arg("bytes"),
        "Seconds one transmission of `bytes` user bytes lasts");
    m.def(
        "s4539_max_bytes",
        [](const std::string& name, double seconds) {
            const auto t = phy::s4539_timing(name);
            if (!t)
                throw std::invalid_argument("s4539_max_bytes: no STANAG 4539 mode " +
                                            name);
            return phy::max_bytes_within(*t, seconds);
        },
        py::arg("name"),
        py::arg("seconds"),
        "The most user bytes one transmission of at most `seconds` carries");
    // Every mode of the modem blocks, either standard (phy/waveform_modes.h).
    m.def("modem_mode_names",
          &phy::waveform_mode_names,
          "Every mode s4539_tx and s4539_rx take: STANAG 4539's, then STANAG 5069's at "
          "every bandwidth (3-48 kHz)");
    m.def("s5069_sample_rate",
          &phy::m110d_sample_rate,
          py::arg("bw_khz"),
          "The modem's complex baseband rate at a STANAG 5069 bandwidth: 4 samples per "
          "symbol (3200 Hz per kHz; 9600 at 3 kHz, 153600 at 48 kHz)");
    m.def(
        "modem_mode",
        [](const std::string& name) -> py::object {
            const auto m = phy::waveform_mode_by_name(name);
            if (!m)
                return py::none();
            return py::make_tuple(m->user_bps, m->interleaver, m->name);
        },
        py::arg("name"),
        "(data_rate, interleaver, name) of a mode of either standard the modem blocks "
        "send and "
        "receive (\"wn8/3khz/l\" -> (6400, \"long\", \"WN8/3kHz/L\")), or None");
    m.def(
        "modem_mode_band",
        [](const std::string& name) {
            const auto m = phy::waveform_mode_by_name(name);
            if (!m)
                throw std::invalid_argument("modem_mode_band: " +
                                            phy::waveform_mode_problem(name));
            return py::make_tuple(phy::waveform_bandwidth_khz(*m),
                                  phy::waveform_symbol_rate(*m),
                                  phy::waveform_carrier_hz(*m));
        },
        py::arg("name"),
        "(bandwidth kHz, symbol rate Bd, carrier Hz on real audio) of a mode of either "
        "standard");
    m.def("modem_mode_problem",
          &phy::waveform_mode_problem,
          py::arg("name"),
          "Why a name is no mode of the modem blocks (either standard), \"\" when it is "
          "one");
    m.def("s5069_reading_choices",
          &phy::m110d_reading_choices,
          "The STANAG 5069 readings of the constants the spec leaves uncertain, as "
          "NAME=VALUE (the "
          "first of each name the default)");
    m.def(
        "s5069_settings_problem",
        [](const std::string& text, bool transmitter) {
            if (transmitter) {
                phy::m110d_transmit_options o;
                return phy::parse_m110d_transmit_settings(text, o);
            }
            phy::m110d_receiver_config c;
            return phy::parse_m110d_receive_settings(text, c);
        },
        py::arg("text"),
        py::arg("transmitter"),
        "Why s5069_settings text is refused by s4539_tx (transmitter) or s4539_rx, \"\" "
        "when taken");
    m.def(
        "air_time",
        [](const std::string& name, size_t bytes) {
            const auto t = phy::waveform_timing_by_name(name);
            if (!t)
                throw std::invalid_argument("air_time: no mode " + name);
            return phy::transmission_time_of(*t, bytes).total_s;
        },
        py::arg("name"),
        py::arg("bytes"),
        "Seconds one transmission of `bytes` user bytes lasts, in a mode of either "
        "standard");
    m.def(
        "max_bytes",
        [](const std::string& name, double seconds) {
            const auto t = phy::waveform_timing_by_name(name);
            if (!t)
                throw std::invalid_argument("max_bytes: no mode " + name);
            return phy::max_bytes_within(*t, seconds);
        },
        py::arg("name"),
        py::arg("seconds"),
        "The most user bytes one transmission of at most `seconds` carries, either "
        "standard");
    m.def(
        "unit_s",
        [](const std::string& name) {
            const auto t = phy::waveform_timing_by_name(name);
            if (!t)
                throw std::invalid_argument("unit_s: no mode " + name);
            return t->unit_s;
        },
        py::arg("name"),
        "Seconds of one interleaver block (or frame), either standard");
    m.def(
        "s4539_unit_s",
        [](const std::string& name) {
            const auto t = phy::s4539_timing(name);
            if (!t)
                throw std::invalid_argument("s4539_unit_s: no STANAG 4539 mode " + name);
            return t->unit_s;
        },
        py::arg("name"),
        "Seconds of one interleaver block (or frame, for the uncoded modes)");
}
