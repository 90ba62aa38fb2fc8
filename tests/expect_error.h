/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Shared by the kernel tests: bad parameters must be refused with a message that names
// the offending parameter.
#ifndef HFSTACK_TESTS_EXPECT_ERROR_H
#define HFSTACK_TESTS_EXPECT_ERROR_H

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

inline void expect_throws_naming(const std::function<void()>& f, const std::string& name)
{
    try {
        f();
        FAIL() << "no exception naming " << name;
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
}

#endif
