/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* A parsed XMPP stanza as a small tree, for the XMPP bridge (xmpp_bridge.h): the
 * bridge must read addresses, rewrite namespaces and drop or strip child elements, which
 * is simpler and safer on a tree than on bytes. Names and attribute names are kept as
 * written, prefix included ("stream:error", "xmlns:foo"): the splitter parses without
 * namespace processing, so a namespace is an ordinary `xmlns` attribute and the bridge
 * rewrites it as one. serialize() writes the tree back as compact XML (no whitespace
 * added, attribute values in single quotes), escaping what XML needs escaped. */
#ifndef HFSTACK_KERNELS_NET_XMPP_ELEMENT_H
#define HFSTACK_KERNELS_NET_XMPP_ELEMENT_H

#include <string>
#include <utility>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

struct xml_element {
    std::string name; // empty for a text node
    std::string text; // a text node's characters (unescaped)
    std::vector<std::pair<std::string, std::string>> attributes;
    std::vector<xml_element> children;

    bool is_text() const { return name.empty(); }
    // The attribute's value, or nullptr.
    const std::string* attribute(const std::string& key) const;
    std::string attribute_or(const std::string& key, const std::string& fallback) const;
    void set_attribute(const std::string& key, const std::string& value);
    void remove_attribute(const std::string& key);
    // The first child element with this name (and, if given, this xmlns), or nullptr.
    const xml_element* child(const std::string& child_name,
                             const std::string& xmlns = "") const;
    // The concatenated text of the element's text children.
    std::string inner_text() const;
};

xml_element make_text(const std::string& text);
xml_element
make_element(const std::string& name,
             std::vector<std::pair<std::string, std::string>> attributes = {});

std::string serialize(const xml_element& e);
std::string xml_escape(const std::string& text, bool attribute);

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
