/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Options by name for the network kernels' configurations (IP client, HF-PEP): one
 * table of (name, help, setter, getter) per configuration, the same names in Python,
 * GRC, YAML and the command line, and "name=value;..." strings parsed against it. */
#ifndef HFSTACK_KERNELS_NET_OPTION_TABLE_H
#define HFSTACK_KERNELS_NET_OPTION_TABLE_H

#include "dl/node_engine.h" // parse_option_number / parse_option_bool

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace net {

template <typename Config>
struct option_entry {
    const char* name;
    const char* help;
    std::function<void(Config&, const std::string&, const std::string&)> set;
    std::function<std::string(const Config&)> get;
};

// A whole number 0..max (the same grammar as the node's options); throws naming the
// option.
inline uint32_t
option_uint(const std::string& name, const std::string& value, uint32_t max)
{
    const double v = dl::parse_option_number(name, value);
    if (v != std::floor(v) || v > max)
        throw std::invalid_argument(name + " must be a whole number 0.." +
                                    std::to_string(max) + ", not \"" + value + "\"");
    return uint32_t(v);
}

// The words of a list value, split at any of `separators`.
inline std::vector<std::string> split_words(const std::string& text,
                                            const std::string& separators = " \t\n")
{
    std::vector<std::string> out;
    std::string w;
    for (char c : text + separators.substr(0, 1)) {
        if (separators.find(c) != std::string::npos) {
            if (!w.empty())
                out.push_back(w);
            w.clear();
        } else {
            w.push_back(c);
        }
    }
    return out;
}

// A number option's value as get_option shows it ("0.2", "60", "inf").
inline std::string number_text(double v)
{
    if (std::isinf(v))
        return "inf";
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.')
        s.pop_back();
    return s;
}

inline std::string trim_blanks(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// `what` names the component in errors ("IP client", "PEP").
template <typename Config>
const option_entry<Config>& find_option(const std::vector<option_entry<Config>>& table,
                                        const std::string& name,
                                        const std::string& what)
{
    for (const auto& e : table)
        if (name == e.name)
            return e;
    std::string names;
    for (const auto& e : table)
        names += (names.empty() ? "" : ", ") + std::string(e.name);
    throw std::invalid_argument("unknown " + what + " option \"" + name +
                                "\" (options: " + names + ")");
}

// Throws std::invalid_argument naming the option and what it accepts.
template <typename Config>
void set_option(const std::vector<option_entry<Config>>& table,
                Config& c,
                const std::string& name,
                const std::string& value,
                const std::string& what)
{
    const auto& e = find_option(table, name, what);
    try {
        e.set(c, name, value);
    } catch (const std::invalid_argument& err) {
        const std::string text = err.what();
        throw std::invalid_argument(text.rfind(name, 0) == 0 ? text : name + ": " + text);
    }
}

// "name=value" items separated by ';' or newlines (list values use blanks and commas).
template <typename Config>
void set_options(const std::vector<option_entry<Config>>& table,
                 Config& c,
                 const std::string& assignments,
                 const std::string& what)
{
    std::string item;
    for (char ch : assignments + ";") {
        if (ch != ';' && ch != '\n') {
            item.push_back(ch);
            continue;
        }
        item = trim_blanks(item);
        if (!item.empty()) {
            const auto eq = item.find('=');
            if (eq == std::string::npos)
                throw std::invalid_argument(what + " option \"" + item +
                                            "\" is not name=value");
            set_option(table,
                       c,
                       trim_blanks(item.substr(0, eq)),
                       trim_blanks(item.substr(eq + 1)),
                       what);
        }
        item.clear();
    }
}

// (name, default, help) of every option, the defaults read from a default Config.
template <typename Config, typename Row>
std::vector<Row> option_rows(const std::vector<option_entry<Config>>& table)
{
    const Config defaults;
    std::vector<Row> out;
    for (const auto& e : table)
        out.push_back({ e.name, e.get(defaults), e.help });
    return out;
}

} // namespace net
} // namespace hfstack
} // namespace gr

#endif
