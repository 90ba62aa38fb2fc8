/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* The node's journal file (lib/journal_file.h): a settled record the SIS server writes
 * while the engine's state still counts its delivery as unsettled survives the rewrite
 * made from that state; settled records written from another thread while the node
 * rewrites the journal are all in the file that replaces it; after close nothing more is
 * written; a journal that cannot be opened is a clear error. */
#include "dl/node_journal.h"
#include "journal_file.h"
#include "node_test_support.h"

#include <gtest/gtest.h>

#include <system_error>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

using namespace gr::hfstack;
using namespace gr::hfstack::dl;

namespace {

constexpr uint32_t node_address = 2;

struct temporary_dir {
    std::filesystem::path path;
    temporary_dir()
    {
        std::string name =
            (std::filesystem::temp_directory_path() / "hfstack-journal-XXXXXX").string();
        if (!::mkdtemp(name.data()))
            throw std::runtime_error("mkdtemp failed");
        path = name;
    }
    ~temporary_dir() { std::filesystem::remove_all(path); }
};

bytes delivery(uint64_t number)
{
    return journal_delivery_record(number,
                                   encode(arq_indication(bytes(20, uint8_t(number)))));
}

// The journal as the engine would rewrite it: the header and these deliveries unsettled.
bytes state_with(const std::set<uint64_t>& unsettled)
{
    bytes b = journal_header(node_address);
    for (uint64_t k : unsettled) {
        const auto r = delivery(k);
        b.insert(b.end(), r.begin(), r.end());
    }
    return b;
}

std::set<uint64_t> unsettled_in(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    const bytes held((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    std::set<uint64_t> out;
    for (const auto& [k, indication] : replay_journal(held, node_address).unsettled)
        out.insert(k);
    return out;
}

} // namespace

TEST(JournalFile, ASettledRecordTheRewritesStateMissedIsWrittenAgain)
{
    temporary_dir dir;
    const auto path = dir.path / "arq-journal";
    journal_file journal(path.string());
    ASSERT_TRUE(journal.append(state_with({ 1, 2 })));
    journal.settle(1, true); // the server wrote C_PDU 1; the engine has not heard yet
    EXPECT_EQ(unsettled_in(path), (std::set<uint64_t>{ 2 }));
    ASSERT_TRUE(journal.rewrite(state_with({ 1, 2 })));
    EXPECT_EQ(unsettled_in(path), (std::set<uint64_t>{ 2 }));

    // Once the engine has it, a rewrite's state is trusted (no record added).
    journal.settled_seen(1);
    const bytes state = state_with({ 2 });
    ASSERT_TRUE(journal.rewrite(state));
    EXPECT_EQ(std::filesystem::file_size(path), state.size());
    EXPECT_FALSE(std::filesystem::exists(path.string() + ".new"));

    journal.settle(2, false); // the client was gone
    EXPECT_TRUE(unsettled_in(path).empty());
    EXPECT_FALSE(journal.failed());
}

TEST(JournalFile, SettledRecordsFromAnotherThreadSurviveEveryRewrite)
{
    temporary_dir dir;
    const auto path = dir.path / "arq-journal";
    journal_file journal(path.string());
    constexpr uint64_t deliveries = 400;
    std::set<uint64_t> all;
    for (uint64_t k = 1; k <= deliveries; ++k)
        all.insert(k);
    ASSERT_TRUE(journal.append(state_with(all)));
    // The engine never hears of the settling here, so every rewrite's state holds all
    // of them: only the records written again keep them settled.
    std::thread server([&] {
        for (uint64_t k = 1; k <= deliveries; ++k)
            journal.settle(k, true);
    });
    for (int i = 0; i < 40; ++i)
        ASSERT_TRUE(journal.rewrite(state_with(all)));
    server.join();
    EXPECT_TRUE(unsettled_in(path).empty());
    ASSERT_TRUE(journal.rewrite(state_with(all)));
    EXPECT_TRUE(unsettled_in(path).empty());
}

TEST(JournalFile, SettledRecordsNotSeenAreBounded)
{
    temporary_dir dir;
    const auto path = dir.path / "arq-journal";
    journal_file journal(path.string());
    ASSERT_TRUE(journal.append(state_with({})));
    const uint64_t over = journal_file::max_unseen_settled + 3;
    for (uint64_t k = 1; k <= over; ++k)
        journal.settle(k, true);
    ASSERT_TRUE(journal.rewrite(state_with({ 1, 2, 3, 4 })));
    // The oldest three were forgotten: at worst those C_PDUs would be repeated.
    EXPECT_EQ(unsettled_in(path), (std::set<uint64_t>{ 1, 2, 3 }));
}

TEST(JournalFile, NothingIsWrittenAfterClose)
{
    temporary_dir dir;
    const auto path = dir.path / "arq-journal";
    journal_file journal(path.string());
    ASSERT_TRUE(journal.append(state_with({ 5 })));
    ASSERT_TRUE(journal.sync());
    const auto size = std::filesystem::file_size(path);
    journal.close();
    journal.settle(5, true); // a server still holding the node's journal
    EXPECT_EQ(std::filesystem::file_size(path), size);
    EXPECT_EQ(unsettled_in(path), (std::set<uint64_t>{ 5 }));
}

TEST(JournalFile, AJournalThatCannotBeOpenedIsAClearError)
{
    temporary_dir dir;
    try {
        journal_file journal((dir.path / "missing" / "arq-journal").string());
        FAIL() << "opened a journal in a missing directory";
    } catch (const std::system_error& e) {
        EXPECT_NE(std::string(e.what()).find("missing/arq-journal"), std::string::npos)
            << e.what();
    }
}
