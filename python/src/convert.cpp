#include "convert.hpp"

#include <array>
#include <cstring>

#include "api/api_program.hpp"
#include "core/error.hpp"

namespace kiln::py_api {

namespace {

using api::stage;
using api::stage_error;

constexpr std::array<std::pair<dtype, const char*>, 23> names = {{
    {dtype::bool_, "bool"},         {dtype::int8, "int8"},
    {dtype::int16, "int16"},        {dtype::int32, "int32"},
    {dtype::int64, "int64"},        {dtype::uint8, "uint8"},
    {dtype::uint16, "uint16"},      {dtype::uint32, "uint32"},
    {dtype::uint64, "uint64"},      {dtype::float16, "float16"},
    {dtype::bfloat16, "bfloat16"},  {dtype::float32, "float32"},
    {dtype::float64, "float64"},    {dtype::fp8e4m3fn, "float8_e4m3fn"},
    {dtype::fp8e5m2, "float8_e5m2"}, {dtype::int4, "int4"},
    {dtype::uint4, "uint4"},        {dtype::fp8e4m3fnuz, "float8_e4m3fnuz"},
    {dtype::fp8e5m2fnuz, "float8_e5m2fnuz"}, {dtype::fp8e8m0, "float8_e8m0fnu"},
    {dtype::fp4e2m1, "float4_e2m1fn"}, {dtype::int2, "int2"},
    {dtype::uint2, "uint2"},
}};

bool needs_ml_dtypes(dtype t) {
    return t == dtype::bfloat16 || (is_float(t) && dtype_bits(t) == 8) || is_packed(t);
}

// Keeps a Python object alive for as long as an argument uses its memory.
std::shared_ptr<void> hold(py::object o) {
    return std::shared_ptr<void>(o.release().ptr(), [](void* p) {
        py::gil_scoped_acquire gil;
        Py_DECREF(static_cast<PyObject*>(p));
    });
}

// An argument viewing a numpy array's memory (strides in whole elements, none negative).
std::optional<argument> view_of(const py::array& a, dtype t) {
    std::vector<std::size_t> lens, strides;
    auto item = static_cast<py::ssize_t>(a.itemsize());
    for (py::ssize_t i = 0; i < a.ndim(); ++i) {
        lens.push_back(static_cast<std::size_t>(a.shape(i)));
        py::ssize_t s = a.strides(i);
        if (s < 0 || s % item != 0) return std::nullopt;
        strides.push_back(static_cast<std::size_t>(s / item));
    }
    // A dim of length 1 may carry any stride in numpy; give it the standard one.
    auto standard = shape::standard_strides(lens);
    for (std::size_t i = 0; i < lens.size(); ++i)
        if (lens[i] == 1) strides[i] = standard[i];
    auto* data = static_cast<std::byte*>(const_cast<void*>(a.data()));
    return argument(shape(t, lens, strides), data, hold(py::reinterpret_borrow<py::object>(a)));
}

// A numpy array of str or bytes (dtype object, 'U' or 'S') as a string tensor: str elements in
// UTF-8, bytes as they are.
argument strings_from_array(const py::array& a, const std::string& label) {
    std::vector<std::size_t> lens(a.shape(), a.shape() + a.ndim());
    std::vector<std::string> vals;
    py::list flat = a.attr("ravel")().attr("tolist")();
    for (auto e : flat) {
        if (py::isinstance<py::str>(e)) vals.push_back(e.cast<std::string>());
        else if (py::isinstance<py::bytes>(e)) vals.push_back(std::string(py::reinterpret_borrow<py::bytes>(e)));
        else
            throw stage_error(stage::input, cat(label, ": element ", vals.size(), " is a ",
                                                std::string(py::str(e.get_type().attr("__name__"))),
                                                "; a string tensor takes str or bytes"));
    }
    return from_strings(shape(dtype::string, lens), vals);
}

// A string tensor as a numpy object array of str (bytes where an element is not valid UTF-8).
py::array strings_to_numpy(const argument& a) {
    py::list items;
    for (const auto& s : to_strings(a)) {
        PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), nullptr);
        if (u) {
            items.append(py::reinterpret_steal<py::object>(u));
        } else {
            PyErr_Clear();
            items.append(py::bytes(s));
        }
    }
    py::module_ np = py::module_::import("numpy");
    py::array r = np.attr("empty")(items.size(), "object");
    for (std::size_t i = 0; i < items.size(); ++i) r.attr("__setitem__")(i, items[i]);
    const auto& lens = a.get_shape().lens();
    py::tuple dims(lens.size());
    for (std::size_t i = 0; i < lens.size(); ++i) dims[i] = py::int_(lens[i]);
    return r.attr("reshape")(dims);
}

