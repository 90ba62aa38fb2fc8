/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "sis_server_impl.h"

#include <gnuradio/hfstack/metadata.h>
#include <gnuradio/io_signature.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace gr {
namespace hfstack {

namespace {
const pmt::pmt_t port_out = pmt::mp("sis_out");
const pmt::pmt_t port_in = pmt::mp("sis_in");

// Bounds every way a connection can linger: no "disconnect" after a fatal event, a
// client that stops reading while we flush, a peer that never closes after we did.
constexpr auto close_timeout = std::chrono::seconds(2);
constexpr size_t read_chunk = 65536;

std::string errno_text(int err) { return std::strerror(err); }
} // namespace

sis_server::sptr sis_server::make(const std::string& address, int port, int max_clients)
{
    return gnuradio::make_block_sptr<sis_server_impl>(address, port, max_clients);
}

sis_server_impl::sis_server_impl(const std::string& address, int port, int max_clients)
    : gr::block(
          "sis_server", gr::io_signature::make(0, 0, 0), gr::io_signature::make(0, 0, 0)),
      d_address(address),
      d_port(port),
      d_max_clients(max_clients > 0 ? size_t(max_clients) : 0),
      d_bound_port(port)
{
    if (port < 0 || port > 65535)
        throw std::invalid_argument("sis_server: port must be 0..65535, not " +
                                    std::to_string(port));
    if (max_clients < 1)
        throw std::invalid_argument("sis_server: max_clients must be at least 1, not " +
                                    std::to_string(max_clients));
    message_port_register_out(port_out);
    message_port_register_in(port_in);
    set_msg_handler(port_in, [this](const pmt::pmt_t& msg) {
        d_faults(d_logger, "in", [&] { handle_sis_in(msg); });
    });
}

sis_server_impl::~sis_server_impl()
{
    if (d_thread.joinable())
        stop();
    if (d_listen_fd >= 0) // bound by check_topology() of a flowgraph that never started
        ::close(d_listen_fd);
}

// GNU Radio's scheduler calls start() in the block's thread before a start barrier,
// so an exception there leaves top_block.start() waiting forever. check_topology()
// runs in the caller's thread first: binding there makes tb.start() raise instead.
bool sis_server_impl::check_topology(int, int)
{
    if (d_listen_fd < 0)
        open_listener();
    return true;
}

void sis_server_impl::open_listener()
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string where =
        (d_address.find(':') == std::string::npos ? d_address : "[" + d_address + "]") +
        ":" + std::to_string(d_port);
    const int gai =
        ::getaddrinfo(d_address.c_str(), std::to_string(d_port).c_str(), &hints, &found);
    if (gai != 0)
        throw std::runtime_error("sis_server: cannot listen on " + where + ": " +
                                 ::gai_strerror(gai));
    int err = 0;
    for (addrinfo* a = found; a && d_listen_fd < 0; a = a->ai_next) {
        const int fd =
            ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = errno;
            continue;
        }
        const int one = 1; // restart at once despite connections in TIME_WAIT
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
            d_listen_fd = fd;
        } else {
            err = errno;
            ::close(fd);
        }
    }
    ::freeaddrinfo(found);
    // A fresh network namespace has its loopback down: its addresses cannot be had.
    const bool loopback =
        d_address.rfind("127.", 0) == 0 || d_address == "::1" || d_address == "localhost";
    if (d_listen_fd < 0)
        throw std::runtime_error(
            "sis_server: cannot listen on " + where + ": " + errno_text(err) +
            (err == EADDRNOTAVAIL && loopback
                 ? " (is the loopback interface down in this network namespace? "
                   "ip link set lo up)"
                 : ""));

    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(d_listen_fd, reinterpret_cast<sockaddr*>(&bound), &len);
    d_bound_port = bound.ss_family == AF_INET6
                       ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                       : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

bool sis_server_impl::start()
{
    if (d_thread.joinable())
        return block::start();
    if (d_listen_fd < 0) // not started by a flowgraph (check_topology not called)
        open_listener();

    // Wakes poll() when sis_in queues bytes or stop() is called.
    d_wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (d_wake_fd < 0) {
        d_logger->error("cannot serve SIS clients: eventfd: {}", errno_text(errno));
        return false;
    }
    d_running = true;
    d_thread = std::thread([this] { run(); });
    d_logger->info("listening on {}:{}", d_address, int(d_bound_port));
    return block::start();
}

