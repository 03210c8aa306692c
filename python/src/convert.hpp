// Between Python objects and kiln arguments: numpy arrays (zero copy where the layout allows),
// kiln.Argument, and DLPack producers (torch tensors, numpy arrays).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "core/argument.hpp"
#include "core/target.hpp"

namespace kiln::py_api {

namespace py = pybind11;

// A kiln.Argument: an argument the Python side can hold.
struct py_argument {
    argument arg;
};

// numpy-style names: "float32", "bfloat16", "float8_e4m3fn", "int4", ...
std::string numpy_name(dtype t);
dtype dtype_from_numpy_name(const std::string& name);
// The numpy dtype of a kiln type (ml_dtypes for bfloat16, fp8 and int4).
py::dtype numpy_dtype(dtype t);

// An argument over an array-like. `want` (the input's type) converts lists and scalars and
// rejects arrays of another type; `label` names the input in errors.
argument to_argument(py::handle obj, std::optional<dtype> want, const std::string& label);
// A numpy array viewing the argument's buffer (kept alive by the array); packed int4 is unpacked.
py::array to_numpy(const argument& a);
// An input of a sequence type (a list of array-likes) or an optional type (None, or its value).
argument to_container(py::handle obj, const shape& type, const std::string& label);
// An output as Python: a numpy array, a list of arrays (a sequence), None or the value (an optional).
py::object to_python(const argument& a);

// An input or output buffer of Program.run: CUDA device memory from __cuda_array_interface__ or a
// DLPack producer on a CUDA device (zero copy: the buffer keeps the object alive), otherwise host
// memory as to_argument makes it.
caller_buffer to_buffer(py::handle obj, std::optional<dtype> want, const std::string& label);

// DLPack: a "dltensor" capsule over the argument, and an argument over a producer's tensor.
py::capsule to_dlpack(const argument& a);
argument from_dlpack(py::handle obj);
// The CUDA memory of a DLPack producer whose __dlpack_device__ is a CUDA device; nullopt otherwise.
std::optional<caller_buffer> cuda_dlpack(py::handle obj);

}  // namespace kiln::py_api
