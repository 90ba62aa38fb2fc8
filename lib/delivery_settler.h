/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* How a SIS server tells the node's journal, in the server's own thread and right after
 * the write, that a numbered primitive reached the client's socket (or could not): a
 * kill between the write and the journal's record would repeat that C_PDU after a
 * restart, and a message to the node's thread can wait behind its other work. The node
 * hands its settler along with each numbered primitive (metadata::settler). */
#ifndef INCLUDED_HFSTACK_DELIVERY_SETTLER_H
#define INCLUDED_HFSTACK_DELIVERY_SETTLER_H

#include <cstdint>
#include <memory>

namespace gr {
namespace hfstack {

class delivery_settler
{
public:
    virtual ~delivery_settler() = default;
    // Thread-safe; after the node is gone, does nothing.
    virtual void settle(uint64_t delivery, bool written) = 0;
};

using delivery_settler_ptr = std::shared_ptr<delivery_settler>;

} // namespace hfstack
} // namespace gr

#endif