bool sis_server_impl::stop()
{
    if (d_thread.joinable()) {
        d_running = false;
        wake();
        d_thread.join();
        // Every "connected" gets its "closed", even when the flowgraph stops first.
        for (auto& [id, c] : d_connections) {
            if (!c.draining)
                post_event(id, "closed");
            if (c.fd < 0)
                continue;
            // Read what the client sent last: closing with unread input would reset the
            // connection instead of closing it in order.
            uint8_t buf[4096];
            ::shutdown(c.fd, SHUT_WR);
            while (::recv(c.fd, buf, sizeof buf, 0) > 0) {
            }
            ::close(c.fd);
        }
        d_connections.clear();
        d_clients = 0;
        for (const auto& refused : d_refused)
            ::close(refused.first);
        d_refused.clear();
        ::close(d_listen_fd);
        ::close(d_wake_fd);
        d_listen_fd = d_wake_fd = -1;
        std::lock_guard<std::mutex> lock(d_mutex);
        d_commands.clear();
    }
    return block::stop();
}

void sis_server_impl::wake()
{
    const uint64_t one = 1;
    if (d_wake_fd >= 0)
        (void)!::write(d_wake_fd, &one, sizeof one);
}

void sis_server_impl::post_event(long id, const char* event, pmt::pmt_t extra)
{
    pmt::pmt_t meta = pmt::make_dict();
    meta = pmt::dict_add(meta, metadata::client_id(), pmt::from_long(id));
    meta = pmt::dict_add(meta, metadata::client_event(), pmt::mp(event));
    if (pmt::is_dict(extra))
        meta = pmt::dict_update(meta, extra);
    message_port_pub(port_out, pmt::cons(meta, pmt::make_u8vector(0, 0)));
}

void sis_server_impl::post_settled(long id,
                                   long delivery,
                                   bool written,
                                   const delivery_settler_ptr& settler)
{
    if (delivery && settler)
        settler->settle(uint64_t(delivery), written);
    if (delivery)
        post_event(id,
                   written ? "written" : "dropped",
                   pmt::dict_add(
                       pmt::make_dict(), metadata::delivery(), pmt::from_long(delivery)));
}

// Scheduler thread: only queue the work; the server thread owns the sockets.
void sis_server_impl::handle_sis_in(const pmt::pmt_t& msg)
{
    if (!pmt::is_pair(msg) || !pmt::is_dict(pmt::car(msg)) ||
        !pmt::is_u8vector(pmt::cdr(msg))) {
        d_logger->warn("dropping a message that is not a PDU (dict . u8vector)");
        return;
    }
    const pmt::pmt_t meta = pmt::car(msg);
    const pmt::pmt_t id = pmt::dict_ref(meta, metadata::client_id(), pmt::PMT_NIL);
    if (!pmt::is_integer(id)) {
        d_logger->warn("dropping a PDU without an integer client_id");
        return;
    }
    const pmt::pmt_t delivery = pmt::dict_ref(meta, metadata::delivery(), pmt::PMT_NIL);
    command cmd{ pmt::to_long(id),
                 false,
                 {},
                 {},
                 pmt::is_integer(delivery) ? pmt::to_long(delivery) : 0 };
    const pmt::pmt_t settler = pmt::dict_ref(meta, metadata::settler(), pmt::PMT_NIL);
    if (cmd.delivery && pmt::is_any(settler)) {
        try {
            cmd.settler = boost::any_cast<delivery_settler_ptr>(pmt::any_ref(settler));
        } catch (const boost::bad_any_cast&) {
            d_logger->warn("client {}: a settler of another type, ignored",
                           cmd.client_id);
        }
    }
    const pmt::pmt_t event = pmt::dict_ref(meta, metadata::client_event(), pmt::PMT_NIL);
    if (pmt::is_symbol(event)) {
        if (pmt::symbol_to_string(event) != "disconnect") {
            d_logger->warn("client {}: ignoring event \"{}\" on sis_in",
                           cmd.client_id,
                           pmt::symbol_to_string(event));
            return;
        }
        cmd.disconnect = true;
        const pmt::pmt_t reason = pmt::dict_ref(meta, metadata::reason(), pmt::PMT_NIL);
        cmd.reason =
            pmt::is_symbol(reason) ? pmt::symbol_to_string(reason) : "no reason given";
    } else {
        size_t n = 0;
        const uint8_t* p = pmt::u8vector_elements(pmt::cdr(msg), n);
        if (n == 0)
            return;
        cmd.data.assign(p, p + n);
    }
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_commands.push_back(std::move(cmd));
    }
    wake();
}

