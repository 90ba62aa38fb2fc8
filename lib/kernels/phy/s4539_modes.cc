#include "s4539_modes.h"

#include "m110a_timing.h"
#include "m110c_timing.h"

#include <cctype>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

constexpr unsigned serial_rates[] = { 75, 150, 300, 600, 1200, 2400 };
constexpr unsigned high_rates[] = { 3200, 4800, 6400, 8000, 9600 };
const char* const serial_letters[] = { "Z", "S", "L" };
const char* const high_letters[] = { "US", "VS", "S", "M", "L", "VL" };

} // namespace

std::optional<waveform_timing> s4539_timing(const std::string& mode_name)
{
    size_t digits = 0;
    while (digits < mode_name.size() && std::isdigit(static_cast<unsigned char>(mode_name[digits])))
        ++digits;
    if (digits == 0 || digits > 5)
        return std::nullopt;
    const unsigned bps = unsigned(std::stoul(mode_name.substr(0, digits)));
    std::string letters;
    for (char c : mode_name.substr(digits))
        letters += char(std::toupper(static_cast<unsigned char>(c)));

    if (letters == "U" && bps == 4800)
        return m110a_mode_for(4800, m110a_interleaver::zero)->timing();
    if (bps <= 2400) {
        for (unsigned i = 0; i < 3; ++i)
            if (letters == serial_letters[i])
                if (auto m = m110a_mode_for(bps, m110a_interleaver(i)))
                    return m->timing();
        return std::nullopt;
    }
    if (auto m = m110c_mode_by_name(mode_name))
        return m->timing();
    return std::nullopt;
}

std::vector<std::string> s4539_mode_names()
{
    std::vector<std::string> names;
    for (unsigned bps : serial_rates)
        for (const char* l : serial_letters)
            names.push_back(std::to_string(bps) + l);
    for (unsigned bps : high_rates) {
        if (bps == 4800)
            names.push_back("4800U");
        for (const char* l : high_letters)
            names.push_back(std::to_string(bps) + l);
    }
    names.push_back("12800U");
    return names;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
