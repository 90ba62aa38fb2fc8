/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "m110d_waveform.h"

#include "helper_threads.h"

#include "m110c_waveform.h"

#include <cmath>
#include <iterator>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

namespace {

using cf = std::complex<float>;
constexpr double pi = 3.14159265358979323846;

// D-XIV: the 4-chip Walsh pattern of each dibit.
constexpr uint8_t walsh4[4][4] = {
    { 0, 0, 0, 0 }, { 0, 4, 0, 4 }, { 0, 0, 4, 4 }, { 0, 4, 4, 0 }
};

// m110d_appd.json preamble.pn (tables D-XVIII .. D-XX).
constexpr std::array<uint8_t, m110d_pn_length> fixed_pn = { {
    2, 4, 0, 0, 6, 2, 1, 4, 6, 1, 0, 5, 7, 3, 4, 1, 2, 6, 1, 7, 0, 7, 3, 2, 2, 2, 3, 2, 4,
    6, 3, 6, 6, 3, 7, 5, 4, 7, 5, 6, 7, 4, 0, 2, 6, 1, 5, 3, 0, 4, 2, 4, 6, 4, 5, 2, 5, 4,
    5, 3, 1, 5, 4, 5, 6, 5, 1, 0, 7, 1, 0, 1, 0, 5, 3, 5, 2, 2, 4, 5, 4, 0, 6, 4, 1, 4, 0,
    3, 3, 0, 0, 3, 3, 7, 3, 4, 2, 7, 4, 4, 4, 0, 3, 4, 7, 6, 4, 2, 6, 2, 0, 3, 5, 3, 2, 2,
    4, 5, 2, 0, 0, 3, 5, 0, 3, 2, 6, 6, 1, 4, 2, 3, 6, 1, 3, 0, 3, 3, 2, 4, 2, 2, 6, 5, 5,
    3, 6, 7, 6, 5, 6, 6, 5, 2, 5, 4, 2, 3, 3, 3, 5, 7, 5, 5, 3, 7, 0, 4, 7, 0, 4, 1, 6, 2,
    3, 5, 5, 6, 2, 6, 4, 6, 3, 4, 0, 7, 0, 0, 5, 2, 1, 5, 4, 3, 4, 5, 7, 0, 5, 3, 7, 6, 6,
    6, 4, 5, 6, 0, 2, 0, 4, 2, 3, 4, 4, 0, 7, 6, 6, 2, 0, 0, 3, 3, 0, 5, 2, 4, 2, 2, 4, 5,
    4, 6, 6, 6, 3, 2, 1, 0, 3, 2, 6, 0, 6, 2, 4, 0, 6, 4, 1, 3, 3, 5, 3, 6,
} };
constexpr std::array<uint8_t, m110d_pn_length> count_pn = { {
    5, 5, 2, 2, 0, 2, 5, 6, 7, 1, 3, 5, 1, 5, 6, 5, 3, 7, 0, 4, 0, 3, 3, 2, 1, 3, 0, 3, 1,
    6, 2, 6, 0, 6, 4, 1, 2, 5, 6, 3, 5, 3, 7, 4, 2, 6, 7, 3, 0, 2, 0, 1, 7, 5, 0, 6, 1, 5,
    0, 3, 2, 2, 5, 2, 5, 2, 3, 4, 2, 7, 6, 1, 1, 5, 2, 1, 5, 4, 0, 3, 5, 5, 0, 3, 1, 4, 0,
    5, 0, 3, 0, 6, 0, 0, 3, 1, 6, 1, 4, 4, 7, 7, 0, 5, 7, 0, 1, 5, 1, 0, 1, 3, 1, 5, 0, 7,
    1, 2, 2, 2, 7, 1, 2, 5, 0, 3, 3, 2, 2, 0, 4, 5, 1, 3, 1, 3, 5, 3, 1, 7, 5, 2, 7, 1, 3,
    1, 5, 6, 2, 4, 6, 0, 6, 1, 0, 0, 3, 6, 2, 7, 3, 2, 4, 7, 6, 4, 1, 3, 6, 6, 0, 3, 0, 0,
    7, 5, 4, 5, 1, 2, 1, 5, 0, 3, 1, 0, 4, 6, 6, 1, 0, 5, 2, 6, 3, 2, 7, 4, 2, 4, 0, 1, 7,
    0, 7, 0, 5, 1, 4, 5, 7, 2, 0, 4, 4, 3, 5, 2, 7, 7, 4, 5, 1, 4, 4, 6, 3, 3, 0, 5, 1, 5,
    5, 4, 3, 2, 0, 3, 0, 4, 7, 4, 5, 1, 5, 5, 7, 7, 6, 2, 4, 3, 5, 2, 2, 4,
} };
constexpr std::array<uint8_t, m110d_pn_length> wid_pn = { {
    2, 3, 0, 3, 7, 3, 3, 0, 1, 4, 4, 6, 5, 5, 4, 5, 6, 2, 0, 5, 6, 6, 5, 3, 5, 5, 2, 2, 1,
    2, 3, 6, 1, 1, 4, 3, 1, 0, 5, 1, 0, 3, 3, 0, 3, 0, 4, 4, 6, 2, 5, 6, 1, 7, 2, 6, 2, 0,
    0, 4, 7, 2, 3, 5, 2, 7, 1, 6, 5, 0, 4, 1, 6, 2, 1, 5, 4, 3, 5, 0, 3, 4, 1, 3, 2, 1, 6,
    1, 5, 7, 0, 4, 7, 6, 6, 0, 4, 7, 6, 6, 6, 6, 2, 3, 5, 0, 7, 0, 3, 1, 5, 1, 2, 0, 5, 3,
    2, 4, 5, 6, 6, 7, 7, 3, 5, 1, 6, 0, 1, 4, 4, 5, 6, 0, 6, 7, 2, 4, 4, 0, 3, 7, 2, 0, 0,
    1, 4, 0, 7, 1, 7, 4, 5, 4, 5, 5, 5, 3, 3, 2, 0, 5, 1, 3, 1, 5, 3, 4, 1, 5, 4, 1, 4, 4,
    2, 2, 4, 3, 0, 7, 4, 1, 5, 7, 1, 4, 7, 2, 5, 5, 6, 6, 1, 6, 5, 6, 3, 0, 2, 5, 7, 7, 4,
    4, 3, 4, 4, 6, 0, 7, 2, 2, 0, 0, 2, 1, 0, 0, 3, 6, 6, 4, 0, 2, 4, 3, 4, 5, 2, 6, 3, 7,
    7, 5, 7, 3, 0, 7, 0, 0, 7, 2, 6, 2, 2, 6, 1, 4, 3, 7, 6, 5, 0, 6, 5, 4,
} };

// m110d_appd.json wn0_walsh.scrambler.init_bits_b0_to_b158.
constexpr char trinomial_init[] =
    "000100110110010111110100100000001011001100101110111000110001000010000010000011010111"
    "1010"
    "10001111110011010111110111100011000110101110011100011000100100011010011";

// Table D-X (m110d_qam256.csv), symbol number = index.
const std::vector<cf> qam256 = {
    { 0.959366f, 0.056433f },   { 0.959366f, 0.169300f },   { 0.846499f, 0.507899f },
    { 0.959366f, 0.282166f },   { 0.846499f, 0.056433f },   { 0.846499f, 0.169300f },
    { 0.846499f, 0.395033f },   { 0.846499f, 0.282166f },   { 0.959366f, -0.056433f },
    { 0.959366f, -0.169300f },  { 0.846499f, -0.507899f },  { 0.959366f, -0.282166f },
    { 0.846499f, -0.056433f },  { 0.846499f, -0.169300f },  { 0.846499f, -0.395033f },
    { 0.846499f, -0.282166f },  { 0.169300f, 0.959366f },   { 0.056433f, 0.998304f },
    { 0.733632f, 0.507899f },   { 0.733632f, 0.620766f },   { 0.733632f, 0.056433f },
    { 0.733632f, 0.169300f },   { 0.733632f, 0.395033f },   { 0.733632f, 0.282166f },
    { 0.169300f, -0.959366f },  { 0.056433f, -0.998304f },  { 0.733632f, -0.507899f },
    { 0.733632f, -0.620766f },  { 0.733632f, -0.056433f },  { 0.733632f, -0.169300f },
    { 0.733632f, -0.395033f },  { 0.733632f, -0.282166f },  { 0.507899f, 0.846499f },
    { 0.507899f, 0.733632f },   { 0.507899f, 0.507899f },   { 0.507899f, 0.620766f },
    { 0.507899f, 0.056433f },   { 0.507899f, 0.169300f },   { 0.507899f, 0.395033f },
    { 0.507899f, 0.282166f },   { 0.507899f, -0.846499f },  { 0.507899f, -0.733632f },
    { 0.507899f, -0.507899f },  { 0.507899f, -0.620766f },  { 0.507899f, -0.056433f },
    { 0.507899f, -0.169300f },  { 0.507899f, -0.395033f },  { 0.507899f, -0.282166f },
    { 0.282166f, 0.959366f },   { 0.620766f, 0.733632f },   { 0.620766f, 0.507899f },
    { 0.620766f, 0.620766f },   { 0.620766f, 0.056433f },   { 0.620766f, 0.169300f },
    { 0.620766f, 0.395033f },   { 0.620766f, 0.282166f },   { 0.282166f, -0.959366f },
    { 0.620766f, -0.733632f },  { 0.620766f, -0.507899f },  { 0.620766f, -0.620766f },
    { 0.620766f, -0.056433f },  { 0.620766f, -0.169300f },  { 0.620766f, -0.395033f },
    { 0.620766f, -0.282166f },  { 0.056433f, 0.846499f },   { 0.056433f, 0.733632f },
    { 0.056433f, 0.507899f },   { 0.056433f, 0.620766f },   { 0.056433f, 0.056433f },
    { 0.056433f, 0.169300f },   { 0.056433f, 0.395033f },   { 0.056433f, 0.282166f },
    { 0.056433f, -0.846499f },  { 0.056433f, -0.733632f },  { 0.056433f, -0.507899f },
    { 0.056433f, -0.620766f },  { 0.056433f, -0.056433f },  { 0.056433f, -0.169300f },
    { 0.056433f, -0.395033f },  { 0.056433f, -0.282166f },  { 0.169300f, 0.846499f },
    { 0.169300f, 0.733632f },   { 0.169300f, 0.507899f },   { 0.169300f, 0.620766f },
    { 0.169300f, 0.056433f },   { 0.169300f, 0.169300f },   { 0.169300f, 0.395033f },
    { 0.169300f, 0.282166f },   { 0.169300f, -0.846499f },  { 0.169300f, -0.733632f },
    { 0.169300f, -0.507899f },  { 0.169300f, -0.620766f },  { 0.169300f, -0.056433f },
    { 0.169300f, -0.169300f },  { 0.169300f, -0.395033f },  { 0.169300f, -0.282166f },
    { 0.395033f, 0.846499f },   { 0.395033f, 0.733632f },   { 0.395033f, 0.507899f },
    { 0.395033f, 0.620766f },   { 0.395033f, 0.056433f },   { 0.395033f, 0.169300f },
    { 0.395033f, 0.395033f },   { 0.395033f, 0.282166f },   { 0.395033f, -0.846499f },
    { 0.395033f, -0.733632f },  { 0.395033f, -0.507899f },  { 0.395033f, -0.620766f },
    { 0.395033f, -0.056433f },  { 0.395033f, -0.169300f },  { 0.395033f, -0.395033f },
    { 0.395033f, -0.282166f },  { 0.282166f, 0.846499f },   { 0.282166f, 0.733632f },
    { 0.282166f, 0.507899f },   { 0.282166f, 0.620766f },   { 0.282166f, 0.056433f },
    { 0.282166f, 0.169300f },   { 0.282166f, 0.395033f },   { 0.282166f, 0.282166f },
    { 0.282166f, -0.846499f },  { 0.282166f, -0.733632f },  { 0.282166f, -0.507899f },
    { 0.282166f, -0.620766f },  { 0.282166f, -0.056433f },  { 0.282166f, -0.169300f },
    { 0.282166f, -0.395033f },  { 0.282166f, -0.282166f },  { -0.959366f, 0.056433f },
    { -0.959366f, 0.169300f },  { -0.846499f, 0.507899f },  { -0.959366f, 0.282166f },
    { -0.846499f, 0.056433f },  { -0.846499f, 0.169300f },  { -0.846499f, 0.395033f },
    { -0.846499f, 0.282166f },  { -0.959366f, -0.056433f }, { -0.959366f, -0.169300f },
    { -0.846499f, -0.507899f }, { -0.959366f, -0.282166f }, { -0.846499f, -0.056433f },
    { -0.846499f, -0.169300f }, { -0.846499f, -0.395033f }, { -0.846499f, -0.282166f },
    { -0.169300f, 0.959366f },  { -0.056433f, 0.998304f },  { -0.733632f, 0.507899f },
    { -0.733632f, 0.620766f },  { -0.733632f, 0.056433f },  { -0.733632f, 0.169300f },
    { -0.733632f, 0.395033f },  { -0.733632f, 0.282166f },  { -0.169300f, -0.959366f },
    { -0.056433f, -0.998304f }, { -0.733632f, -0.507899f }, { -0.733632f, -0.620766f },
    { -0.733632f, -0.056433f }, { -0.733632f, -0.169300f }, { -0.733632f, -0.395033f },
    { -0.733632f, -0.282166f }, { -0.507899f, 0.846499f },  { -0.507899f, 0.733632f },
    { -0.507899f, 0.507899f },  { -0.507899f, 0.620766f },  { -0.507899f, 0.056433f },
    { -0.507899f, 0.169300f },  { -0.507899f, 0.395033f },  { -0.507899f, 0.282166f },
    { -0.507899f, -0.846499f }, { -0.507899f, -0.733632f }, { -0.507899f, -0.507899f },
    { -0.507899f, -0.620766f }, { -0.507899f, -0.056433f }, { -0.507899f, -0.169300f },
    { -0.507899f, -0.395033f }, { -0.507899f, -0.282166f }, { -0.282166f, 0.959366f },
    { -0.620766f, 0.733632f },  { -0.620766f, 0.507899f },  { -0.620766f, 0.620766f },
    { -0.620766f, 0.056433f },  { -0.620766f, 0.169300f },  { -0.620766f, 0.395033f },
    { -0.620766f, 0.282166f },  { -0.282166f, -0.959366f }, { -0.620766f, -0.733632f },
    { -0.620766f, -0.507899f }, { -0.620766f, -0.620766f }, { -0.620766f, -0.056433f },
    { -0.620766f, -0.169300f }, { -0.620766f, -0.395033f }, { -0.620766f, -0.282166f },
    { -0.056433f, 0.846499f },  { -0.056433f, 0.733632f },  { -0.056433f, 0.507899f },
    { -0.056433f, 0.620766f },  { -0.056433f, 0.056433f },  { -0.056433f, 0.169300f },
    { -0.056433f, 0.395033f },  { -0.056433f, 0.282166f },  { -0.056433f, -0.846499f },
    { -0.056433f, -0.733632f }, { -0.056433f, -0.507899f }, { -0.056433f, -0.620766f },
    { -0.056433f, -0.056433f }, { -0.056433f, -0.169300f }, { -0.056433f, -0.395033f },
    { -0.056433f, -0.282166f }, { -0.169300f, 0.846499f },  { -0.169300f, 0.733632f },
    { -0.169300f, 0.507899f },  { -0.169300f, 0.620766f },  { -0.169300f, 0.056433f },
    { -0.169300f, 0.169300f },  { -0.169300f, 0.395033f },  { -0.169300f, 0.282166f },
    { -0.169300f, -0.846499f }, { -0.169300f, -0.733632f }, { -0.169300f, -0.507899f },
    { -0.169300f, -0.620766f }, { -0.169300f, -0.056433f }, { -0.169300f, -0.169300f },
    { -0.169300f, -0.395033f }, { -0.169300f, -0.282166f }, { -0.395033f, 0.846499f },
    { -0.395033f, 0.733632f },  { -0.395033f, 0.507899f },  { -0.395033f, 0.620766f },
    { -0.395033f, 0.056433f },  { -0.395033f, 0.169300f },  { -0.395033f, 0.395033f },
    { -0.395033f, 0.282166f },  { -0.395033f, -0.846499f }, { -0.395033f, -0.733632f },
    { -0.395033f, -0.507899f }, { -0.395033f, -0.620766f }, { -0.395033f, -0.056433f },
    { -0.395033f, -0.169300f }, { -0.395033f, -0.395033f }, { -0.395033f, -0.282166f },
    { -0.282166f, 0.846499f },  { -0.282166f, 0.733632f },  { -0.282166f, 0.507899f },
    { -0.282166f, 0.620766f },  { -0.282166f, 0.056433f },  { -0.282166f, 0.169300f },
    { -0.282166f, 0.395033f },  { -0.282166f, 0.282166f },  { -0.282166f, -0.846499f },
    { -0.282166f, -0.733632f }, { -0.282166f, -0.507899f }, { -0.282166f, -0.620766f },
    { -0.282166f, -0.056433f }, { -0.282166f, -0.169300f }, { -0.282166f, -0.395033f },
    { -0.282166f, -0.282166f },
};

// Interleaver increments (D-LI .. D-LXII, m110d_waveforms.csv) per bandwidth and WN:
// US, S, M, L (0 where the mode has no such interleaver).
struct increment_row {
    unsigned bw_khz, wn;
    unsigned increment[4];
};
// clang-format off
constexpr increment_row increments[] = {
    {  3,  0, {     0,    11,    37,   145 } },
    {  3,  1, {    25,    97,   385,  1543 } },
    {  3,  2, {    25,    97,   385,  1543 } },
    {  3,  3, {    25,    97,   385,  1549 } },
    {  3,  4, {    25,    97,   385,  1549 } },
    {  3,  5, {    33,   129,   513,  2081 } },
    {  3,  6, {    65,   257,  1025,  4161 } },
    {  3,  7, {    97,   385,  1537,  6241 } },
    {  3,  8, {   129,   513,  2049,  8321 } },
    {  3,  9, {   161,   641,  2561, 10403 } },
    {  3, 10, {   193,   769,  3073, 12481 } },
    {  3, 11, {   271,  1081,  4321, 17551 } },
    {  3, 12, {   361,  1441,  5761, 23401 } },
    {  3, 13, {    65,   257,  1025,  4161 } },
    {  6,  0, {     0,    21,    73,   289 } },
    {  6,  1, {    49,   193,   769,  3085 } },
    {  6,  2, {    49,   193,   769,  3085 } },
    {  6,  3, {    53,   205,   817,  3293 } },
    {  6,  4, {    53,   205,   817,  3293 } },
    {  6,  5, {    69,   273,  1089,  4421 } },
    {  6,  6, {   137,   545,  2177,  8841 } },
    {  6,  7, {   205,   817,  3265, 13261 } },
    {  6,  8, {   273,  1089,  4353, 17681 } },
    {  6,  9, {   341,  1361,  5441, 22103 } },
    {  6, 10, {   409,  1633,  6529, 26521 } },
    {  6, 11, {   409,  1621,  6481, 26329 } },
    {  6, 12, {   553,  2161,  8641, 35113 } },
    {  9,  0, {     0,    31,   109,   433 } },
    {  9,  1, {    73,   289,  1153,  4645 } },
    {  9,  2, {    73,   289,  1153,  4645 } },
    {  9,  3, {    73,   289,  1153,  4645 } },
    {  9,  5, {    97,   385,  1537,  6241 } },
    {  9,  6, {   193,   769,  3073, 12481 } },
    {  9,  7, {   289,  1153,  4609, 18721 } },
    {  9,  8, {   385,  1537,  6145, 24961 } },
    {  9,  9, {   481,  1921,  7681, 31207 } },
    {  9, 10, {   577,  2305,  9217, 37441 } },
    {  9, 11, {   811,  3241, 13771, 52651 } },
    {  9, 12, {  1081,  4321, 18361, 70201 } },
    { 12,  0, {     0,    41,   145,   577 } },
    { 12,  1, {    73,   289,  1153,  4633 } },
    { 12,  2, {    73,   289,  1153,  4633 } },
    { 12,  3, {    97,   385,  1537,  6193 } },
    { 12,  4, {    97,   385,  1537,  6193 } },
    { 12,  5, {   129,   513,  2049,  8321 } },
    { 12,  6, {   257,  1025,  4097, 16641 } },
    { 12,  7, {   385,  1537,  6145, 24961 } },
    { 12,  8, {   513,  2049,  8193, 33281 } },
    { 12,  9, {   641,  2561, 10241, 41603 } },
    { 12, 10, {   769,  3073, 13057, 49921 } },
    { 12, 11, {   811,  3241, 13771, 52651 } },
    { 12, 12, {  1081,  4321, 18361, 70201 } },
    { 15,  0, {     0,    51,   181,   721 } },
    { 15,  1, {   109,   433,  1729,  6949 } },
    { 15,  2, {   109,   433,  1729,  6949 } },
    { 15,  3, {   109,   433,  1729,  6949 } },
    { 15,  4, {   109,   433,  1729,  6949 } },
    { 15,  5, {   161,   641,  2561, 10401 } },
    { 15,  6, {   321,  1281,  5121, 20801 } },
    { 15,  7, {   481,  1921,  7681, 31201 } },
    { 15,  8, {   641,  2561, 10241, 41601 } },
    { 15,  9, {   801,  3201, 13603, 52003 } },
    { 15, 10, {   961,  3841, 16321, 62401 } },
    { 15, 11, {   865,  3457, 14689, 56161 } },
    { 15, 12, {  1153,  4609, 19585, 74881 } },
    { 18,  0, {     0,    61,   217,   865 } },
    { 18,  1, {   169,   673,  2689, 10811 } },
    { 18,  2, {   169,   673,  2689, 10811 } },
    { 18,  3, {   169,   673,  2689, 10811 } },
    { 18,  5, {   193,   769,  3073, 12481 } },
    { 18,  6, {   385,  1537,  6145, 24961 } },
    { 18,  7, {   577,  2305,  9217, 37441 } },
    { 18,  8, {   769,  3073, 13057, 49921 } },
    { 18,  9, {   961,  3841, 16327, 62407 } },
    { 18, 10, {  1153,  4609, 19585, 74881 } },
    { 18, 11, {  1441,  5761, 24481, 93601 } },
    { 18, 12, {  1921,  7681, 32641, 124801 } },
    { 21,  0, {     0,    71,   253,  1009 } },
    { 21,  1, {   161,   641,  2561, 10281 } },
    { 21,  2, {   161,   641,  2561, 10281 } },
    { 21,  3, {   161,   641,  2561, 10281 } },
    { 21,  4, {   161,   641,  2561, 10281 } },
    { 21,  5, {   169,   673,  2689, 10921 } },
    { 21,  6, {   337,  1345,  5377, 21841 } },
    { 21,  7, {   505,  2017,  8065, 32761 } },
    { 21,  8, {   673,  2689, 11425, 43681 } },
    { 21,  9, {   841,  3361, 14293, 54613 } },
    { 21, 10, {  1009,  4033, 17137, 65521 } },
    { 21, 11, {  1921,  7681, 32641, 124801 } },
    { 21, 12, {  2561, 10241, 43521, 166401 } },
    { 24,  0, {     0,    81,   289,  1153 } },
    { 24,  1, {   137,   545,  2177,  8739 } },
    { 24,  2, {   137,   545,  2177,  8739 } },
    { 24,  3, {   205,   817,  3265, 13159 } },
    { 24,  4, {   205,   817,  3265, 13159 } },
    { 24,  5, {   273,  1089,  4353, 17681 } },
    { 24,  6, {   545,  2177,  8705, 35361 } },
    { 24,  7, {   817,  3265, 13873, 53041 } },
    { 24,  8, {  1089,  4353, 18497, 70721 } },
    { 24,  9, {  1361,  5441, 23123, 88403 } },
    { 24, 10, {  1633,  6529, 27745, 106081 } },
    { 24, 11, {  1441,  5761, 24481, 93601 } },
    { 24, 12, {  1921,  7681, 32641, 124801 } },
    { 30,  0, {     0,   119,   431,  1673 } },
    { 30,  1, {   275,  1259,  4207, 15445 } },
    { 30,  2, {   275,  1259,  4207, 15445 } },
    { 30,  3, {   275,  1259,  4207, 15445 } },
    { 30,  4, {   275,  1259,  4207, 15445 } },
    { 30,  5, {   381,  2951,  8729, 24989 } },
    { 30,  6, {   781,  5893, 29161, 49991 } },
    { 30,  7, {  1207,  8821, 26221, 71341 } },
    { 30,  8, {  1529, 11837, 43733, 142017 } },
    { 30,  9, {  1941, 14711, 54541, 221051 } },
    { 30, 10, {  2257, 17623, 65557, 288127 } },
    { 30, 11, {  2473, 18643, 55669, 281233 } },
    { 30, 12, {  3281, 25097, 74329, 374993 } },
    { 36,  0, {     0,   143,   511,  2011 } },
    { 36,  1, {   901,  1577, 11843, 22595 } },
    { 36,  2, {   901,  1577, 11843, 22595 } },
    { 36,  3, {   901,  1577, 11843, 22595 } },
    { 36,  4, {   455,  3557, 17575, 26663 } },
    { 36,  5, {   455,  3557, 17575, 26663 } },
    { 36,  6, {   911,  7027, 35179, 69763 } },
    { 36,  7, {  1633, 10867, 52741, 90013 } },
    { 36,  8, {  1913, 14245, 70337, 119977 } },
    { 36,  9, {  2411, 17831, 87931, 133351 } },
    { 36, 10, {  2719, 22267, 105163, 174025 } },
    { 36, 11, {  2851, 22381, 110509, 197491 } },
    { 36, 12, {  4049, 29977, 148361, 281057 } },
    { 42,  0, {     0,   167,   601,  2371 } },
    { 42,  1, {  1001,  1687,  5867, 30619 } },
    { 42,  2, {  1001,  1687,  5867, 30619 } },
    { 42,  3, {  1001,  1687,  5867, 30619 } },
    { 42,  4, {   593,  4007, 11789, 33757 } },
    { 42,  5, {   593,  4007, 11789, 33757 } },
    { 42,  6, {  1019,  7993, 23641, 67505 } },
    { 42,  7, {  1531, 11995, 35335, 101203 } },
    { 42,  8, {  2029, 15965, 47137, 134965 } },
    { 42,  9, {  2581, 19901, 58871, 168701 } },
    { 42, 10, {  3079, 23995, 70669, 202411 } },
    { 42, 11, {  3499, 26539, 78571, 249943 } },
    { 42, 12, {  4673, 35281, 104857, 333113 } },
    { 48,  0, {     0,   191,   697,  2693 } },
    { 48,  1, {   943,  1735,  6805, 14425 } },
    { 48,  2, {   943,  1735,  6805, 14425 } },
    { 48,  3, {   943,  1735,  6805, 14425 } },
    { 48,  4, {   397,  2941,  8393, 39551 } },
    { 48,  5, {   397,  2941,  8393, 39551 } },
    { 48,  6, {   797,  5881, 16739, 72607 } },
    { 48,  7, {  1231,  8827, 25099, 104197 } },
    { 48,  8, {  1509, 11729, 46729, 137413 } },
    { 48,  9, {  1911, 14701, 41981, 181541 } },
    { 48, 10, {  2281, 17623, 70183, 217873 } },
    { 48, 11, {  2569, 19831, 56599, 247963 } },
    { 48, 12, {  3401, 26449, 105209, 326729 } },
};
// clang-format on

// Table D-L.
const m110d_code_rate code_rates[] = {
    { 9, 10, 1, { "111101110", "100010001" }, { "111000101", "100111010" } },
    { 8, 9, 1, { "11110100", "10001011" }, { "11100000", "10011111" } },
    { 5, 6, 1, { "11010", "10101" }, { "10110", "11001" } },
    { 4, 5, 1, { "1111", "1000" }, { "1101", "1010" } },
    { 3, 4, 1, { "110", "101" }, { "111", "100" } },
    { 2, 3, 1, { "11", "10" }, { "11", "10" } },
    { 4, 7, 1, { "1111", "0111" }, { "1111", "0111" } },
    { 9, 16, 1, { "111101111", "111111011" }, { "111101111", "111111011" } },
    { 1, 2, 1, { "1", "1" }, { "1", "1" } },
    { 2, 5, 2, { "1110", "1010" }, { "1110", "1010" } },
    { 1, 3, 2, { "11", "10" }, { "11", "10" } },
    { 2, 7, 2, { "1111", "0111" }, { "1111", "0111" } },
    { 1, 4, 2, { "1", "1" }, { "1", "1" } },
    { 1, 6, 3, { "1", "1" }, { "1", "1" } },
    { 1, 8, 4, { "1", "1" }, { "1", "1" } },
    { 1, 12, 6, { "1", "1" }, { "1", "1" } },
    { 1, 16, 8, { "1", "1" }, { "1", "1" } },
};

// Table D-XXI: probe length K -> base length and boundary shift (copied as printed).
constexpr unsigned probe_shapes[][3] = {
    { 24, 13, 6 },     { 32, 16, 8 },    { 36, 19, 9 },    { 48, 25, 12 },
    { 64, 36, 18 },    { 68, 36, 18 },   { 72, 36, 18 },   { 96, 49, 24 },
    { 128, 64, 32 },   { 144, 81, 40 },  { 160, 81, 40 },  { 180, 100, 50 },
    { 192, 100, 50 },  { 216, 121, 60 }, { 224, 121, 60 }, { 240, 121, 60 },
    { 272, 144, 72 },  { 320, 169, 85 }, { 384, 196, 98 }, { 512, 256, 128 },
    { 576, 289, 145 },
};
constexpr int barker13[13] = { 1, 1, 1, 1, 1, -1, -1, 1, 1, -1, 1, -1, 1 };
constexpr int sequence19[19] = { 1, -1, 1, 1, -1, -1, -1, -1, 1, -1,
                                 1, -1, 1, 1, 1,  1,  -1, -1, 1 };

// The D-L rule's mask rows (T1, T2) for a constraint length.
const char* const* sent_mask(const m110d_code_rate& rate, unsigned constraint_length)
{
    return constraint_length == 9 ? rate.k9_mask : rate.k7_mask;
}

// Bits the D-L rule sends for the pairs before pair `pairs`.
size_t sent_bits(size_t pairs, const m110d_code_rate& rate, unsigned constraint_length)
{
    const char* const* mask = sent_mask(rate, constraint_length);
    const size_t columns = std::char_traits<char>::length(mask[0]);
    const auto sent_before = [&](size_t column) {
        size_t count = 0;
        for (size_t c = 0; c < column; ++c)
            count += size_t(mask[0][c] == '1') + size_t(mask[1][c] == '1');
        return count;
    };
    const size_t steps = pairs * rate.repeat;
    return steps / columns * sent_before(columns) + sent_before(steps % columns);
}

// Calls visit(pair, bit of the pair, its index in the sent stream) for every bit the
// D-L rule sends for pairs [from, to), in order (a range starts from the count of bits
// sent before it, so ranges of a block go on two threads alike).
template <typename Visit>
void for_each_sent_bit(size_t from,
                       size_t to,
                       const m110d_code_rate& rate,
                       unsigned constraint_length,
                       Visit visit)
{
    const char* const* mask = sent_mask(rate, constraint_length);
    const size_t columns = std::char_traits<char>::length(mask[0]);
    size_t column = from * rate.repeat % columns;
    size_t next = sent_bits(from, rate, constraint_length);
    for (size_t i = from; i < to; ++i)
        for (unsigned c = 0; c < rate.repeat; ++c) {
            if (mask[0][column] == '1')
                visit(i, 0u, next++);
            if (mask[1][column] == '1')
                visit(i, 1u, next++);
            if (++column == columns)
                column = 0;
        }
}

// Long blocks' puncturing and depuncturing in ranges of pairs: fewer than this per
// range are not worth sharing.
constexpr size_t min_puncture_range = 16384;

void puncture_into(const uint8_t* pairs,
                   size_t count,
                   const m110d_code_rate& rate,
                   unsigned constraint_length,
                   uint8_t* out,
                   bool concurrently)
{
    run_ranges(
        count,
        min_puncture_range,
        [&](size_t from, size_t to) {
            for_each_sent_bit(
                from, to, rate, constraint_length, [&](size_t i, unsigned b, size_t at) {
                    out[at] = pairs[2 * i + b];
                });
        },
        concurrently);
}

// Each `?` reading: its name and its values' names, in enum order.
struct reading_names {
    const char* name;
    std::vector<const char*> values;
};
const reading_names readings_named[] = {
    { "scrambler", { "a", "b" } },
    { "tail_biting", { "first_pair_bit_7", "full_register", "block_start" } },
    { "pn_alignment", { "per_symbol", "continuous" } },
    { "wid_parity", { "checksum", "caption_d2_zero" } },
    { "preamble_walsh", { "scaled", "capped" } },
};

// The value of reading r (index into readings_named) as an enum index, and back.
unsigned reading_value(const m110d_readings& readings, size_t r)
{
    switch (r) {
    case 0:
        return unsigned(readings.scrambler);
    case 1:
        return unsigned(readings.tail_biting);
    case 2:
        return unsigned(readings.pn_alignment);
    case 3:
        return unsigned(readings.wid_parity);
    default:
        return unsigned(readings.preamble_walsh);
    }
}

void set_reading_value(m110d_readings& readings, size_t r, unsigned v)
{
    switch (r) {
    case 0:
        readings.scrambler = x9_orientation(v);
        break;
    case 1:
        readings.tail_biting = tail_biting_start(v);
        break;
    case 2:
        readings.pn_alignment = m110d_pn_alignment(v);
        break;
    case 3:
        readings.wid_parity = m110d_wid_parity(v);
        break;
    default:
        readings.preamble_walsh = m110d_preamble_walsh(v);
    }
}

} // namespace

