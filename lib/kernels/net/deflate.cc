/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "deflate.h"

#include <zlib.h>

#include <cstring>
#include <stdexcept>

namespace gr {
namespace hfstack {
namespace net {

namespace {

constexpr int raw_window_bits = -15; // raw DEFLATE, 32 KiB window
constexpr size_t chunk = 16384;

void run_deflate(z_stream& z, const uint8_t* in, size_t size, int flush, bytes& out)
{
    z.next_in = const_cast<Bytef*>(in);
    z.avail_in = uInt(size);
    uint8_t buf[chunk];
    do {
        z.next_out = buf;
        z.avail_out = sizeof buf;
        const int rc = ::deflate(&z, flush);
        if (rc == Z_STREAM_ERROR)
            throw std::runtime_error("deflate: stream error");
        out.insert(out.end(), buf, buf + (sizeof buf - z.avail_out));
    } while (z.avail_out == 0 || z.avail_in > 0);
}

} // namespace

struct deflater::state {
    z_stream z{};
};

deflater::deflater(deflate_matching matching,
                   deflate_flush flush,
                   const std::string& dictionary)
    : d(std::make_unique<state>()), d_flush(flush)
{
    if (deflateInit2(&d->z,
                     Z_DEFAULT_COMPRESSION,
                     Z_DEFLATED,
                     raw_window_bits,
                     8,
                     matching == deflate_matching::few_short_matches
                         ? Z_FILTERED
                         : Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    if (!dictionary.empty() &&
        deflateSetDictionary(&d->z,
                             reinterpret_cast<const Bytef*>(dictionary.data()),
                             uInt(dictionary.size())) != Z_OK)
        throw std::runtime_error("deflateSetDictionary failed");
}

deflater::~deflater()
{
    if (d)
        deflateEnd(&d->z);
}

deflater::deflater(deflater&&) noexcept = default;
deflater& deflater::operator=(deflater&&) noexcept = default;

void deflater::write(const uint8_t* plain, size_t size, bytes& out)
{
    if (size == 0)
        return;
    run_deflate(d->z, plain, size, Z_NO_FLUSH, out);
    d_pending = true;
}

void deflater::flush(bytes& out)
{
    if (!d_pending)
        return;
    run_deflate(d->z,
                nullptr,
                0,
                d_flush == deflate_flush::partial ? Z_PARTIAL_FLUSH : Z_SYNC_FLUSH,
                out);
    d_pending = false;
}

struct inflater::state {
    z_stream z{};
    bool ended = false;
    bool holds_output = false;
};

inflater::inflater(const std::string& dictionary) : d(std::make_unique<state>())
{
    if (inflateInit2(&d->z, raw_window_bits) != Z_OK)
        throw std::runtime_error("inflateInit2 failed");
    // A raw stream takes its dictionary at once (no header asks for it).
    if (!dictionary.empty() &&
        inflateSetDictionary(&d->z,
                             reinterpret_cast<const Bytef*>(dictionary.data()),
                             uInt(dictionary.size())) != Z_OK) {
        inflateEnd(&d->z);
        throw std::runtime_error("inflateSetDictionary failed");
    }
}

inflater::~inflater()
{
    if (d)
        inflateEnd(&d->z);
}

inflater::inflater(inflater&&) noexcept = default;
inflater& inflater::operator=(inflater&&) noexcept = default;

bool inflater::finished() const { return d->ended; }

bool inflater::holds_output() const { return d->holds_output; }

std::optional<size_t>
inflater::read(const uint8_t* in, size_t size, size_t max_out, bytes& out)
{
    if (d->ended)
        return size == 0 ? std::optional<size_t>(0) : std::nullopt; // bytes after the end
    d->z.next_in = const_cast<Bytef*>(in);
    d->z.avail_in = uInt(size);
    const size_t start = out.size();
    out.resize(start + max_out);
    d->z.next_out = out.data() + start;
    d->z.avail_out = uInt(max_out);
    int rc = Z_OK;
    while (d->z.avail_out > 0 && (d->z.avail_in > 0 || d->holds_output)) {
        d->holds_output = false; // until this call fills its output again
        rc = ::inflate(&d->z, Z_SYNC_FLUSH);
        if (rc == Z_STREAM_END) {
            d->ended = true;
            break;
        }
        if (rc == Z_BUF_ERROR)
            break; // needs more input than there is
        if (rc != Z_OK) {
            out.resize(start);
            return std::nullopt;
        }
    }
    d->holds_output = !d->ended && d->z.avail_out == 0;
    out.resize(start + (max_out - d->z.avail_out));
    return size - d->z.avail_in;
}

bytes deflate_once(const bytes& plain)
{
    // A final block (Z_FINISH): the datagram is a complete DEFLATE stream.
    bytes out;
    z_stream s{};
    if (deflateInit2(&s,
                     Z_DEFAULT_COMPRESSION,
                     Z_DEFLATED,
                     raw_window_bits,
                     8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    run_deflate(s, plain.data(), plain.size(), Z_FINISH, out);
    deflateEnd(&s);
    return out;
}

std::optional<bytes> inflate_once(const bytes& compressed, size_t max_size)
{
    inflater z;
    bytes out;
    const auto used = z.read(compressed.data(), compressed.size(), max_size + 1, out);
    if (!used || *used != compressed.size() || out.size() > max_size || !z.finished())
        return std::nullopt;
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