bool is_string_array(const py::array& a) {
    char kind = a.dtype().kind();
    return kind == 'O' || kind == 'U' || kind == 'S';
}

argument from_array(py::array a, dtype t) {
    if (is_packed(t)) {   // ml_dtypes keeps one 4- or 2-bit value per byte; kiln packs them
        py::array wide = py::module_::import("numpy").attr("ascontiguousarray")(a.attr("astype")("float64"));
        std::vector<std::size_t> lens(wide.shape(), wide.shape() + wide.ndim());
        auto* v = static_cast<const double*>(wide.data());
        std::vector<double> vals(v, v + wide.size());
        return from_doubles(shape(t, lens), vals);
    }
    if (auto v = view_of(a, t)) return *v;
    return *view_of(py::module_::import("numpy").attr("ascontiguousarray")(a), t);
}

}  // namespace

std::string numpy_name(dtype t) {
    if (t == dtype::string) return "str";   // numpy holds them as object, 'U' or 'S' arrays
    for (const auto& [d, n] : names)
        if (d == t) return n;
    fail("type ", dtype_name(t), " has no numpy equivalent");
}

dtype dtype_from_numpy_name(const std::string& name) {
    if (name == "str" || name == "object") return dtype::string;
    for (const auto& [d, n] : names)
        if (name == n) return d;
    throw stage_error(stage::input, cat("numpy type ", name, " has no kiln equivalent"));
}

py::dtype numpy_dtype(dtype t) {
    if (t == dtype::string) return py::dtype("object");
    if (!needs_ml_dtypes(t)) return py::dtype(numpy_name(t));
    py::module_ ml;
    try {
        ml = py::module_::import("ml_dtypes");
    } catch (py::error_already_set&) {
        throw stage_error(stage::input, cat("type ", numpy_name(t), " needs the ml_dtypes package (pip install ml_dtypes)"));
    }
    return py::dtype::from_args(ml.attr(numpy_name(t).c_str()));
}

argument to_container(py::handle obj, const shape& type, const std::string& label) {
    const shape& element = type.element();
    if (type.is_optional()) {
        if (obj.is_none()) return argument(type, {});
        argument v = element.is_tensor() ? to_argument(obj, element.type(), label) : to_container(obj, element, label);
        return argument(type, {v});
    }
    if (!py::isinstance<py::list>(obj) && !py::isinstance<py::tuple>(obj))
        throw stage_error(stage::input, cat(label, ": expected a list of arrays (a sequence), got ",
                                            std::string(py::str(obj.get_type().attr("__name__")))));
    std::vector<argument> elements;
    std::size_t i = 0;
    for (auto e : obj) elements.push_back(to_argument(e, element.type(), cat(label, " element ", i++)));
    return argument(type, std::move(elements));
}

py::object to_python(const argument& a) {
    const shape& s = a.get_shape();
    if (s.is_optional()) return a.sub_arguments().empty() ? py::none() : to_python(a.sub_arguments()[0]);
    if (!s.is_sequence()) return to_numpy(a);
    py::list l;
    for (const auto& e : a.sub_arguments()) l.append(to_numpy(e));
    return l;
}

argument to_argument(py::handle obj, std::optional<dtype> want, const std::string& label) {
    if (py::isinstance<py_argument>(obj)) {
        argument a = obj.cast<const py_argument&>().arg;
        if (want && a.get_shape().type() != *want)
            throw stage_error(stage::input, cat(label, " is ", numpy_name(a.get_shape().type()), ", expected ",
                                                numpy_name(*want)));
        return a;
    }
    if (!py::isinstance<py::array>(obj) && py::hasattr(obj, "__dlpack__")) {
        argument a = from_dlpack(obj);
        if (want && a.get_shape().type() != *want)
            throw stage_error(stage::input, cat(label, " is ", numpy_name(a.get_shape().type()), ", expected ",
                                                numpy_name(*want)));
        return a;
    }
    if (py::isinstance<py::array>(obj)) {
        auto a = py::reinterpret_borrow<py::array>(obj);
        // kiln's buffers are in native byte order; a '>f4' array is converted, not read as '<f4'.
        if (!a.dtype().attr("isnative").cast<bool>())
            a = a.attr("astype")(a.dtype().attr("newbyteorder")("=")).cast<py::array>();
        std::string name = py::str(a.dtype().attr("name"));
        if (is_string_array(a)) {
            if (want && *want != dtype::string)
                throw stage_error(stage::input, cat(label, " is a ", name, " array, expected ", numpy_name(*want)));
            return strings_from_array(a, label);
        }
        dtype t = dtype_from_numpy_name(name);
        if (want && t != *want)
            throw stage_error(stage::input, cat(label, " is a ", name, " array, expected ", numpy_name(*want),
                                                " (convert it with .astype(numpy.", numpy_name(*want), "))"));
        return from_array(a, t);
    }
    if (!want || *want == dtype::string)
        return to_argument(py::module_::import("numpy").attr("asarray")(obj, want ? py::object(py::str("object")) : py::object(py::none())),
                           want, label);
    try {
        return from_array(py::module_::import("numpy").attr("asarray")(obj, numpy_dtype(*want)), *want);
    } catch (py::error_already_set& e) {
        throw stage_error(stage::input, cat(label, ": cannot convert a ", std::string(py::str(obj.get_type().attr("__name__"))),
                                            " to a ", numpy_name(*want), " array: ", e.what()));
    }
}