std::string m110d_set_reading(m110d_readings& readings,
                              const std::string& name_equals_value)
{
    const size_t eq = name_equals_value.find('=');
    const std::string name = name_equals_value.substr(0, eq);
    const std::string value =
        eq == std::string::npos ? std::string() : name_equals_value.substr(eq + 1);
    for (size_t r = 0; r < std::size(readings_named); ++r) {
        if (name != readings_named[r].name)
            continue;
        const auto& values = readings_named[r].values;
        std::string takes;
        for (unsigned v = 0; v < values.size(); ++v) {
            if (value == values[v]) {
                set_reading_value(readings, r, v);
                return {};
            }
            takes += std::string(v == 0                   ? ""
                                 : v + 1 == values.size() ? " or "
                                                          : ", ") +
                     values[v];
        }
        return "reading " + name + " takes " + takes + ", not \"" + value + "\"";
    }
    std::string names;
    for (const auto& r : readings_named)
        names += std::string(names.empty() ? "" : ", ") + r.name;
    return "no reading \"" + name + "\" (NAME=VALUE with NAME one of " + names + ")";
}

std::vector<std::string> m110d_reading_choices()
{
    std::vector<std::string> choices;
    for (const auto& r : readings_named)
        for (const char* v : r.values)
            choices.push_back(std::string(r.name) + "=" + v);
    return choices;
}

