/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "codec.h"
#include "crc.h"
#include "node_journal.h"
#include "sis.h"

#include <algorithm>
#include <memory>
#include <string>

namespace gr {
namespace hfstack {
namespace dl {

namespace {

constexpr char magic[8] = { 'H', 'F', '5', '0', '6', '6', 'J', '1' };
constexpr uint32_t version = 1;
constexpr size_t record_overhead = 1 + 4 + 4;


bytes record(char type, const bytes& body)
{
    bytes r;
    r.reserve(record_overhead + body.size());
    r.push_back(uint8_t(type));
    put_u32_be(r, uint32_t(body.size()));
    r.insert(r.end(), body.begin(), body.end());
    put_u32_be(r, crc32_s5066(r.data(), r.size()));
    return r;
}

// Reads a record body field by field; running past its end is a journal_error.
struct reader {
    const uint8_t* p;
    size_t size, at = 0;
    const uint8_t* take(size_t n)
    {
        if (size - at < n)
            throw journal_error("a record shorter than its fields");
        const uint8_t* q = p + at;
        at += n;
        return q;
    }
    uint8_t u8() { return *take(1); }
    uint16_t u16()
    {
        const uint8_t* q = take(2);
        return uint16_t(q[0] << 8 | q[1]);
    }
    uint32_t u32()
    {
        const uint8_t* q = take(4);
        return uint32_t(q[0]) << 24 | uint32_t(q[1]) << 16 | uint32_t(q[2]) << 8 | q[3];
    }
    bytes blob(size_t n)
    {
        const uint8_t* q = take(n);
        return bytes(q, q + n);
    }
};

struct receivers {
    std::unique_ptr<arq_receiver> regular = std::make_unique<arq_receiver>(false),
                                  expedited = std::make_unique<arq_receiver>(true);
    arq_receiver& of(bool exp) { return exp ? *expedited : *regular; }
};

} // namespace

bytes journal_header(uint32_t node_address)
{
    bytes h(magic, magic + 8);
    put_u32_be(h, node_address);
    put_u32_be(h, version);
    return h;
}

bytes journal_state_record(uint32_t peer, const arq_receiver_state& st)
{
    bytes b;
    put_u32_be(b, peer);
    b.push_back(st.expedited ? 1 : 0);
    b.push_back(st.long_fsn ? 1 : 0);
    put_u16_be(b, st.rx_lwe);
    put_u16_be(b, st.rx_uwe);
    b.push_back(st.cpdu_id < 0 ? 255 : uint8_t(st.cpdu_id));
    b.push_back(st.open_active ? 1 : 0);
    b.push_back(st.open_drop ? 1 : 0);
    put_u32_be(b, uint32_t(st.open_data.size()));
    b.insert(b.end(), st.open_data.begin(), st.open_data.end());
    put_u32_be(b, uint32_t(st.segments.size()));
    for (const auto& g : st.segments) {
        put_u16_be(b, g.fsn);
        b.push_back(uint8_t((g.start ? 1 : 0) | (g.end ? 2 : 0) | (g.in_order ? 4 : 0) |
                            (g.drop ? 8 : 0) | (g.consumed ? 16 : 0)));
        put_u16_be(b, uint16_t(g.data.size()));
        b.insert(b.end(), g.data.begin(), g.data.end());
    }
    return record('S', b);
}

bytes journal_frame_record(uint32_t peer, const dpdu& d, bool segment_ok)
{
    bytes b;
    put_u32_be(b, peer);
    b.push_back(d.type == dpdu_type::expedited_data_only ? 1 : 0);
    b.push_back(d.long_fsn ? 1 : 0);
    b.push_back(segment_ok ? 1 : 0);
    const bytes frame = encode(d);
    b.insert(b.end(), frame.begin(), frame.end());
    return record('F', b);
}

bytes journal_delivery_record(uint64_t delivery, const bytes& indication)
{
    bytes b;
    put_u32_be(b, uint32_t(delivery >> 32));
    put_u32_be(b, uint32_t(delivery));
    b.insert(b.end(), indication.begin(), indication.end());
    return record('D', b);
}

bytes journal_settled_record(uint64_t delivery, bool written)
{
    bytes b;
    put_u32_be(b, uint32_t(delivery >> 32));
    put_u32_be(b, uint32_t(delivery));
    b.push_back(written ? 1 : 0);
    return record('W', b);
}

journal_replay replay_journal(const uint8_t* data, size_t size, uint32_t node_address)
{
    if (size < journal_header_size || !std::equal(magic, magic + 8, data))
        throw journal_error("not a gr-hfstack node journal");
    if (get_u32_be(data + 8) != node_address)
        throw journal_foreign("the journal of node " +
                              address_to_string(get_u32_be(data + 8)) +
                              ", not of this node " + address_to_string(node_address));
    if (get_u32_be(data + 12) != version)
        throw journal_error("journal version " + std::to_string(get_u32_be(data + 12)) +
                            " (this node reads version " + std::to_string(version) + ")");
    std::map<uint32_t, receivers> rx;
    journal_replay out;
    size_t at = journal_header_size;
    while (at < size) {
        const size_t left = size - at;
        if (left < record_overhead) {
            out.dropped_tail_bytes = left;
            break;
        }
        const size_t length = get_u32_be(data + at + 1);
        if (length > left - record_overhead) {
            out.dropped_tail_bytes = left; // cut short by the crash
            break;
        }
        const size_t whole = record_overhead + length;
        const uint8_t* r = data + at;
        if (crc32_s5066(r, whole - 4) != get_u32_be(r + whole - 4)) {
            if (whole == left) { // the last record, torn
                out.dropped_tail_bytes = left;
                break;
            }
            throw journal_error("corrupt record at byte " + std::to_string(at) +
                                " (CRC mismatch)");
        }
        reader f{ r + 5, length };
        try {
            if (r[0] == 'D' || r[0] == 'W') {
                const uint64_t delivery = uint64_t(f.u32()) << 32 | f.u32();
                if (delivery == 0)
                    throw journal_error("a delivery numbered 0");
                if (r[0] == 'D') {
                    const size_t n = length - f.at;
                    if (!decode_sis(f.take(n), n))
                        throw journal_error("a delivery record whose indication does "
                                            "not decode");
                    out.unsettled[delivery] = bytes(r + 5 + length - n, r + 5 + length);
                    out.last_delivery = std::max(out.last_delivery, delivery);
                } else {
                    if (f.u8() > 1)
                        throw journal_error("a settled record with an unknown outcome");
                    out.unsettled.erase(delivery); // one compacted away is settled too
                }
                if (f.at != length)
                    throw journal_error("a record longer than its fields");
                out.records += 1;
                at += whole;
                continue;
            }
            const uint32_t peer = f.u32();
            const bool exp = f.u8() != 0;
            const bool lfsn = f.u8() != 0;
            auto& receiver = rx[peer].of(exp);
            if (r[0] == 'S') {
                arq_receiver_state st;
                st.expedited = exp;
                st.long_fsn = lfsn;
                st.rx_lwe = f.u16();
                st.rx_uwe = f.u16();
                const uint8_t id = f.u8();
                st.cpdu_id = id == 255 ? -1 : id;
                st.open_active = f.u8() != 0;
                st.open_drop = f.u8() != 0;
                st.open_data = f.blob(f.u32());
                const uint32_t n = f.u32();
                if (n > 65536)
                    throw journal_error("a record with " + std::to_string(n) +
                                        " segments");
                for (uint32_t k = 0; k < n; ++k) {
                    arq_receiver_state::segment g;
                    g.fsn = f.u16();
                    const uint8_t flags = f.u8();
                    g.start = flags & 1;
                    g.end = flags & 2;
                    g.in_order = flags & 4;
                    g.drop = flags & 8;
                    g.consumed = flags & 16;
                    g.data = f.blob(f.u16());
                    st.segments.push_back(std::move(g));
                }
                receiver.restore(st);
            } else if (r[0] == 'F') {
                const bool ok = f.u8() != 0;
                const size_t n = length - f.at;
                const auto d = decode_dpdu(f.take(n), n, lfsn);
                if (!d.ok())
                    throw journal_error("a frame record whose D_PDU does not decode: " +
                                        d.reason);
                if (lfsn != receiver.long_fsn())
                    receiver.set_long_fsn(lfsn);
                receiver.on_data(d.value, ok);
                receiver.take_delivered(); // delivered before the restart
            } else {
                throw journal_error(std::string("a record of unknown type ") +
                                    std::to_string(int(r[0])));
            }
            if (f.at != length)
                throw journal_error("a record longer than its fields");
        } catch (const journal_error& e) {
            throw journal_error(std::string(e.what()) + " at byte " + std::to_string(at));
        } catch (const std::invalid_argument& e) {
            throw journal_error(std::string("an impossible receiver state at byte ") +
                                std::to_string(at) + ": " + e.what());
        }
        out.records += 1;
        at += whole;
    }
    for (auto& [peer, r] : rx)
        out.peers[peer] = journal_peer{ r.regular->state(), r.expedited->state() };
    return out;
}

} // namespace dl
} // namespace hfstack
} // namespace gr
