/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Known-answer vectors written as hex text ("90 EB 00 ...").
#ifndef HFSTACK_TESTS_HEX_SUPPORT_H
#define HFSTACK_TESTS_HEX_SUPPORT_H

#include "dl/codec.h"

#include <cstdio>

inline gr::hfstack::dl::bytes hex(const char* s)
{
    gr::hfstack::dl::bytes out;
    unsigned v;
    int n;
    while (std::sscanf(s, " %2x%n", &v, &n) == 1) {
        out.push_back(uint8_t(v));
        s += n;
    }
    return out;
}

#endif