std::string m110d_readings_text(const m110d_readings& readings)
{
    std::string text;
    for (size_t r = 0; r < std::size(readings_named); ++r)
        text += std::string(text.empty() ? "" : " ") + readings_named[r].name + "=" +
                readings_named[r].values[reading_value(readings, r)];
    return text;
}

uint8_t m110d_walsh_chip(unsigned dibit, unsigned j) { return walsh4[dibit & 3][j % 4]; }

unsigned m110d_preamble_walsh_chips(const m110d_mode& mode,
                                    const m110d_preamble_options& options,
                                    m110d_preamble_walsh reading)
{
    if (options.preamble_walsh_chips)
        return options.preamble_walsh_chips;
    const unsigned scaled = 32 * mode.bw_khz / 3;
    return reading == m110d_preamble_walsh::capped ? std::min(scaled, m110d_pn_length)
                                                   : scaled;
}

m110d_preamble_options m110d_preamble_options_under(const m110d_mode& mode,
                                                    m110d_preamble_options options,
                                                    const m110d_readings& readings)
{
    options.preamble_walsh_chips =
        m110d_preamble_walsh_chips(mode, options, readings.preamble_walsh);
    return options;
}

std::array<uint8_t, 4> m110d_count_dibits(unsigned count)
{
    if (count >= m110d_max_superframes)
        throw std::invalid_argument("m110d_count_dibits: the count is 0 to 31");
    const auto b = [count](unsigned i) { return (count >> i) & 1u; };
    const unsigned b7 = b(1) ^ b(2) ^ b(3), b6 = b(2) ^ b(3) ^ b(4),
                   b5 = b(0) ^ b(1) ^ b(2);
    return { uint8_t(b7 << 1 | b6),
             uint8_t(b5 << 1 | b(4)),
             uint8_t(b(3) << 1 | b(2)),
             uint8_t(b(1) << 1 | b(0)) };
}

