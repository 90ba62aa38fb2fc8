#include "conv_k7.h"

#include <volk/volk.h>
#include <volk/volk_alloc.hh>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

// Generators with bit 0 = the newest input bit (the octal forms reversed over 7 bits):
// 133 -> 0x6D, 171 -> 0x4F.
constexpr unsigned t1_poly = 0x6D;
constexpr unsigned t2_poly = 0x4F;
constexpr unsigned states = 64;
constexpr unsigned char start_penalty = 63; // metric of the states we cannot start in

unsigned parity(unsigned x) { return unsigned(__builtin_parity(x)); }

} // namespace

void k7_encoder::encode(const uint8_t* bits, size_t n, std::vector<uint8_t>& out)
{
    out.reserve(out.size() + 2 * n);
    for (size_t k = 0; k < n; ++k) {
        const unsigned reg = (d_state << 1) | (bits[k] & 1u); // 7 bits, newest in bit 0
        out.push_back(uint8_t(parity(reg & t1_poly)));
        out.push_back(uint8_t(parity(reg & t2_poly)));
        d_state = reg & (states - 1);
    }
}

k7_viterbi::k7_viterbi(float llr_scale)
    : d_scale(llr_scale),
      d_metrics(static_cast<unsigned char*>(volk_malloc(2 * states, volk_get_alignment())))
{
    // The butterfly for old states i and i + 32 expects, on the branch into new state
    // 2i, the outputs of register 2i (bit 6 clear); the other three branches are its
    // complement because both generators use the oldest and the newest bit.
    for (unsigned i = 0; i < states / 2; ++i) {
        d_branch[i] = parity((2 * i) & t1_poly) ? 255 : 0;
        d_branch[i + states / 2] = parity((2 * i) & t2_poly) ? 255 : 0;
    }
}

k7_viterbi::~k7_viterbi() { volk_free(d_metrics); }

std::vector<uint8_t> k7_viterbi::decode(const float* llr, size_t n, int end_state)
{
    std::vector<uint8_t> bits(n);
    if (n == 0)
        return bits;
    volk::vector<unsigned char> symbols(2 * n);
    for (size_t k = 0; k < 2 * n; ++k) {
        const float q = std::round(128.0f - llr[k] * d_scale);
        symbols[k] = (unsigned char)std::clamp(q, 0.0f, 255.0f);
    }
    // One 64-bit decision word per step: bit s set = the survivor into state s came
    // from the predecessor whose dropped (oldest) bit is 1.
    volk::vector<unsigned char> decisions(8 * n, 0);
    unsigned char* x = d_metrics;
    unsigned char* y = d_metrics + states;
    std::fill(x, x + states, start_penalty);
    x[0] = 0;
    volk_8u_x4_conv_k7_r2_8u(y, x, symbols.data(), decisions.data(), unsigned(n), 0, d_branch);
    // The kernel swaps its buffers every step: the last metrics are in x after an even
    // number of steps, in y after an odd one.
    const unsigned char* final_metrics = (n % 2 == 0) ? x : y;
    unsigned state = 0;
    if (end_state >= 0)
        state = unsigned(end_state) & (states - 1);
    else
        state = unsigned(std::min_element(final_metrics, final_metrics + states) - final_metrics);
    for (size_t s = n; s-- > 0;) {
        bits[s] = uint8_t(state & 1);
        uint64_t word;
        std::memcpy(&word, &decisions[8 * s], 8);
        const unsigned dropped = unsigned((word >> state) & 1);
        state = (state >> 1) | (dropped << 5);
    }
    return bits;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