void sis_server_impl::run()
{
    std::vector<pollfd> fds;
    std::vector<long> ids; // ids[i] owns fds[i + 2]
    clock::time_point listen_paused_until{};
    while (d_running) {
        const auto now = clock::now();
        fds.clear();
        ids.clear();
        fds.push_back({ d_wake_fd, POLLIN, 0 });
        fds.push_back({ now >= listen_paused_until ? d_listen_fd : -1, POLLIN, 0 });
        clock::time_point next =
            now >= listen_paused_until ? clock::time_point::max() : listen_paused_until;
        for (const auto& [id, c] : d_connections) {
            fds.push_back({ c.fd, short(POLLIN | (c.out_bytes ? POLLOUT : 0)), 0 });
            ids.push_back(id);
            next = std::min(next, c.deadline);
        }
        const size_t first_refused = fds.size();
        for (const auto& [fd, deadline] : d_refused) {
            fds.push_back({ fd, POLLIN, 0 });
            next = std::min(next, deadline);
        }
        int timeout_ms = -1; // the safety-net deadlines below are the only timers
        if (next != clock::time_point::max())
            timeout_ms = std::max(
                0, int(std::chrono::ceil<std::chrono::milliseconds>(next - now).count()));
        const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
        if (ready < 0 && errno != EINTR) {
            d_logger->error("poll: {}", errno_text(errno));
            break;
        }
        if (!d_running)
            break;
        if (fds[0].revents) {
            uint64_t count;
            (void)!::read(d_wake_fd, &count, sizeof count);
        }
        apply_commands();
        drain_refused(fds, first_refused);
        // Out of descriptors, the listener stays readable: pause it rather than spin.
        if (fds[1].revents && !accept_clients())
            listen_paused_until = clock::now() + std::chrono::seconds(1);

        for (size_t i = 0; i < ids.size(); ++i) {
            auto it = d_connections.find(ids[i]);
            if (it == d_connections.end() || it->second.fd < 0)
                continue;
            // A kernel failure on one client's bytes ends that client, not the server.
            if ((fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) &&
                !d_faults(
                    d_logger, "client", [&] { read_client(it->first, it->second); }) &&
                it->second.fd >= 0)
                drop(it->first, it->second, "an internal error on its bytes");
        }
        const auto after = clock::now();
        for (auto& [id, c] : d_connections) {
            if (c.fd >= 0 && c.out_bytes)
                write_client(id, c);
            if (c.fd >= 0 && c.disconnecting && !c.draining && c.out_bytes == 0)
                finish(id, c);
            if (c.fd >= 0 && after >= c.deadline) {
                if (c.draining)
                    drop(id, c, "");
                else if (c.disconnecting)
                    drop(id, c, "it does not read what is left to send");
                else
                    drop(id, c, "the node did not disconnect it after a fatal error");
            }
        }
        for (auto it = d_connections.begin(); it != d_connections.end();)
            it = it->second.fd < 0 ? d_connections.erase(it) : std::next(it);
        d_clients = d_connections.size();
    }
}

void sis_server_impl::apply_commands()
{
    std::deque<command> commands;
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        commands.swap(d_commands);
    }
    for (auto& cmd : commands) {
        auto it = d_connections.find(cmd.client_id);
        if (it == d_connections.end() || it->second.fd < 0 || it->second.draining) {
            // A client that just left is routine. The node's sis_out reaches every client
            // of the flowgraph (an IP client beside this server has an id of its own):
            // an id this server never gave out is another client's, not an error.
            const bool known = cmd.client_id > 0 && cmd.client_id < d_next_id;
            const char* what = cmd.disconnect ? "disconnect" : "SIS bytes";
            if (known) {
                d_logger->debug("client {} is gone: dropping {}", cmd.client_id, what);
                post_settled(cmd.client_id, cmd.delivery, false, cmd.settler);
            }
            continue;
        }
        connection& c = it->second;
        if (cmd.disconnect) {
            if (!c.disconnecting)
                d_logger->info("client {}: disconnecting: {}", cmd.client_id, cmd.reason);
            c.disconnecting = true;
            c.deadline = clock::now() + close_timeout;
            continue;
        }
        if (c.out_bytes + cmd.data.size() > max_queued_bytes) {
            drop(cmd.client_id, c, "it does not read: more than 4 MiB queued for it");
            post_settled(cmd.client_id, cmd.delivery, false, cmd.settler);
            continue;
        }
        c.out_bytes += cmd.data.size();
        c.out.push_back({ std::move(cmd.data), cmd.delivery, std::move(cmd.settler) });
    }
}

