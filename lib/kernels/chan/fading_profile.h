/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Watterson path sets: the ITU-R F.1487 Annex 3 conditions, the former F.520 names and
 * AWGN, shared by the sample-level channel (watterson_channel) and the simulator's
 * frame-error process (sim/fading_errors). Source: shared/spec/channel.json. */
#ifndef HFSTACK_KERNELS_CHAN_FADING_PROFILE_H
#define HFSTACK_KERNELS_CHAN_FADING_PROFILE_H

#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace chan {

struct watterson_path {
    double power = 1;     // relative mean power; users normalise the set to sum 1
    double spread_hz = 0; // two-sigma Doppler spread (F.1487); 0 = a static path
    double shift_hz = 0;  // Doppler shift
    double delay_s = 0;   // delay of the path
};

struct fading_profile {
    std::string name;
    std::vector<watterson_path> paths; // empty: AWGN (one static path)
};

// "awgn"; the F.1487 Annex 3 conditions "low_latitude_quiet", "low_latitude_moderate",
// "low_latitude_disturbed", "mid_latitude_quiet", "mid_latitude_moderate",
// "mid_latitude_disturbed", "mid_latitude_disturbed_nvis", "high_latitude_quiet",
// "high_latitude_moderate", "high_latitude_disturbed"; and the former F.520 names "good"
// (0.5 ms, 0.1 Hz), "moderate" (1 ms, 0.5 Hz), "poor" (2 ms, 1 Hz) and "flutter"
// (0.5 ms, 10 Hz). All fading ones: 2 equal Rayleigh paths, the first at delay 0, no
// shift. Throws std::invalid_argument naming "profile" for an unknown name.
fading_profile fading_profile_by_name(const std::string& name);
std::vector<std::string> fading_profile_names();

// Checks every path (power, spread and delay finite and >= 0, shift finite; at least
// one path with power > 0) and returns the powers normalised to sum 1. Error messages
// name "<field>[i].<member>". Throws std::invalid_argument.
std::vector<watterson_path> normalised_paths(const std::vector<watterson_path>& paths,
                                             const std::string& field = "paths");

// Seed of path `index` of a channel seeded with `seed`: SplitMix64 of the pair, so the
// paths (and other consumers) get well separated generator seeds.
uint64_t path_seed(uint64_t seed, uint64_t index);

} // namespace chan
} // namespace hfstack
} // namespace gr

#endif
