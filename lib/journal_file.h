/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The node's journal on disk (dl/node_journal.h gives its records): the engine's records
 * appended by the node's thread, a settled record appended by the SIS server's thread the
 * moment a numbered C_PDU reaches its client's socket, and now and then the whole journal
 * rewritten from the engine's state.
 *
 * Two things keep a restart from repeating a C_PDU the client already has:
 * - a rewrite's slow part (the new file written and made durable) holds no lock, so a
 *   server thread's settled record never waits behind it (a kill while it waited lost
 *   the record);
 * - the engine's state a rewrite is made from can still count as unsettled a delivery
 *   whose settled record the server has written to the old file (the server's report
 *   reaches the engine later): every settled record the engine has not yet seen
 *   (settled_seen) is appended to the new file again before it takes the old one's
 *   place. A settled record for a delivery the journal does not hold is read as
 *   nothing. */
#ifndef INCLUDED_HFSTACK_JOURNAL_FILE_H
#define INCLUDED_HFSTACK_JOURNAL_FILE_H

#include "delivery_settler.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {

class journal_file : public delivery_settler
{
public:
    // Opens `path` for appending, creating it. Throws std::system_error.
    explicit journal_file(const std::string& path);
    ~journal_file() override;
    journal_file(const journal_file&) = delete;
    journal_file& operator=(const journal_file&) = delete;

    // The node's thread. Each returns false (errno says why) on a failed write; the
    // journal then writes nothing more.
    bool append(const std::vector<uint8_t>& records);
    bool sync(); // fdatasync of what was appended
    // The whole journal anew: a new file beside the old one, durable, then in its place.
    bool rewrite(const std::vector<uint8_t>& whole);
    // The engine has taken delivery's settled report (its own settled record is then in
    // the journal, or a rewrite's state no longer holds the delivery).
    void settled_seen(uint64_t delivery);
    // Nothing is written any more (the node is gone; a server may still hold us).
    void close();

    // Any thread.
    void settle(uint64_t delivery, bool written) override;
    bool failed() const;
    const std::string& path() const { return d_path; }

    // Settled records not yet seen by the engine are kept up to this many (the oldest
    // forgotten first: a report the engine never gets can cost at most a repeat).
    static constexpr size_t max_unseen_settled = 65536;

private:
    bool fail(); // with d_mutex held
    const std::string d_path;
    mutable std::mutex d_mutex;
    int d_fd = -1;
    bool d_failed = false;
    std::map<uint64_t, bool> d_unseen_settled; // delivery -> written
};

} // namespace hfstack
} // namespace gr

#endif