bool sis_server_impl::accept_clients()
{
    while (true) {
        const int fd =
            ::accept4(d_listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            const int err = errno;
            if (err == EINTR || err == ECONNABORTED)
                continue;
            if (err == EAGAIN || err == EWOULDBLOCK)
                return true;
            d_logger->error("accept: {}", errno_text(err));
            return false;
        }
        if (d_connections.size() >= d_max_clients) {
            d_logger->warn("refusing a connection: already {} clients (max_clients)",
                           d_connections.size());
            refuse(fd);
            continue;
        }
        const int one = 1; // SIS primitives are small and interactive
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const long id = d_next_id++;
        d_connections[id].fd = fd;
        d_clients = d_connections.size();
        d_logger->debug("client {} connected", id);
        // Every numbered primitive is reported "written" or "dropped" (the node's
        // journal delivers again after a restart what reached no socket).
        post_event(
            id,
            "connected",
            pmt::dict_add(pmt::make_dict(), metadata::reports_written(), pmt::PMT_T));
    }
}

void sis_server_impl::read_client(long id, connection& c)
{
    uint8_t buf[read_chunk];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        drop(id, c, "");
        return;
    }
    // Ignore input once the node has been told to drop this client or has dropped it.
    if (c.fatal || c.disconnecting || c.draining)
        return;
    std::vector<dl::sis_primitive> prims;
    c.reassembler.push(buf, size_t(n), prims);
    answer(id, c);
    for (const auto& p : prims) {
        pmt::pmt_t meta = pmt::make_dict();
        meta = pmt::dict_add(meta, metadata::client_id(), pmt::from_long(id));
        meta = pmt::dict_add(meta, metadata::from_client(), pmt::PMT_T);
        // Re-encoding cannot fail on a decoded primitive, but a throw here would kill the
        // server thread, so guard it anyway.
        try {
            const dl::bytes frame = dl::encode(p);
            message_port_pub(port_out,
                             pmt::cons(meta, pmt::init_u8vector(frame.size(), frame)));
        } catch (const std::exception& e) {
            d_logger->error("client {}: cannot re-encode {}: {}",
                            id,
                            dl::to_string(p.type),
                            e.what());
        }
    }
    check_garbage(id, c);
}

// Requests the reassembler answers itself (the node never sees them): an oversized
// UNIDATA request is rejected with reason 4, an undecodable bind with BIND_REJECTED.
void sis_server_impl::answer(long id, connection& c)
{
    for (const auto& a : c.reassembler.take_answers()) {
        d_logger->info("client {}: answering {} ({})",
                       id,
                       dl::to_string(a.type),
                       a.type == dl::sis_type::bind_rejected
                           ? c.reassembler.last_error()
                           : "U_PDU larger than the MTU");
        dl::bytes frame = dl::encode(a);
        if (c.out_bytes + frame.size() > max_queued_bytes) {
            drop(id, c, "it does not read: more than 4 MiB queued for it");
            return;
        }
        c.out_bytes += frame.size();
        c.out.push_back({ std::move(frame) });
    }
}

// Beyond max_clients: S_BIND_REJECTED (not enough resources) before the close, so the
// client learns why instead of seeing a bare TCP close. The frame is tiny and the
// socket new, so one non-blocking send either takes it whole or the peer is gone.
void sis_server_impl::refuse(int fd)
{
    dl::sis_primitive p;
    p.type = dl::sis_type::bind_rejected;
    p.reason = uint8_t(dl::sis_bind_rejected_reason::not_enough_resources);
    const dl::bytes frame = dl::encode(p);
    (void)!::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    // Orderly close: our FIN follows the rejection, and the socket is read (and its
    // input discarded) until the client closes, since closing with unread input would
    // reset the connection and could destroy the rejection before the client reads it.
    ::shutdown(fd, SHUT_WR);
    d_refused.push_back({ fd, clock::now() + close_timeout });
}

