/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Makes a node and a SIS server from the installed library, connects them in a top
// block, and checks an option and the counters the node reports: exit 0 when the
// installed headers, library and CMake package work together.

#include <gnuradio/hfstack/node.h>
#include <gnuradio/hfstack/sis_server.h>
#include <gnuradio/top_block.h>

#include <iostream>

int main()
{
    auto node = gr::hfstack::node::make("0.0.0.7", "mode=1200S", 1.0, "", 0.0);
    auto server = gr::hfstack::sis_server::make("127.0.0.1", 0, 4);
    auto tb = gr::make_top_block("downstream");
    tb->msg_connect(server, "sis_out", node, "sis_in");
    tb->msg_connect(node, "sis_out", server, "sis_in");

    if (node->option("mode") != "1200S") {
        std::cerr << "node option mode: " << node->option("mode") << "\n";
        return 1;
    }
    if (node->counters().empty()) {
        std::cerr << "node has no counters\n";
        return 1;
    }
    tb->start();
    tb->stop();
    tb->wait();
    std::cout << "node " << node->alias() << " made from the installed gr-hfstack, "
              << node->counters().size() << " counters\n";
    return 0;
}
