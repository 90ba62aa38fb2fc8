# Copyright Free Software Foundation, Inc. (GNU Radio's gr_modtool template)
#
# SPDX-License-Identifier: GPL-3.0-or-later
"""
Contains generated files produced by generateDS.py.

These do the real work of parsing the doxygen xml files but the
resultant classes are not very friendly to navigate so the rest of the
doxyxml module processes them further.
"""