std::optional<unsigned> m110d_count_of(const std::array<uint8_t, 4>& dibits)
{
    const unsigned count =
        (dibits[1] & 1u) << 4 | (dibits[2] & 3u) << 2 | (dibits[3] & 3u);
    if (m110d_count_dibits(count) != dibits)
        return std::nullopt;
    return count;
}

std::array<uint8_t, 5> m110d_wid_dibits(const m110d_wid& wid, m110d_wid_parity parity)
{
    if (wid.wn > 15)
        throw std::invalid_argument("m110d_wid_dibits: the WN field has 4 bits");
    if (wid.constraint_length != 7 && wid.constraint_length != 9)
        throw std::invalid_argument("m110d_wid_dibits: constraint length 7 or 9");
    unsigned d[10];
    for (unsigned i = 0; i < 4; ++i)
        d[6 + i] = (wid.wn >> i) & 1u;
    d[5] = (unsigned(wid.interleaver) >> 1) & 1u;
    d[4] = unsigned(wid.interleaver) & 1u;
    d[3] = wid.constraint_length == 9;
    d[2] = parity == m110d_wid_parity::checksum ? d[9] ^ d[8] ^ d[7] : 0u;
    d[1] = d[7] ^ d[6] ^ d[5];
    d[0] = d[5] ^ d[4] ^ d[3];
    std::array<uint8_t, 5> w{};
    for (unsigned k = 0; k < 5; ++k) // w4 first: (d9 d8)
        w[k] = uint8_t(d[9 - 2 * k] << 1 | d[8 - 2 * k]);
    return w;
}

