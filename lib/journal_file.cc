/* -*- c++ -*- */
/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "journal_file.h"

#include "dl/node_journal.h"

#include <system_error>
#include <cerrno>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace gr {
namespace hfstack {

namespace {

bool write_all(int fd, const uint8_t* data, size_t size)
{
    for (size_t at = 0; at < size;) {
        const ssize_t n = ::write(fd, data + at, size - at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        at += size_t(n);
    }
    return true;
}

bool write_all(int fd, const std::vector<uint8_t>& b)
{
    return write_all(fd, b.data(), b.size());
}

} // namespace

journal_file::journal_file(const std::string& path) : d_path(path)
{
    d_fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (d_fd < 0)
        throw std::system_error(errno, std::generic_category(), "cannot open " + path);
}

journal_file::~journal_file() { close(); }

void journal_file::close()
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (d_fd >= 0)
        ::close(d_fd);
    d_fd = -1;
}

bool journal_file::fail()
{
    // The file stays open (only the node's thread closes or replaces it); nothing more
    // is written to it.
    d_failed = true;
    return false;
}

bool journal_file::failed() const
{
    std::lock_guard<std::mutex> lock(d_mutex);
    return d_failed;
}

bool journal_file::append(const std::vector<uint8_t>& records)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (d_fd < 0 || d_failed)
        return !d_failed;
    return write_all(d_fd, records) || fail();
}

bool journal_file::sync()
{
    // The node's thread is the only one to replace d_fd (rewrite, close), and it is here:
    // the disk is waited for without the lock, so the server's settled records do not
    // wait for it.
    if (const bool bad = failed(); d_fd < 0 || bad)
        return !bad;
    if (::fdatasync(d_fd) == 0)
        return true;
    std::lock_guard<std::mutex> lock(d_mutex);
    return fail();
}

bool journal_file::rewrite(const std::vector<uint8_t>& whole)
{
    if (const bool bad = failed(); d_fd < 0 || bad)
        return !bad;
    const std::string fresh = d_path + ".new";
    const int fd =
        ::open(fresh.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        std::lock_guard<std::mutex> lock(d_mutex);
        return fail();
    }
    if (!write_all(fd, whole) || ::fdatasync(fd) != 0) {
        const int saved = errno;
        ::close(fd);
        std::lock_guard<std::mutex> lock(d_mutex);
        errno = saved;
        return fail();
    }
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        // Settled records the state above may not know of: the server wrote them to the
        // old file, and from here on writes to the new one.
        std::vector<uint8_t> settled;
        for (const auto& [delivery, written] : d_unseen_settled) {
            const auto r = dl::journal_settled_record(delivery, written);
            settled.insert(settled.end(), r.begin(), r.end());
        }
        if (!write_all(fd, settled) || ::rename(fresh.c_str(), d_path.c_str()) != 0) {
            const int saved = errno;
            ::close(fd);
            errno = saved;
            return fail();
        }
        ::close(d_fd);
        d_fd = fd;
    }
    // The rename itself durable.
    const std::string dir = std::filesystem::path(d_path).parent_path().string();
    const int dfd =
        ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return true;
}

void journal_file::settle(uint64_t delivery, bool written)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    if (d_fd < 0 || d_failed)
        return;
    // Not made durable: a kill leaves it in the page cache; a power cut may lose it,
    // and the C_PDU is then repeated.
    if (!write_all(d_fd, dl::journal_settled_record(delivery, written))) {
        fail();
        return;
    }
    d_unseen_settled[delivery] = written;
    if (d_unseen_settled.size() > max_unseen_settled)
        d_unseen_settled.erase(d_unseen_settled.begin());
}

void journal_file::settled_seen(uint64_t delivery)
{
    std::lock_guard<std::mutex> lock(d_mutex);
    d_unseen_settled.erase(delivery);
}

} // namespace hfstack
} // namespace gr
