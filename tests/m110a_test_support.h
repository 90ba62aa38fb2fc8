// Shared by the 110A modem tests: the reference recordings and test data.
#ifndef HFSTACK_TESTS_M110A_TEST_SUPPORT_H
#define HFSTACK_TESTS_M110A_TEST_SUPPORT_H

#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

// The text every reference recording carries.
inline const std::string m110a_reference_text = "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG 1234567890";

// Path of the reference recording of a mode ("2400S"), from HFSTACK_VECTORS_DIR.
inline std::string m110a_recording_path(const std::string& mode)
{
    return std::string(HFSTACK_VECTORS_DIR) + "/m110a/tx_" + mode + ".pcm";
}

// 16-bit little-endian PCM as floats times `scale`; false when the file is missing.
inline bool read_pcm(const std::string& path, std::vector<float>& out, float scale = 1.0f)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return false;
    std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    out.resize(raw.size() / 2);
    for (size_t k = 0; k < out.size(); ++k)
        out[k] = scale * float(int16_t(uint16_t(uint8_t(raw[2 * k])) | uint16_t(uint8_t(raw[2 * k + 1])) << 8));
    return true;
}

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<uint8_t> b(n);
    for (auto& x : b)
        x = uint8_t(rng());
    return b;
}

#endif
