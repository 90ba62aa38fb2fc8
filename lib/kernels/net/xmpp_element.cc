/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "xmpp_element.h"

namespace gr {
namespace hfstack {
namespace net {

const std::string* xml_element::attribute(const std::string& key) const
{
    for (const auto& a : attributes)
        if (a.first == key)
            return &a.second;
    return nullptr;
}

std::string xml_element::attribute_or(const std::string& key,
                                      const std::string& fallback) const
{
    const auto* v = attribute(key);
    return v ? *v : fallback;
}

void xml_element::set_attribute(const std::string& key, const std::string& value)
{
    for (auto& a : attributes)
        if (a.first == key) {
            a.second = value;
            return;
        }
    attributes.emplace_back(key, value);
}

void xml_element::remove_attribute(const std::string& key)
{
    for (auto it = attributes.begin(); it != attributes.end(); ++it)
        if (it->first == key) {
            attributes.erase(it);
            return;
        }
}

const xml_element* xml_element::child(const std::string& child_name,
                                      const std::string& xmlns) const
{
    for (const auto& c : children)
        if (c.name == child_name &&
            (xmlns.empty() || c.attribute_or("xmlns", "") == xmlns))
            return &c;
    return nullptr;
}

std::string xml_element::inner_text() const
{
    std::string out;
    for (const auto& c : children)
        if (c.is_text())
            out += c.text;
    return out;
}

xml_element make_text(const std::string& text)
{
    xml_element e;
    e.text = text;
    return e;
}

xml_element make_element(const std::string& name,
                         std::vector<std::pair<std::string, std::string>> attributes)
{
    xml_element e;
    e.name = name;
    e.attributes = std::move(attributes);
    return e;
}

std::string xml_escape(const std::string& text, bool attribute)
{
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '\'':
            out += attribute ? "&apos;" : "'";
            break;
        case '"':
            out += attribute ? "&quot;" : "\"";
            break;
        // Kept literally a newline or tab in an attribute would be normalised to a
        // space by the far parser.
        case '\n':
            out += attribute ? "&#10;" : "\n";
            break;
        case '\r':
            out += "&#13;";
            break;
        case '\t':
            out += attribute ? "&#9;" : "\t";
            break;
        default:
            out.push_back(c);
            break;
        }
    }
    return out;
}

namespace {

void write(const xml_element& e, std::string& out)
{
    if (e.is_text()) {
        out += xml_escape(e.text, false);
        return;
    }
    out += '<' + e.name;
    for (const auto& a : e.attributes)
        out += ' ' + a.first + "='" + xml_escape(a.second, true) + '\'';
    if (e.children.empty()) {
        out += "/>";
        return;
    }
    out += '>';
    for (const auto& c : e.children)
        write(c, out);
    out += "</" + e.name + '>';
}

} // namespace

std::string serialize(const xml_element& e)
{
    std::string out;
    write(e, out);
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr
