/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* GNU Radio's log lines (the blocks' loggers: node, sis_server, ip_client, ...) in the
 * apps' format, `PROG: LEVEL: LOGGER: message` on stderr, as Python's logging writes
 * them (cli.setup_logging): one format on an app's stderr instead of GNU Radio's
 * `LOGGER :level: message` between the apps' own lines. */
#include <gnuradio/logger.h>
#include <pybind11/pybind11.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/dist_sink.h>

#include <cctype>
#include <cstdio>
#include <mutex>
#include <string>

namespace py = pybind11;

namespace {

class app_format_sink : public spdlog::sinks::base_sink<std::mutex>
{
public:
    explicit app_format_sink(std::string prog) : d_prog(std::move(prog)) {}

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override
    {
        const auto name = spdlog::level::to_string_view(msg.level);
        std::string level(name.data(), name.size());
        for (auto& ch : level)
            ch = char(std::toupper(static_cast<unsigned char>(ch)));
        const std::string line =
            d_prog + ": " + level + ": " +
            std::string(msg.logger_name.data(), msg.logger_name.size()) + ": " +
            std::string(msg.payload.data(), msg.payload.size()) + "\n";
        std::fwrite(line.data(), 1, line.size(), stderr);
    }
    void flush_() override { std::fflush(stderr); }

private:
    std::string d_prog;
};

} // namespace

void bind_logs(py::module& m)
{
    m.def(
        "log_in_app_format",
        [](const std::string& prog) {
            auto backend = std::dynamic_pointer_cast<spdlog::sinks::dist_sink_mt>(
                gr::logging::singleton().default_backend());
            if (!backend)
                return false;
            backend->set_sinks({ std::make_shared<app_format_sink>(prog) });
            return true;
        },
        py::arg("prog"),
        "GNU Radio's log lines as `PROG: LEVEL: LOGGER: message` on stderr, in place of "
        "its console format; False if its logging has no sinks to replace");
}