std::optional<m110d_wid> m110d_wid_of(const std::array<uint8_t, 5>& dibits,
                                      m110d_wid_parity parity)
{
    m110d_wid wid;
    wid.wn = (dibits[0] & 3u) << 2 | (dibits[1] & 3u);
    wid.interleaver = m110d_interleaver(dibits[2] & 3u);
    wid.constraint_length = (dibits[3] & 2u) ? 9 : 7;
    if (wid.wn > m110d_max_wn || m110d_wid_dibits(wid, parity) != dibits)
        return std::nullopt;
    return wid;
}

const std::array<uint8_t, m110d_pn_length>& m110d_pn(m110d_pn_table table)
{
    switch (table) {
    case m110d_pn_table::fixed:
        return fixed_pn;
    case m110d_pn_table::count:
        return count_pn;
    case m110d_pn_table::wid:
        break;
    }
    return wid_pn;
}

std::vector<uint8_t> m110d_preamble_section(const std::vector<uint8_t>& dibits,
                                            m110d_pn_table table,
                                            unsigned chips,
                                            m110d_pn_alignment alignment)
{
    const auto& pn = m110d_pn(table);
    std::vector<uint8_t> out;
    out.reserve(dibits.size() * chips);
    for (uint8_t dibit : dibits)
        for (unsigned j = 0; j < chips; ++j) {
            const size_t p = alignment == m110d_pn_alignment::per_symbol ? j : out.size();
            out.push_back(
                uint8_t((m110d_walsh_chip(dibit, j) + pn[p % m110d_pn_length]) % 8));
        }
    return out;
}

