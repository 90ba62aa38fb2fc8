-- Copyright 2026 gr-hfstack authors.
--
-- SPDX-License-Identifier: GPL-3.0-or-later

-- Wireshark / tshark dissector for gr-hfstack's SLEP (docs/slep.md) and the HF-PEP and
-- DNS proxy it carries (docs/pep.md), inside STANAG 5066 SIS U_PDUs on the SLEP SAP.
--   tshark -X lua_script:hfstack_slep.lua -d tcp.port==5066,s5066sis -Y slep -r capture.pcapng
-- A postdissector: Wireshark's SIS dissector shows each U_PDU as data; this reads those
-- of UNIDATA requests and indications on the SLEP SAP (preference slep.sap, 13).

local slep = Proto("slep", "SLEP (gr-hfstack SIS Layer Extension Protocol)")
local pep = Proto("hfpep", "HF-PEP (gr-hfstack)")

local types = { [1] = "DATAGRAM", [2] = "RELIABLE", [3] = "OPEN", [4] = "DATA",
                [5] = "WINDOW", [6] = "RESET", [7] = "HELLO", [8] = "ACK", [9] = "DATA_ACK" }
local reasons = { [0] = "aborted", [1] = "refused", [2] = "unknown stream", [3] = "peer restarted",
                  [4] = "timed out", [5] = "protocol error", [6] = "no resources" }
local statuses = { [0] = "connected", [1] = "refused", [2] = "unreachable", [3] = "timed out",
                   [4] = "forbidden", [5] = "busy", [6] = "bad request", [7] = "no peer" }

local f = slep.fields
f.type = ProtoField.uint8("slep.type", "Type", base.DEC, types, 0xF0)
f.responder = ProtoField.bool("slep.responder", "R: sent by the accepting side", 8, nil, 0x08)
f.ack_requested = ProtoField.bool("slep.ack_requested", "A: answer with an ACK", 8, nil, 0x04)
f.fin = ProtoField.bool("slep.fin", "F: the sender's stream ends here", 8, nil, 0x02)
f.compressed = ProtoField.bool("slep.compressed", "C: DEFLATE", 8, nil, 0x01)
f.to = ProtoField.uint8("slep.to", "Destination extended address")
f.from = ProtoField.uint8("slep.from", "Source extended address")
f.id = ProtoField.uint16("slep.id", "Datagram id")
f.stream = ProtoField.uint32("slep.stream", "Stream", base.HEX)
f.incarnation = ProtoField.uint32("slep.incarnation", "Sender's incarnation")
f.seen = ProtoField.uint32("slep.seen", "Receiver's incarnation as the sender knows it")
f.offset = ProtoField.uint32("slep.offset", "Offset")
f.limit = ProtoField.uint32("slep.limit", "Limit (window)")
f.ack_stream = ProtoField.uint32("slep.ack_stream", "Acknowledged stream", base.HEX)
f.ack_offset = ProtoField.uint32("slep.ack_offset", "Acknowledged offset")
f.reason = ProtoField.uint8("slep.reason", "Reset reason", base.DEC, reasons)
f.text = ProtoField.string("slep.text", "Reset text")
f.data = ProtoField.bytes("slep.data", "Data")

local p = pep.fields
p.version = ProtoField.uint8("hfpep.version", "Version")
p.family = ProtoField.uint8("hfpep.family", "Address family")
p.port = ProtoField.uint16("hfpep.port", "Destination port")
p.ipv4 = ProtoField.ipv4("hfpep.address", "Destination address")
p.ipv6 = ProtoField.ipv6("hfpep.address6", "Destination address")
p.name = ProtoField.string("hfpep.name", "Destination host name")
p.status = ProtoField.uint8("hfpep.status", "Status", base.DEC, statuses)

slep.prefs.sap = Pref.uint("SLEP SAP", 13, "The SAP SLEP binds (both ends)")

local f_sap20 = Field.new("s5066sis.20.sapid")
local f_sap21 = Field.new("s5066sis.21.sapid")
local f_data = Field.new("data.data")
local header = { [1] = 3, [2] = 5, [3] = 15, [4] = 11, [5] = 11, [6] = 8, [7] = 11, [8] = 11,
                 [9] = 19 }

