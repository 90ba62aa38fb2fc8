/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* DEFLATE (RFC 1951, raw: no zlib or gzip wrapper) through zlib, as SLEP uses it: one
 * shot for a datagram, and a continuous stream per direction of a SLEP stream, flushed
 * at PDU boundaries (Z_SYNC_FLUSH) so the far end can inflate what it has. Inflation
 * is bounded by the caller's output size, so a small PDU cannot expand into unbounded
 * memory. */
#ifndef HFSTACK_KERNELS_NET_DEFLATE_H
#define HFSTACK_KERNELS_NET_DEFLATE_H

#include "dl/codec.h"

#include <memory>
#include <optional>
#include <string>

namespace gr {
namespace hfstack {
namespace net {

using dl::bytes;

bytes deflate_once(const bytes& plain);
// nullopt for a malformed stream or one that inflates beyond `max_size`.
std::optional<bytes> inflate_once(const bytes& compressed, size_t max_size);

// How a deflater looks for repeats. `few_short_matches` (zlib's Z_FILTERED) keeps only
// matches longer than 5 bytes: text whose short repeats are chance, as in a hex dump of
// random bytes, then costs its literals' entropy (about 4 bits a hex digit) instead of
// matches that take more bits than the literals they replace, while the long repeats
// of markup still match.
enum class deflate_matching { usual, few_short_matches };

// How a flush ends what was written. `sync` (Z_SYNC_FLUSH) byte-aligns, with an empty
// stored block (00 00 FF FF, 4-5 bytes); `partial` (Z_PARTIAL_FLUSH) ends the block
// with an empty fixed-code block of 10 bits instead: the far end can inflate
// everything written so far either way, and a partial flush costs 3-4 bytes less.
enum class deflate_flush { sync, partial };

class deflater
{
public:
    // `dictionary`: text both ends know before the first byte (RFC 1950's preset
    // dictionary, for a raw stream agreed out of band): the first writes may refer to
    // it as to earlier history. The inflater must be given the same.
    explicit deflater(deflate_matching matching = deflate_matching::usual,
                      deflate_flush flush = deflate_flush::sync,
                      const std::string& dictionary = "");
    ~deflater();
    deflater(deflater&&) noexcept;
    deflater& operator=(deflater&&) noexcept;
    // Compresses `plain` (may keep some of it inside until flush()) into `out`.
    void write(const uint8_t* plain, size_t size, bytes& out);
    // Ends the current block so the far end can inflate everything written so far.
    void flush(bytes& out);
    bool pending() const { return d_pending; }

private:
    struct state;
    std::unique_ptr<state> d;
    bool d_pending = false;
    deflate_flush d_flush = deflate_flush::sync;
};

class inflater
{
public:
    explicit inflater(const std::string& dictionary = "");
    ~inflater();
    inflater(inflater&&) noexcept;
    inflater& operator=(inflater&&) noexcept;
    // Inflates from `in` (size bytes) into at most `max_out` bytes appended to `out`;
    // returns how many input bytes it consumed, or nullopt for a malformed stream.
    std::optional<size_t>
    read(const uint8_t* in, size_t size, size_t max_out, bytes& out);
    // The stream's final block has been read.
    bool finished() const;
    // The last read filled its output: zlib may hold more, which the next read gives
    // even with no new input.
    bool holds_output() const;

private:
    struct state;
    std::unique_ptr<state> d;
};

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