void sis_server_impl::drain_refused(const std::vector<pollfd>& fds, size_t first)
{
    const auto now = clock::now();
    for (size_t i = 0; i < d_refused.size();) {
        auto& [fd, deadline] = d_refused[i];
        bool done = now >= deadline;
        if (!done && first + i < fds.size() && fds[first + i].revents) {
            uint8_t buf[4096];
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            done = n == 0 ||
                   (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
        }
        if (done) {
            ::close(fd);
            d_refused.erase(d_refused.begin() + std::ptrdiff_t(i));
            // fds[first + i] now describes a socket already gone: check the rest later.
            first = fds.size();
        } else {
            ++i;
        }
    }
}

// One "invalid" event per read that brought garbage or rejected frames (an oversized
// UNIDATA request is a request answered with its rejection, not garbage).
void sis_server_impl::check_garbage(long id, connection& c)
{
    const dl::sis_counters& now = c.reassembler.counters();
    const uint64_t garbage = now.garbage_bytes - c.reported.garbage_bytes;
    const uint64_t errors = now.decode_errors - c.reported.decode_errors;
    const uint64_t oversized = (now.oversized - now.oversized_requests) -
                               (c.reported.oversized - c.reported.oversized_requests);
    if (!garbage && !errors && !oversized)
        return;
    c.reported = now;

    std::string reason;
    if (garbage)
        reason = std::to_string(garbage) + " bytes without SIS sync";
    if (errors || oversized) {
        if (!reason.empty())
            reason += "; ";
        if (errors == 1 && !oversized)
            reason += "undecodable " + c.reassembler.last_error();
        else if (oversized == 1 && !errors)
            reason += c.reassembler.last_error();
        else
            reason += std::to_string(errors) + " undecodable and " +
                      std::to_string(oversized) +
                      " oversized frames, the last: " + c.reassembler.last_error();
    }
    c.fatal = now.garbage_bytes > max_garbage_bytes ||
              now.decode_errors + now.oversized - now.oversized_requests > max_bad_frames;
    if (c.fatal) {
        reason += "; too many invalid bytes or frames";
        c.deadline = clock::now() + close_timeout;
    }
    d_logger->info("client {}: {}", id, reason);
    pmt::pmt_t extra = pmt::make_dict();
    extra = pmt::dict_add(extra, metadata::reason(), pmt::mp(reason));
    extra = pmt::dict_add(extra, metadata::fatal(), pmt::from_bool(c.fatal));
    post_event(id, "invalid", extra);
}

void sis_server_impl::write_client(long id, connection& c)
{
    while (!c.out.empty()) {
        const dl::bytes& front = c.out.front().data;
        const ssize_t n = ::send(
            c.fd, front.data() + c.out_offset, front.size() - c.out_offset, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                drop(id, c, "");
            return;
        }
        c.out_bytes -= size_t(n);
        c.out_offset += size_t(n);
        if (c.disconnecting) // a slow reader still gets what is left while it progresses
            c.deadline = clock::now() + close_timeout;
        if (c.out_offset == front.size()) {
            post_settled(id, c.out.front().delivery, true, c.out.front().settler);
            c.out.pop_front();
            c.out_offset = 0;
        }
    }
}

// Orderly close once everything was written: our FIN follows the last bytes, and the
// socket is kept (input discarded) until the peer closes too, since closing with
// unread input would send a reset that can destroy those last bytes at the peer.
void sis_server_impl::finish(long id, connection& c)
{
    ::shutdown(c.fd, SHUT_WR);
    c.draining = true;
    c.deadline = clock::now() + close_timeout;
    post_event(id, "closed");
}

// Immediate close: the peer closed, failed, or misbehaves (`why` logged if not empty).
void sis_server_impl::drop(long id, connection& c, const std::string& why)
{
    if (!why.empty())
        d_logger->warn("client {}: closing: {}", id, why);
    ::close(c.fd);
    c.fd = -1;
    for (const auto& f : c.out)
        post_settled(id, f.delivery, false, f.settler);
    c.out.clear();
    c.out_bytes = 0;
    if (!c.draining)
        post_event(id, "closed");
    c.draining = true;
}

} // namespace hfstack
} // namespace gr
