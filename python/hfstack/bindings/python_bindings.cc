/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

namespace py = pybind11;

// Headers for binding functions
/**************************************/
// The following comment block is used for
// gr_modtool to insert function prototypes
// Please do not delete
/**************************************/
// BINDING_FUNCTION_PROTOTYPES(
void bind_pcap_sink(py::module& m);
void bind_node(py::module& m);
void bind_sis_server(py::module& m);
void bind_hf_channel(py::module& m);
void bind_s4539_tx(py::module& m);
void bind_s4539_rx(py::module& m);
void bind_modem_emulator(py::module& m);
void bind_ip_client(py::module& m);
// ) END BINDING_FUNCTION_PROTOTYPES

// Kernel (codec) bindings, hand-written, in the submodule hfstack.dl.
void bind_dl_dpdu(py::module& m);
void bind_dl_sis(py::module& m);
void bind_dl_spdu(py::module& m);
// Simulator and test client, hand-written, in the submodule hfstack.sim.
void bind_sim(py::module& m);
// HF-PEP kernel for its Python socket driver, hand-written, in the submodule hfstack.net.
void bind_net(py::module& m);
// The XMPP bridge's kernel for hfstack-xmpp, hand-written, in hfstack.net too.
void bind_xmpp(py::module& m);
void bind_logs(py::module& m);
// The KISS gateway and the ARDOP host interface, hand-written, in hfstack.net too.
void bind_hamradio(py::module& m);

// import_array() returns NULL on newer Pythons; this wrapper keeps the C API
// initialisation that numpy needs.
void* init_numpy()
{
    import_array();
    return NULL;
}

PYBIND11_MODULE(hfstack_python, m)
{
    init_numpy();

    // Allow access to base block methods
    py::module::import("gnuradio.gr");

    py::module dl = m.def_submodule("dl", "STANAG 5066 wire-format codecs and captures");
    bind_dl_dpdu(dl);
    bind_dl_sis(dl);
    bind_dl_spdu(dl);
    py::module sim =
        m.def_submodule("sim", "Virtual-time HF network simulator and test client");
    bind_sim(sim);
    py::module net = m.def_submodule("net", "HF-PEP over SLEP: the protocol kernel");
    bind_net(net);
    bind_xmpp(net);
    bind_logs(m);
    bind_hamradio(net);

    /**************************************/
    // The following comment block is used for
    // gr_modtool to insert binding function calls
    // Please do not delete
    /**************************************/
    // BINDING_FUNCTION_CALLS(
    bind_pcap_sink(m);
    bind_node(m);
    bind_sis_server(m);
    bind_hf_channel(m);
    bind_s4539_tx(m);
    bind_s4539_rx(m);
    bind_modem_emulator(m);
    bind_ip_client(m);
    // ) END BINDING_FUNCTION_CALLS
}