std::vector<uint8_t>
m110d_tlc_section(unsigned blocks, unsigned chips, m110d_pn_alignment alignment)
{
    std::vector<uint8_t> out;
    out.reserve(size_t(blocks) * chips);
    for (unsigned b = 0; b < blocks; ++b)
        for (unsigned j = 0; j < chips; ++j) {
            const size_t p = alignment == m110d_pn_alignment::per_symbol ? j : out.size();
            out.push_back(uint8_t((8 - fixed_pn[p % m110d_pn_length]) % 8));
        }
    return out;
}

std::vector<uint8_t> m110d_preamble(const m110d_mode& mode,
                                    const m110d_preamble_options& options,
                                    unsigned constraint_length,
                                    const m110d_readings& readings)
{
    // preamble_s() checks N and M.
    (void)mode.preamble_s(options);
    const unsigned chips =
        m110d_preamble_walsh_chips(mode, options, readings.preamble_walsh);
    const m110d_pn_alignment alignment = readings.pn_alignment;
    std::vector<uint8_t> out = m110d_tlc_section(options.tlc_blocks, chips, alignment);
    const auto append = [&out](const std::vector<uint8_t>& section) {
        out.insert(out.end(), section.begin(), section.end());
    };
    const std::vector<uint8_t> fixed =
        options.superframes == 1
            ? std::vector<uint8_t>{ m110d_fixed_dibit_single }
            : std::vector<uint8_t>(m110d_fixed_dibits.begin(), m110d_fixed_dibits.end());
    const auto wid = m110d_wid_dibits({ mode.wn, mode.interleaver, constraint_length },
                                      readings.wid_parity);
    for (unsigned m = 0; m < options.superframes; ++m) {
        const auto count = m110d_count_dibits(options.superframes - 1 - m);
        append(m110d_preamble_section(fixed, m110d_pn_table::fixed, chips, alignment));
        append(m110d_preamble_section(
            { count.begin(), count.end() }, m110d_pn_table::count, chips, alignment));
        append(m110d_preamble_section(
            { wid.begin(), wid.end() }, m110d_pn_table::wid, chips, alignment));
    }
    return out;
}

