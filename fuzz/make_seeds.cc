/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Writes seed inputs for the fuzz targets that drive a kernel by a script (node_engine,
 * ip_client, slep, pep, dns_proxy, xmpp_rcop; and xmpp_stanza's XMPP streams): each a
 * short well-formed exchange spelt in the target's own record format, its frames,
 * datagrams and PDUs made by the kernels' own encoders, so the fuzzer starts from inputs
 * that reach deep. fuzz/run.sh runs it into build-fuzz/seeds/TARGET before fuzzing.
 *   make_seeds DIR */
#include "dl/dpdu.h"
#include "net/ip_packet.h"
#include "net/pep.h"
#include "net/slep_wire.h"
#include "net/xmpp_x2x_rcop.h"
#include "net/xmpp_x2x_slep.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using namespace gr::hfstack;
using dl::bytes;

namespace {

// Records of the script targets: kind, a length in units of `unit` bytes, the body
// (padded with zeros to a whole number of units).
struct script {
    unsigned unit = 1;
    bytes b;
    script& record(uint8_t kind, bytes body = {})
    {
        body.resize((body.size() + unit - 1) / unit * unit, 0);
        if (body.size() / unit > 255) {
            std::fprintf(
                stderr, "make_seeds: a record of %zu bytes is too long\n", body.size());
            std::exit(1);
        }
        b.push_back(kind);
        b.push_back(uint8_t(body.size() / unit));
        b.insert(b.end(), body.begin(), body.end());
        return *this;
    }
};

void write(const std::filesystem::path& dir, const std::string& name, const bytes& b)
{
    std::filesystem::create_directories(dir);
    std::ofstream f(dir / name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    if (!f) {
        std::fprintf(stderr, "make_seeds: cannot write %s\n", (dir / name).c_str());
        std::exit(1);
    }
}

bytes text(const std::string& s) { return bytes(s.begin(), s.end()); }

bytes slep(net::slep_pdu p) { return net::encode(p); }

net::slep_pdu stream_pdu(net::slep_type type, uint32_t stream, uint8_t to, uint8_t from)
{
    net::slep_pdu p;
    p.type = type;
    p.stream = stream;
    p.to = to;
    p.from = from;
    return p;
}

// A DNS query for `name` (type A, class IN, recursion desired) with this id.
bytes dns_query(uint16_t id, const std::string& name)
{
    bytes q = { uint8_t(id >> 8), uint8_t(id), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
    size_t start = 0;
    while (start <= name.size()) {
        const size_t dot = std::min(name.find('.', start), name.size());
        q.push_back(uint8_t(dot - start));
        q.insert(q.end(), name.begin() + long(start), name.begin() + long(dot));
        start = dot + 1;
    }
    q.push_back(0);
    q.insert(q.end(), { 0, 1, 0, 1 });
    return q;
}

void slep_seeds(const std::filesystem::path& dir)
{
    // fuzz_slep: kinds 0-2 a U_PDU from node 1 (kind < 0x80), 3 a confirmation, 4 open,
    // 5 write, 6 read (0x10: and finish), 7 timer (0x10: reset the newest).
    using net::slep_type;
    auto open = stream_pdu(slep_type::open, 7, 80, 1);
    open.incarnation = 1;
    open.limit = 4096;
    open.data = text("hello");
    auto data = stream_pdu(slep_type::data, 7, 80, 1);
    data.data = text("GET / HTTP/1.0\r\n\r\n");
    auto fin = data;
    fin.offset = uint32_t(data.data.size());
    fin.flags = net::slep_flag::fin;
    fin.data.clear();
    auto window = stream_pdu(slep_type::window, 7, 80, 1);
    window.limit = 8192;
    auto reset = stream_pdu(slep_type::reset, 7, 80, 1);
    reset.reason = uint8_t(net::slep_reset_reason::aborted);
    reset.data = text("bye");
    net::slep_pdu datagram;
    datagram.to = 80;
    datagram.from = 1;
    datagram.data = text("a datagram");
    net::slep_pdu reliable = datagram;
    reliable.type = slep_type::reliable;
    reliable.id = 3;

    script incoming;
    incoming.record(0, slep(open))
        .record(0, slep(data))
        .record(6)
        .record(0, slep(window));
    incoming.record(5, text("response")).record(0, slep(fin)).record(0x16).record(7);
    write(dir, "incoming_stream", incoming.b);
    script outgoing;
    outgoing.record(4, text("open")).record(3).record(5, text("payload")).record(7);
    outgoing.record(0, slep(reset)).record(7);
    write(dir, "outgoing_stream", outgoing.b);
    script datagrams;
    datagrams.record(1, slep(datagram)).record(2, slep(reliable)).record(3).record(7);
    write(dir, "datagrams", datagrams.b);
}

const std::string xmpp_chat =
    "<message from='alice@a.example/phone' to='bob@b.example' type='chat' id='m1'>"
    "<body>Hello &amp; welcome</body><active "
    "xmlns='http://jabber.org/protocol/chatstates'/>"
    "<html xmlns='http://jabber.org/protocol/xhtml-im'><body "
    "xmlns='http://www.w3.org/1999/xhtml'>"
    "<p>Hello</p></body></html></message>";
const std::string xmpp_presence =
    "<presence from='alice@a.example/phone' to='room@conference.b.example/alice'>"
    "<x xmlns='http://jabber.org/protocol/muc'/><c "
    "xmlns='http://jabber.org/protocol/caps' ver='v'/></presence>";
const std::string xmpp_iq =
    "<iq type='get' id='p1' from='alice@a.example/phone' to='b.example'>"
    "<ping xmlns='urn:xmpp:ping'/></iq>";

void xmpp_stanza_seeds(const std::filesystem::path& dir)
{
    // fuzz_xmpp_stanza: a piece-size byte (top bit: the x2x-slep reader inflates), then
    // a stream as our server sends it on a component connection.
    const std::string stream =
        "<?xml version='1.0'?><stream:stream xmlns='jabber:component:accept' "
        "xmlns:stream='http://etherx.jabber.org/streams' from='b.example' "
        "id='3BF96D32'><handshake/>" +
        xmpp_chat + " " + xmpp_presence + xmpp_iq + "</stream:stream>";
    bytes b = { 7 };
    b.insert(b.end(), stream.begin(), stream.end());
    write(dir, "component_stream", b);
    // A session whose server routes back the confirming IQ a keeping component writes
    // (xmpp_component.h), then one marker more than it has sent.
    const std::string confirmed =
        "<?xml version='1.0'?><stream:stream xmlns='jabber:component:accept' "
        "xmlns:stream='http://etherx.jabber.org/streams' from='b.example' "
        "id='3BF96D32'><handshake/>" +
        xmpp_chat +
        "<iq type='get' id='hfstack-written-1' from='b.example' to='b.example'><ping "
        "xmlns='urn:xmpp:ping'/></iq>" +
        xmpp_iq + "<iq type='error' id='hfstack-written-2'/>";
    bytes c = { 5 };
    c.insert(c.end(), confirmed.begin(), confirmed.end());
    write(dir, "component_confirmed", c);
    // The stanzas alone, DEFLATEd as x2x-slep sends them.
    net::x2x_slep_writer w(true);
    bytes z = { 0x80 | 13 };
    for (const auto& s : { xmpp_chat, xmpp_presence, xmpp_iq }) {
        const auto part = w.write(1, s);
        z.insert(z.end(), part.begin(), part.end());
    }
    write(dir, "x2x_deflated", z);
}

void xmpp_rcop_seeds(const std::filesystem::path& dir)
{
    // fuzz_xmpp_rcop: kinds 0-5 a U_PDU from the air, 6-7 a stanza for our sender.
    net::x2x_rcop_sender sender(0, net::x2x_rcop_application_id, 64);
    script s;
    for (const auto& stanza : { xmpp_chat, xmpp_iq })
        for (const auto& pdu : sender.encode(stanza))
            s.record(0, pdu);
    s.record(6 | 0x40, text(xmpp_presence.substr(0, 250)));
    s.record(7, text("<message to='bob@b.example'><body>hi</body></message>"));
    write(dir, "segmented_stanzas", s.b);
}

void pep_seeds(const std::filesystem::path& dir)
{
    // fuzz_pep: kinds 0-1 a U_PDU from node 2, 2 a confirmation, 3 accept (body: host
    // byte, port / 7; with 0x10, port / 7 and a host name), 4 from_tcp, 5
    // take_tcp_data, 6 resolved (0x30, body: IPv4 addresses) / connected (0x10) /
    // finished (0x20) / reset, 7 timer; 0x80: 30 s pass instead of 0.25 s.
    using net::slep_type;
    net::pep_request request;
    request.destination = net::ip_address::v4(0x0A000009u); // 10.0.0.9
    request.port = 80;
    auto open =
        stream_pdu(slep_type::open, 11, net::pep_slep_address, net::pep_slep_address);
    open.incarnation = 1;
    open.limit = 4096;
    open.data = net::encode(request);
    const bytes get = text("GET / HTTP/1.0\r\n\r\n");
    open.data.insert(open.data.end(), get.begin(), get.end());
    auto data =
        stream_pdu(slep_type::data, 11, net::pep_slep_address, net::pep_slep_address);
    data.offset = uint32_t(open.data.size() - net::encode(request).size());
    data.data = text("more");
    auto window =
        stream_pdu(slep_type::window, 11, net::pep_slep_address, net::pep_slep_address);
    window.limit = 65536;

    script far;
    far.record(0, slep(open)).record(0x16).record(4, text("HTTP/1.0 200 OK\r\n\r\n"));
    far.record(0, slep(data)).record(1, slep(window)).record(2).record(0x26).record(7);
    far.record(0x87);
    write(dir, "far_side_stream", far.b);
    script near;
    near.record(3, { 9, 80 / 7 + 1 }).record(7).record(4, text("client bytes")).record(2);
    near.record(0x87).record(5, text("x")).record(0x26).record(0x87);
    write(dir, "near_side_stream", near.b);

    // By host name: the far side resolves it (loopback first, refused by policy) and
    // connects; the near side opens one.
    net::pep_request named;
    named.name = "www.far.example";
    named.port = 80;
    auto named_open =
        stream_pdu(slep_type::open, 12, net::pep_slep_address, net::pep_slep_address);
    named_open.incarnation = 1;
    named_open.limit = 4096;
    named_open.data = net::encode(named);
    named_open.data.insert(named_open.data.end(), get.begin(), get.end());
    script names;
    names.record(0, slep(named_open)).record(0x36, { 127, 0, 0, 1, 10, 0, 0, 9 });
    names.record(0x16).record(4, text("HTTP/1.0 200 OK\r\n\r\n")).record(7);
    names.record(0x13, { 0, 80 / 7 + 1, 'w', 'w', 'w', '.', 'h', 'f' }).record(7);
    names.record(4, text("client bytes")).record(0x87);
    write(dir, "host_names", names.b);
}

void ip_client_seeds(const std::filesystem::path& dir)
{
    // fuzz_ip_client: kinds 0-1 a datagram from the TUN, 2 a U_PDU from the air, 3 flow
    // control (4: on, else off); lengths in units of 8 bytes.
    const auto own = net::ip_address::v4(0x0A000001u);     // 10.0.0.1
    const auto compact = net::ip_address::v4(0x0A000002u); // 10.0.0.2, compact route
    const auto routed = net::ip_address::v4(0x0A000105u);  // 10.0.1.5
    const auto group = net::ip_address::v4(0xE0000005u);   // 224.0.0.5
    script s;
    s.unit = 8;
    s.record(0, net::make_udp(own, routed, 4000, 53, text("four")));
    s.record(1, net::make_udp(own, compact, 4000, 5000, text("twelve bytes")));
    s.record(0, net::make_icmp_echo(own, group, true, 1, 1, text("ping")));
    s.record(2, net::make_udp(routed, own, 53, 4000, text("back")));
    s.record(2, net::make_icmp_echo(routed, own, false, 1, 1, text("pong")));
    s.record(3).record(0, net::make_udp(own, routed, 4000, 53, text("held"))).record(7);
    write(dir, "both_directions", s.b);
}

void dns_proxy_seeds(const std::filesystem::path& dir)
{
    // fuzz_dns_proxy: kinds 0 a client's query, 1 an answer from the air, 2 a question
    // at the far side (answered with the body), 3 timer; 0x40: 1000 s pass; lengths in
    // units of 4 bytes.
    script s;
    s.unit = 4;
    const bytes q = dns_query(0x1234, "www.example.org");
    s.record(0, q).record(0, dns_query(0x1235, "gw.hf")).record(3).record(1, q);
    s.record(2, q).record(0x40 | 3).record(0, q);
    write(dir, "queries_and_answers", s.b);
}

void node_engine_seeds(const std::filesystem::path& dir)
{
    // fuzz_node_engine: op % 8 then its fields (fuzz/fuzz_node_engine.cc): 0 raw bytes
    // from the air (u16 length, bytes, SNR), 4 bind then data, 5 PHY status, 6 client
    // connected / closed, 7 time passes (u16 / 16 s).
    bytes s;
    auto u8 = [&](unsigned x) { s.push_back(uint8_t(x)); };
    auto u16 = [&](unsigned x) {
        u8(x >> 8);
        u8(x);
    };
    u8(1);               // rate adaptation on
    u8(6), u8(1), u8(0); // client 0 connects
    // Bind SAP 2 (ARQ), then 40 bytes to node 2.
    u8(4), u8(2), u8(1), u8(0), u8(1), u8(0), u8(2), u8(30), u16(40);
    s.insert(s.end(), 40, 0x42);
    u8(0);
    u8(7), u16(160);
    // Node 2 answers: an ACK_ONLY and a DATA_ONLY, encoded by the codec, as raw air.
    bytes air;
    dl::dpdu ack;
    ack.type = dl::dpdu_type::ack_only;
    ack.source = 2;
    ack.destination = 1;
    ack.rx_lwe = 1;
    dl::encode_into(ack, air);
    dl::dpdu data;
    data.type = dl::dpdu_type::data_only;
    data.source = 2;
    data.destination = 1;
    data.cpdu_start = data.cpdu_end = true;
    data.cpdu_size = 8;
    data.segment = bytes(8, 0x24);
    dl::encode_into(data, air);
    u8(0), u16(unsigned(air.size()));
    s.insert(s.end(), air.begin(), air.end());
    u8(20);
    u8(5), u8(0), u8(7), u16(320), u8(5), u8(1);
    u8(6), u8(0), u8(0); // client 0 leaves
    u8(7), u16(4000);
    write(dir, "bind_send_and_answer", s);
}

void receiver_decoder_seeds(const std::filesystem::path& dir)
{
    // The receiver targets' decoder mode (after the equaliser): a few modes each, their
    // soft bits or symbols a short pattern the target repeats over the block.
    bytes pattern;
    for (unsigned k = 0; k < 64; ++k)
        pattern.push_back(uint8_t(k * 37 + 11));
    auto seed = [&](bytes head) {
        head.insert(head.end(), pattern.begin(), pattern.end());
        return head;
    };
    // m110a: data[0] bit 7, short-interleaved mode number data[1], Viterbi pieces
    // data[2] + 1.
    for (unsigned mode : { 0u, 3u, 5u })
        write(dir / "m110a_receiver",
              "decoder_mode_" + std::to_string(mode),
              seed({ 0x80, uint8_t(mode), 95 }));
    // m110c: data[0] bit 7, rate code 1 + data[1] % 6, interleaver code 1 + data[2] % 3.
    for (unsigned rate : { 0u, 4u })
        write(dir / "m110c_receiver",
              "decoder_mode_rate_code_" + std::to_string(rate + 1),
              seed({ 0x80, uint8_t(rate), 0, 10 }));
    // m110d: data[3] bit 7, WN 1 + data[0] % 13, interleaver US or S by data[1] bit 0.
    for (unsigned wn : { 1u, 6u, 12u })
        write(dir / "m110d_receiver",
              "decoder_mode_wn" + std::to_string(wn + 1),
              seed({ uint8_t(wn), 0, 10, 0x80 }));
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    slep_seeds(dir / "slep");
    pep_seeds(dir / "pep");
    ip_client_seeds(dir / "ip_client");
    dns_proxy_seeds(dir / "dns_proxy");
    xmpp_stanza_seeds(dir / "xmpp_stanza");
    xmpp_rcop_seeds(dir / "xmpp_rcop");
    node_engine_seeds(dir / "node_engine");
    receiver_decoder_seeds(dir);
    return 0;
}
