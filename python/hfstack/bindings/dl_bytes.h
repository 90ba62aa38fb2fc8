/*
 * Copyright 2026 gr-hfstack authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Python <-> dl::bytes conversion for the codec bindings: pybind11's list caster
 * refuses Python bytes, which is what users naturally pass. */
#ifndef HFSTACK_BINDINGS_DL_BYTES_H
#define HFSTACK_BINDINGS_DL_BYTES_H

#include <pybind11/pybind11.h>

#include "dl/codec.h"

namespace hfstack_bindings {

namespace py = pybind11;

// Accepts bytes, bytearray, memoryview or any iterable of ints 0..255.
inline gr::hfstack::dl::bytes to_bytes(const py::object& o)
{
    if (py::isinstance<py::bytes>(o)) {
        const std::string s = o.cast<std::string>();
        return gr::hfstack::dl::bytes(s.begin(), s.end());
    }
    if (py::isinstance<py::bytearray>(o) || py::isinstance<py::memoryview>(o)) {
        PyObject* b = PyBytes_FromObject(o.ptr());
        if (!b)
            throw py::error_already_set();
        return to_bytes(py::reinterpret_steal<py::object>(b));
    }
    gr::hfstack::dl::bytes out;
    for (auto item : o) {
        const long v = item.cast<long>();
        if (v < 0 || v > 255)
            throw py::value_error("byte value " + std::to_string(v) + " outside 0..255");
        out.push_back(uint8_t(v));
    }
    return out;
}

inline py::bytes to_py(const gr::hfstack::dl::bytes& b)
{
    return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

// Binds a dl::bytes member as a property that reads as bytes and takes any of the above.
template <typename T>
void bytes_property(py::class_<T>& cls,
                    const char* name,
                    gr::hfstack::dl::bytes T::*member)
{
    cls.def_property(
        name,
        [member](const T& self) { return to_py(self.*member); },
        [member](T& self, const py::object& v) { self.*member = to_bytes(v); });
}

// Raises ValueError("<error>: <reason>") for a failed decode, else returns the value.
template <typename T>
T value_or_raise(gr::hfstack::dl::decoded<T>&& d)
{
    if (!d.ok())
        throw py::value_error(std::string(gr::hfstack::dl::to_string(d.error)) + ": " +
                              d.reason);
    return std::move(d.value);
}

} // namespace hfstack_bindings

#endif