const std::array<uint8_t, m110d_trinomial_period>& m110d_trinomial_sequence()
{
    static const auto sequence = [] {
        // b[0 .. 158]; one step: b[i] = b[i - 1], b[0] = old b[158] ^ old b[31].
        std::array<uint8_t, 159> b{};
        for (unsigned i = 0; i < 159; ++i)
            b[i] = uint8_t(trinomial_init[i] - '0');
        std::array<uint8_t, m110d_trinomial_period> out{};
        for (auto& v : out) {
            for (unsigned s = 0; s < 16; ++s) {
                const uint8_t in = b[158] ^ b[31];
                std::copy_backward(b.begin(), b.end() - 1, b.end());
                b[0] = in;
            }
            v = uint8_t(b[2] << 2 | b[1] << 1 | b[0]);
        }
        return out;
    }();
    return sequence;
}

unsigned m110d_bits_per_symbol(unsigned wn)
{
    static constexpr unsigned bits[m110d_max_wn + 1] = { 2, 1, 1, 1, 1, 1, 2,
                                                         3, 4, 5, 6, 6, 8, 2 };
    if (wn > m110d_max_wn)
        throw std::invalid_argument("m110d_bits_per_symbol: no WN" + std::to_string(wn));
    return bits[wn];
}

uint8_t m110d_map_bits(unsigned bits, unsigned bits_per_symbol)
{
    if (bits_per_symbol == 1)
        return (bits & 1u) ? 4 : 0;
    return m110c_map_bits(bits, bits_per_symbol); // QPSK, 8PSK (D-V) and QAM as App C
}

const std::vector<std::complex<float>>& m110d_constellation(unsigned bits_per_symbol)
{
    if (bits_per_symbol == 8)
        return qam256;
    return m110c_constellation(bits_per_symbol <= 3 ? 3 : bits_per_symbol);
}

std::vector<uint8_t> m110d_data_scrambler(const m110d_mode& mode,
                                          x9_orientation orientation)
{
    return x9_scrambler_values(
        mode.data_symbols, m110d_bits_per_symbol(mode.wn), orientation);
}

double m110d_frame_power(const m110d_mode& mode)
{
    const unsigned bits = m110d_bits_per_symbol(mode.wn);
    if (mode.wn == 0 || bits <= 3)
        return 1.0;
    const auto& points = m110d_constellation(bits);
    double data = 0;
    for (const auto& p : points)
        data += std::norm(p);
    data /= double(points.size());
    return (mode.data_symbols * data + mode.probe_symbols) /
           double(mode.data_symbols + mode.probe_symbols);
}

std::optional<m110d_probe_shape> m110d_probe_shape_of(unsigned probe_symbols)
{
    for (const auto& s : probe_shapes)
        if (s[0] == probe_symbols)
            return m110d_probe_shape{ s[1], s[2] };
    return std::nullopt;
}