namespace {

// CUDA memory described by __cuda_array_interface__ (version 2 or 3): shape, typestr, data,
// strides in bytes or None, and the stream the data is ready on.
caller_buffer from_cuda_interface(py::handle obj, const std::string& label) {
    py::dict cai = obj.attr("__cuda_array_interface__");
    py::module_ np = py::module_::import("numpy");
    std::string type_name = py::str(np.attr("dtype")(cai["typestr"]).attr("name"));
    dtype t = dtype_from_numpy_name(type_name);
    if (is_packed(t)) throw stage_error(stage::input, cat(label, ": packed 4-bit CUDA tensors are not supported"));
    std::size_t item = dtype_bits(t) / 8;
    std::vector<std::size_t> lens;
    for (auto l : cai["shape"]) lens.push_back(l.cast<std::size_t>());
    std::vector<std::size_t> strides = shape::standard_strides(lens);
    if (cai.contains("strides") && !cai["strides"].is_none()) {
        std::size_t i = 0;
        for (auto st : cai["strides"]) {
            auto bytes = st.cast<long long>();
            if (bytes < 0 || bytes % static_cast<long long>(item) != 0)
                throw stage_error(stage::input, cat(label, ": CUDA strides of ", bytes, " bytes are not supported"));
            if (lens[i] != 1) strides[i] = static_cast<std::size_t>(bytes) / item;
            ++i;
        }
    }
    auto data = cai["data"].cast<py::tuple>()[0].cast<std::uintptr_t>();
    void* stream = nullptr;
    if (cai.contains("stream") && !cai["stream"].is_none())
        stream = reinterpret_cast<void*>(cai["stream"].cast<std::uintptr_t>());
    return {argument(shape(t, lens, strides), reinterpret_cast<std::byte*>(data), hold(py::reinterpret_borrow<py::object>(obj))),
            true, stream};
}

}  // namespace

caller_buffer to_buffer(py::handle obj, std::optional<dtype> want, const std::string& label) {
    std::optional<caller_buffer> b;
    if (py::hasattr(obj, "__cuda_array_interface__")) {
        b = from_cuda_interface(obj, label);
    } else {
        b = cuda_dlpack(obj);
    }
    if (!b) return {to_argument(obj, want, label), false, nullptr};
    if (want && b->arg.get_shape().type() != *want)
        throw stage_error(stage::input, cat(label, " is ", numpy_name(b->arg.get_shape().type()), ", expected ",
                                            numpy_name(*want)));
    return *b;
}

py::array to_numpy(const argument& a) {
    const shape& s = a.get_shape();
    if (s.is_tuple()) fail("a tuple argument has no numpy form");
    if (s.type() == dtype::string) return strings_to_numpy(a);
    std::vector<py::ssize_t> lens(s.lens().begin(), s.lens().end());
    if (is_packed(s.type())) {
        auto vals = to_doubles(a);
        py::array_t<double> wide(lens);
        for (std::size_t i = 0; i < vals.size(); ++i) wide.mutable_data()[i] = vals[i];
        return wide.attr("astype")(numpy_dtype(s.type()));
    }
    py::dtype dt = numpy_dtype(s.type());
    std::vector<py::ssize_t> strides;
    for (auto st : s.strides()) strides.push_back(static_cast<py::ssize_t>(st) * dt.itemsize());
    auto* keep = new argument(a);
    py::capsule owner(keep, [](void* p) { delete static_cast<argument*>(p); });
    return py::array(dt, lens, strides, a.data(), owner);
}

}  // namespace kiln::py_api
