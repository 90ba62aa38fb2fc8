/* Options by name for the network kernels' configurations (IP client, HF-PEP): one
 * table of (name, help, setter, getter) per configuration, the same names in Python,
 * GRC, YAML and the command line, and "name=value;..." strings parsed against it. */
#ifndef HFSTACK_KERNELS_NET_OPTION_TABLE_H
#define HFSTACK_KERNELS_NET_OPTION_TABLE_H

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
                                        const std::string& name, const std::string& what)
{
    for (const auto& e : table)
        if (name == e.name)
            return e;
    std::string names;
    for (const auto& e : table)
        names += (names.empty() ? "" : ", ") + std::string(e.name);
    throw std::invalid_argument("unknown " + what + " option \"" + name + "\" (options: " + names + ")");
}

// Throws std::invalid_argument naming the option and what it accepts.
template <typename Config>
void set_option(const std::vector<option_entry<Config>>& table, Config& c,
                const std::string& name, const std::string& value, const std::string& what)
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
void set_options(const std::vector<option_entry<Config>>& table, Config& c,
                 const std::string& assignments, const std::string& what)
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
                throw std::invalid_argument(what + " option \"" + item + "\" is not name=value");
            set_option(table, c, trim_blanks(item.substr(0, eq)), trim_blanks(item.substr(eq + 1)), what);
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