local function dissect_one(range, pinfo, tree)
    if range:len() < 3 then return end
    local t = range(0, 1):bitfield(0, 4)
    local need = header[t]
    if not need or range:len() < need then return end
    local sub = tree:add(slep, range, "SLEP " .. types[t])
    sub:add(f.type, range(0, 1))
    sub:add(f.responder, range(0, 1))
    sub:add(f.ack_requested, range(0, 1))
    sub:add(f.fin, range(0, 1))
    sub:add(f.compressed, range(0, 1))
    sub:add(f.to, range(1, 1))
    sub:add(f.from, range(2, 1))
    local to = range(1, 1):uint()
    local info = types[t]
    if t == 2 then
        sub:add(f.id, range(3, 2))
    elseif t == 7 then
        sub:add(f.incarnation, range(3, 4))
        sub:add(f.seen, range(7, 4))
        info = info .. " incarnation " .. range(3, 4):uint()
    elseif t >= 3 then
        sub:add(f.stream, range(3, 4))
        info = info .. string.format(" stream 0x%08x", range(3, 4):uint())
        if t == 3 then
            sub:add(f.incarnation, range(7, 4))
            sub:add(f.limit, range(11, 4))
        elseif t == 4 or t == 8 or t == 9 then
            sub:add(f.offset, range(7, 4))
            info = info .. " offset " .. range(7, 4):uint()
            if t == 9 then
                sub:add(f.ack_stream, range(11, 4))
                sub:add(f.ack_offset, range(15, 4))
                info = info .. string.format(" ack 0x%08x to %d", range(11, 4):uint(),
                                             range(15, 4):uint())
            end
        elseif t == 5 then
            sub:add(f.limit, range(7, 4))
            info = info .. " limit " .. range(7, 4):uint()
        elseif t == 6 then
            sub:add(f.reason, range(7, 1))
            info = info .. " (" .. (reasons[range(7, 1):uint()] or "?") .. ")"
            if range:len() > need then sub:add(f.text, range(need)) end
        end
    end
    if range:len() > need and t ~= 6 and t ~= 7 then
        local body = range(need)
        sub:add(f.data, body)
        local compressed = bit.band(range(0, 1):uint(), 1) == 1
        -- What the PEP and the DNS proxy put at the start of their streams and datagrams.
        if not compressed and to == 1 and t == 3 and body:len() >= 8 and body(0, 1):uint() == 1 then
            local ps = sub:add(pep, body, "HF-PEP request")
            ps:add(p.version, body(0, 1))
            ps:add(p.family, body(1, 1))
            ps:add(p.port, body(2, 2))
            if body(1, 1):uint() == 4 then
                ps:add(p.ipv4, body(4, 4))
                info = info .. " to " .. tostring(body(4, 4):ipv4()) .. ":" .. body(2, 2):uint()
            elseif body(1, 1):uint() == 0 and body:len() >= 5 + body(4, 1):uint() then
                -- A host name the far proxy resolves: its length, then the name.
                local name = body(5, body(4, 1):uint())
                ps:add(p.name, name)
                info = info .. " to " .. name:string() .. ":" .. body(2, 2):uint()
            elseif body:len() >= 20 then
                ps:add(p.ipv6, body(4, 16))
            end
        elseif not compressed and to == 1 and t == 4 and range(7, 4):uint() == 0
            and bit.band(range(0, 1):uint(), 8) == 8 and body:len() >= 2 and body(0, 1):uint() == 1 then
            local ps = sub:add(pep, body(0, 2), "HF-PEP status")
            ps:add(p.status, body(1, 1))
            info = info .. " status " .. (statuses[body(1, 1):uint()] or "?")
        elseif to == 2 and t == 2 and not compressed and body:len() >= 12 then
            Dissector.get("dns"):call(body:tvb(), pinfo, sub)
        end
    end
    return info
end

function slep.dissector(tvb, pinfo, tree)
    local saps = {}
    for _, s in ipairs({ f_sap20() }) do saps[#saps + 1] = s.value end
    for _, s in ipairs({ f_sap21() }) do saps[#saps + 1] = s.value end
    if #saps == 0 then return end
    local matched = false
    for _, s in ipairs(saps) do if s == slep.prefs.sap then matched = true end end
    if not matched then return end
    local notes = {}
    for _, d in ipairs({ f_data() }) do
        local info = dissect_one(d.range, pinfo, tree)
        if info then notes[#notes + 1] = info end
    end
    if #notes > 0 then
        pinfo.cols.protocol = "SLEP"
        pinfo.cols.info:append(" [" .. table.concat(notes, "; ") .. "]")
    end
end

register_postdissector(slep)
