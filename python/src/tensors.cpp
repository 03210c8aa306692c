// kiln.Shape, kiln.DynamicDim and kiln.Argument (buffer protocol, DLPack, numpy views).
#include <pybind11/stl.h>

#include "api/api_program.hpp"
#include "convert.hpp"
#include "core/error.hpp"

namespace kiln::py_api {

namespace {

dtype dtype_of(py::handle t) {
    if (py::isinstance<py::str>(t)) {
        std::string s = py::str(t);
        try {
            return dtype_from_numpy_name(s);
        } catch (const error&) {
            return parse_dtype(s);   // kiln's names: "float_type", "half", ...
        }
    }
    return dtype_from_numpy_name(py::str(py::dtype::from_args(py::reinterpret_borrow<py::object>(t)).attr("name")));
}

shape make_shape(py::handle type, const std::vector<py::object>& dims, std::optional<std::vector<std::size_t>> strides) {
    dtype t = dtype_of(type);
    bool dynamic = std::any_of(dims.begin(), dims.end(), [](const py::object& d) { return !py::isinstance<py::int_>(d); });
    if (!dynamic) {
        std::vector<std::size_t> lens;
        for (const auto& d : dims) lens.push_back(d.cast<std::size_t>());
        return strides ? shape(t, lens, *strides) : shape(t, lens);
    }
    if (strides) fail("Shape: a dynamic shape has no strides");
    std::vector<dynamic_dim> dd;
    for (const auto& d : dims) {
        if (py::isinstance<py::int_>(d)) {
            auto n = d.cast<std::size_t>();
            dd.push_back({n, n, {}, {}});
        } else if (py::isinstance<dynamic_dim>(d)) {
            dd.push_back(d.cast<dynamic_dim>());
        } else {
            auto r = d.cast<std::pair<std::size_t, std::size_t>>();
            dd.push_back({r.first, r.second, {}, {}});
        }
    }
    return shape(t, dd);
}

py::buffer_info buffer_of(const py_argument& a) {
    const shape& s = a.arg.get_shape();
    dtype t = s.type();
    std::string format;
    switch (t) {
        case dtype::bool_: format = "?"; break;
        case dtype::int8: format = "b"; break;
        case dtype::int16: format = "h"; break;
        case dtype::int32: format = "i"; break;
        case dtype::int64: format = "q"; break;
        case dtype::uint8: format = "B"; break;
        case dtype::uint16: format = "H"; break;
        case dtype::uint32: format = "I"; break;
        case dtype::uint64: format = "Q"; break;
        case dtype::float16: format = "e"; break;
        case dtype::float32: format = "f"; break;
        case dtype::float64: format = "d"; break;
        default:
            throw py::buffer_error(cat("a ", numpy_name(t), " argument has no buffer-protocol format; use "
                                       "Argument.numpy() (with ml_dtypes)"));
    }
    auto item = static_cast<py::ssize_t>(s.type_bits() / 8);
    std::vector<py::ssize_t> lens(s.lens().begin(), s.lens().end()), strides;
    for (auto st : s.strides()) strides.push_back(static_cast<py::ssize_t>(st) * item);
    return py::buffer_info(a.arg.data(), item, format, static_cast<py::ssize_t>(lens.size()), lens, strides);
}

}  // namespace

void bind_tensors(py::module_& m) {
    py::class_<dynamic_dim>(m, "DynamicDim", "A dynamic dim: a range {min, max}, optimal sizes and a symbol name.")
        .def(py::init([](std::size_t min, std::size_t max, std::vector<std::size_t> optimals, std::string symbol) {
                 if (min > max) fail("DynamicDim: min ", min, " > max ", max);
                 return dynamic_dim{min, max, std::move(optimals), std::move(symbol)};
             }),
             py::arg("min"), py::arg("max"), py::arg("optimals") = std::vector<std::size_t>{},
             py::arg("symbol") = "")
        .def_readonly("min", &dynamic_dim::min)
        .def_readonly("max", &dynamic_dim::max)
        .def_readonly("optimals", &dynamic_dim::optimals)
        .def_readonly("symbol", &dynamic_dim::symbol)
        .def("is_fixed", &dynamic_dim::is_fixed)
        .def("__eq__", [](const dynamic_dim& a, const dynamic_dim& b) { return a == b; })
        .def("__repr__", [](const dynamic_dim& d) { return "DynamicDim(" + to_string(d) + ")"; });

    py::class_<shape>(m, "Shape", "A tensor type: element type, lens and strides (in elements), or dynamic dims.")
        .def(py::init(&make_shape), py::arg("type"), py::arg("lens"), py::arg("strides") = py::none(),
             "type: a numpy dtype or name ('float32'); lens: ints, or DynamicDim / (min, max) for dynamic dims.")
        .def_property_readonly("type", [](const shape& s) { return numpy_name(s.type()); },
                               "The numpy-style type name: 'float32', 'bfloat16', 'int4', ...")
        .def_property_readonly("type_name", [](const shape& s) { return std::string(dtype_name(s.type())); },
                               "kiln's printed type name: 'float_type', ...")
        .def_property_readonly("dtype", [](const shape& s) { return numpy_dtype(s.type()); })
        .def_property_readonly("lens", [](const shape& s) { return s.lens(); })
        .def_property_readonly("strides", [](const shape& s) { return s.strides(); })
        .def_property_readonly("dynamic", &shape::dynamic)
        .def_property_readonly("dyn_dims", &shape::dims, "Every dim as a DynamicDim (fixed dims have min == max).")
        .def_property_readonly("ndim", &shape::ndim)
        .def("elements", &shape::elements)
        .def("bytes", &shape::bytes)
        .def("standard", &shape::standard)
        .def("scalar", &shape::scalar)
        .def("__eq__", [](const shape& a, const shape& b) { return a == b; })
        .def("__str__", [](const shape& s) { return to_string(s); })
        .def("__repr__", [](const shape& s) { return "Shape(" + to_string(s) + ")"; });

    py::class_<py_argument>(m, "Argument", py::buffer_protocol(),
                            "A tensor: a Shape plus a host buffer. Shares memory with the numpy array, DLPack "
                            "producer or buffer it was made from.")
        .def(py::init([](py::object a) { return py_argument{to_argument(a, std::nullopt, "Argument")}; }),
             py::arg("array"), "Wraps an array-like without copying where its layout allows.")
        .def_property_readonly("shape", [](const py_argument& a) { return a.arg.get_shape(); })
        .def("numpy", [](const py_argument& a) { return to_numpy(a.arg); },
             "A numpy array sharing the buffer (packed int4 is unpacked into a copy).")
        .def("__array__", [](const py_argument& a, py::object dtype, py::object) {
                 py::object arr = to_numpy(a.arg);
                 return dtype.is_none() ? arr : arr.attr("astype")(dtype);
             },
             py::arg("dtype") = py::none(), py::arg("copy") = py::none())
        .def("__dlpack__", [](const py_argument& a, py::kwargs) { return to_dlpack(a.arg); })
        .def("__dlpack_device__", [](const py_argument&) { return py::make_tuple(1, 0); })
        .def("__repr__", [](const py_argument& a) { return "Argument(" + to_string(a.arg.get_shape()) + ")"; })
        .def_buffer(&buffer_of);

    m.def("from_dlpack", [](py::object o) { return py_argument{from_dlpack(o)}; }, py::arg("tensor"),
          "An Argument sharing the memory of a DLPack producer (a torch tensor, a numpy array, ...).");
}

}  // namespace kiln::py_api
