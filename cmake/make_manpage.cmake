# Copyright 2026 gr-hfstack authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
# One app's manual page by help2man from its --help and --version, with a COMMANDS
# section holding `APP COMMAND --help` of each of its commands (apps/CMakeLists.txt):
#   cmake -DHELP2MAN=... -DPYTHON=... -DAPP=apps/hfstack-sim -DSUMMARY="..."
#         -DCOMMANDS=ping,throughput -DMODULE_PATH=build/test_modules
#         -DOUTPUT=hfstack-sim.1 -P make_manpage.cmake
get_filename_component(name "${APP}" NAME)
set(ENV{PYTHONPATH} "${MODULE_PATH}")
# GNU Radio logs to stdout unless told otherwise.
set(ENV{GR_CONF_LOG_LOG_FILE} "stderr")

set(include_file "${OUTPUT}.include")
set(include_option)
if(COMMANDS)
    string(REPLACE "," ";" commands "${COMMANDS}")
    set(text "[COMMANDS]\nEach command's own options (${name} COMMAND --help).\n")
    foreach(command ${commands})
        execute_process(COMMAND "${PYTHON}" "${APP}" ${command} --help
                        OUTPUT_VARIABLE help ERROR_VARIABLE error RESULT_VARIABLE status)
        if(NOT status EQUAL 0)
            message(FATAL_ERROR "${name} ${command} --help failed (${status}): ${error}")
        endif()
        # roff: a backslash is written \e; a line may not start with a control character.
        string(REPLACE "\\" "\\e" help "${help}")
        string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
        string(APPEND text ".SS \"${name} ${command}\"\n.nf\n${help}.fi\n")
    endforeach()
    file(WRITE "${include_file}" "${text}")
    set(include_option "--include=${include_file}")
endif()

execute_process(COMMAND "${HELP2MAN}" --no-info --no-discard-stderr --section=1
                        "--name=${SUMMARY}" ${include_option} "--output=${OUTPUT}"
                        "${PYTHON} ${APP}"
                RESULT_VARIABLE status ERROR_VARIABLE error)
file(REMOVE "${include_file}")
if(NOT status EQUAL 0)
    message(FATAL_ERROR "help2man ${name} failed (${status}): ${error}")
endif()