const std::vector<std::complex<float>>& m110d_probe_base(unsigned base_length)
{
    // Every base of D-XXI, built once.
    static const auto bases = [] {
        std::map<unsigned, std::vector<cf>> all;
        all[13] = std::vector<cf>(std::begin(barker13), std::end(barker13));
        all[19] = std::vector<cf>(std::begin(sequence19), std::end(sequence19));
        for (const auto& shape : probe_shapes) {
            const unsigned length = shape[1];
            if (all.count(length))
                continue;
            const unsigned m = unsigned(std::lround(std::sqrt(double(length))));
            std::vector<cf> base;
            for (unsigned q = 0; q < m; ++q)
                for (unsigned r = 0; r < m; ++r) {
                    // Phase index reduced mod m first, so the 8PSK cases come out exact.
                    const unsigned k = (q * r) % m;
                    base.push_back(k == 0 ? cf(1.0f, 0.0f)
                                          : cf(std::polar(1.0, -2.0 * pi * k / m)));
                }
            all[length] = base;
        }
        return all;
    }();
    const auto it = bases.find(base_length);
    if (it == bases.end())
        throw std::invalid_argument("m110d_probe_base: no D-XXI base of length " +
                                    std::to_string(base_length));
    return it->second;
}

std::vector<std::complex<float>>
m110d_mini_probe(unsigned probe_symbols, bool boundary, unsigned length)
{
    const auto shape = m110d_probe_shape_of(probe_symbols);
    if (!shape)
        throw std::invalid_argument("m110d_mini_probe: no D-XXI probe of " +
                                    std::to_string(probe_symbols) + " symbols");
    const std::vector<cf>& base = m110d_probe_base(shape->base_length);
    const unsigned start = boundary ? shape->boundary_shift : 0;
    std::vector<cf> probe(length);
    for (unsigned i = 0; i < length; ++i)
        probe[i] = base[(i + start) % base.size()];
    return probe;
}

bool m110d_probe_is_boundary(const m110d_mode& mode, int64_t frame)
{
    const int64_t f = mode.frames_per_block;
    return f > 0 && (frame + 2) % f == 0;
}

unsigned m110d_eot_extension_symbols(const m110d_mode& mode)
{
    return 32 * mode.bw_khz / 3;
}

const m110d_code_rate& m110d_code_rate_of(const m110d_mode& mode)
{
    const unsigned coded = m110d_interleaver_bits(mode);
    const unsigned input = mode.input_bits_per_block;
    const unsigned g = std::gcd(coded, input);
    for (const auto& r : code_rates)
        if (g && r.numerator == input / g && r.denominator == coded / g)
            return r;
    throw std::logic_error("m110d_code_rate_of: no D-L code rate " +
                           std::to_string(input) + "/" + std::to_string(coded) + " for " +
                           mode.name());
}

const conv_code& m110d_conv_code(unsigned constraint_length, bool k7_newest_lsb)
{
    if (constraint_length == 7)
        return k7_newest_lsb ? conv_code_k7_newest_lsb : conv_code_k7;
    if (constraint_length == 9)
        return conv_code_k9;
    throw std::invalid_argument("m110d: constraint length 7 or 9");
}

std::vector<uint8_t> m110d_puncture(const std::vector<uint8_t>& pairs,
                                    const m110d_code_rate& rate,
                                    unsigned constraint_length)
{
    const size_t count = pairs.size() / 2;
    std::vector<uint8_t> out(sent_bits(count, rate, constraint_length));
    puncture_into(pairs.data(), count, rate, constraint_length, out.data(), false);
    return out;
}

std::vector<float> m110d_depuncture(const float* llr,
                                    size_t pairs,
                                    const m110d_code_rate& rate,
                                    unsigned constraint_length)
{
    std::vector<float> mother;
    m110d_depuncture(llr, pairs, rate, constraint_length, mother);
    return mother;
}

void m110d_depuncture(const float* llr,
                      size_t pairs,
                      const m110d_code_rate& rate,
                      unsigned constraint_length,
                      std::vector<float>& mother,
                      bool concurrently)
{
    mother.resize(2 * pairs);
    float* const out = mother.data();
    // A pair's repeats all lie in its own range: each range sums its own pairs.
    run_ranges(
        pairs,
        min_puncture_range,
        [&](size_t from, size_t to) {
            std::fill(out + 2 * from, out + 2 * to, 0.0f);
            for_each_sent_bit(
                from, to, rate, constraint_length, [&](size_t i, unsigned b, size_t at) {
                    out[2 * i + b] += llr[at];
                });
        },
        concurrently);
}

unsigned m110d_interleaver_bits(const m110d_mode& mode)
{
    if (mode.wn == 0)
        return mode.frames_per_block * m110d_bits_per_symbol(0);
    return mode.frames_per_block * mode.data_symbols * m110d_bits_per_symbol(mode.wn);
}

unsigned m110d_interleaver_increment(const m110d_mode& mode)
{
    for (const auto& r : increments)
        if (r.bw_khz == mode.bw_khz && r.wn == mode.wn &&
            r.increment[unsigned(mode.interleaver)])
            return r.increment[unsigned(mode.interleaver)];
    throw std::invalid_argument("m110d_interleaver_increment: no interleaver for " +
                                mode.name());
}

std::vector<uint32_t> m110d_fetch_order(const m110d_mode& mode)
{
    return increment_fetch_order(m110d_interleaver_bits(mode),
                                 m110d_interleaver_increment(mode));
}

std::vector<uint8_t> m110d_block_channel_bits(const m110d_mode& mode,
                                              const uint8_t* user_bits,
                                              const std::vector<uint32_t>& fetch_order,
                                              unsigned constraint_length,
                                              tail_biting_start start,
                                              bool k7_newest_lsb,
                                              bool concurrently)
{
    const size_t count = mode.input_bits_per_block;
    std::vector<uint8_t> pairs(2 * count);
    tail_biting_encode(m110d_conv_code(constraint_length, k7_newest_lsb),
                       user_bits,
                       count,
                       start,
                       pairs.data(),
                       concurrently);
    const m110d_code_rate& rate = m110d_code_rate_of(mode);
    const size_t sent_count = sent_bits(count, rate, constraint_length);
    if (sent_count != fetch_order.size())
        throw std::logic_error("m110d_block_channel_bits: " + mode.name() + " codes " +
                               std::to_string(sent_count) + " bits into a block of " +
                               std::to_string(fetch_order.size()));
    std::vector<uint8_t> punctured(sent_count);
    puncture_into(
        pairs.data(), count, rate, constraint_length, punctured.data(), concurrently);
    std::vector<uint8_t> sent(fetch_order.size());
    run_ranges(
        sent.size(),
        min_puncture_range,
        [&](size_t from, size_t to) {
            for (size_t k = from; k < to; ++k)
                sent[k] = punctured[fetch_order[k]];
        },
        concurrently);
    return sent;
}

} // namespace phy
} // namespace hfstack
} // namespace gr
