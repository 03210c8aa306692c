// DLPack exchange (the unversioned "dltensor" capsule every producer supports: numpy >= 1.22,
// torch, cupy). The structs are DLPack's stable C ABI, declared here to avoid a dependency.
#include <cstdint>

#include "api/api_program.hpp"
#include "convert.hpp"
#include "core/error.hpp"

namespace kiln::py_api {

namespace {

struct dl_device {
    std::int32_t device_type;   // 1: CPU, 2: CUDA, 3: CUDA host
    std::int32_t device_id;
};
struct dl_dtype {
    std::uint8_t code;   // 0: int, 1: uint, 2: float, 4: bfloat, 6: bool
    std::uint8_t bits;
    std::uint16_t lanes;
};
struct dl_tensor {
    void* data;
    dl_device device;
    std::int32_t ndim;
    dl_dtype dtype;
    std::int64_t* shape;
    std::int64_t* strides;   // in elements; null means row-major packed
    std::uint64_t byte_offset;
};
struct dl_managed_tensor {
    dl_tensor dl;
    void* manager_ctx;
    void (*deleter)(dl_managed_tensor*);
};

constexpr std::int32_t dl_cpu = 1, dl_cuda = 2, dl_cuda_managed = 13;

dl_dtype to_dl(dtype t) {
    switch (t) {
        case dtype::bool_: return {6, 8, 1};
        case dtype::int8: return {0, 8, 1};
        case dtype::int16: return {0, 16, 1};
        case dtype::int32: return {0, 32, 1};
        case dtype::int64: return {0, 64, 1};
        case dtype::uint8: return {1, 8, 1};
        case dtype::uint16: return {1, 16, 1};
        case dtype::uint32: return {1, 32, 1};
        case dtype::uint64: return {1, 64, 1};
        case dtype::float16: return {2, 16, 1};
        case dtype::float32: return {2, 32, 1};
        case dtype::float64: return {2, 64, 1};
        case dtype::bfloat16: return {4, 16, 1};
        default: fail("DLPack has no type for ", dtype_name(t));
    }
}

dtype from_dl(dl_dtype d) {
    for (int i = 0; i < static_cast<int>(dtype::tuple); ++i) {
        auto t = static_cast<dtype>(i);
        if ((is_float(t) && dtype_bits(t) == 8) || is_packed(t) || t == dtype::string) continue;   // no DLPack type
        dl_dtype k = to_dl(t);
        if (k.code == d.code && k.bits == d.bits && d.lanes == 1) return t;
    }
    throw api::stage_error(api::stage::input, cat("DLPack type (code ", int(d.code), ", bits ", int(d.bits), ", lanes ",
                                                  d.lanes, ") has no kiln equivalent"));
}

// What a capsule we hand out owns: the argument (keeping its buffer alive) and the dims.
struct export_ctx {
    dl_managed_tensor managed;
    argument arg;
    std::vector<std::int64_t> shape, strides;
};

}  // namespace

py::capsule to_dlpack(const argument& a) {
    const kiln::shape& s = a.get_shape();
    auto* ctx = new export_ctx{{}, a, {}, {}};
    try {
        ctx->managed.dl.dtype = to_dl(s.type());
    } catch (...) {
        delete ctx;
        throw;
    }
    for (auto l : s.lens()) ctx->shape.push_back(static_cast<std::int64_t>(l));
    for (auto st : s.strides()) ctx->strides.push_back(static_cast<std::int64_t>(st));
    ctx->managed.dl.data = a.data();
    ctx->managed.dl.device = {dl_cpu, 0};
    ctx->managed.dl.ndim = static_cast<std::int32_t>(s.lens().size());
    ctx->managed.dl.shape = ctx->shape.data();
    ctx->managed.dl.strides = ctx->strides.data();
    ctx->managed.manager_ctx = ctx;
    ctx->managed.deleter = [](dl_managed_tensor* m) { delete static_cast<export_ctx*>(m->manager_ctx); };
    // A consumer renames the capsule to "used_dltensor" and calls the deleter itself; an unused
    // capsule deletes the tensor when it is collected.
    PyObject* cap = PyCapsule_New(&ctx->managed, "dltensor", [](PyObject* c) {
        if (PyCapsule_IsValid(c, "dltensor")) {
            auto* m = static_cast<dl_managed_tensor*>(PyCapsule_GetPointer(c, "dltensor"));
            m->deleter(m);
        }
    });
    if (!cap) throw py::error_already_set();
    return py::reinterpret_steal<py::capsule>(cap);
}

namespace {

// An argument over a "dltensor" capsule's tensor (the capsule is marked used; the argument owns
// the tensor and calls its deleter); `device` says whether CUDA memory is wanted.
argument take_capsule(py::object cap_obj, bool device) {
    PyObject* cap = cap_obj.ptr();
    if (!PyCapsule_IsValid(cap, "dltensor"))
        throw api::stage_error(api::stage::input, "from_dlpack: not an unused DLPack capsule ('dltensor')");
    auto* m = static_cast<dl_managed_tensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    std::shared_ptr<void> owner(m, [](void* p) {
        auto* t = static_cast<dl_managed_tensor*>(p);
        py::gil_scoped_acquire gil;
        if (t->deleter) t->deleter(t);
    });
    PyCapsule_SetName(cap, "used_dltensor");
    const dl_tensor& t = m->dl;
    bool cuda = t.device.device_type == dl_cuda || t.device.device_type == dl_cuda_managed;
    if (device ? !cuda : t.device.device_type != dl_cpu)
        throw api::stage_error(api::stage::input, cat("from_dlpack: the tensor is on device type ", t.device.device_type,
                                                      device ? "; expected CUDA memory" : "; kiln.from_dlpack takes host (CPU) memory"));
    dtype type = from_dl(t.dtype);
    std::vector<std::size_t> lens(static_cast<std::size_t>(t.ndim)), strides;
    for (std::int32_t i = 0; i < t.ndim; ++i) lens[i] = static_cast<std::size_t>(t.shape[i]);
    if (t.strides) {
        for (std::int32_t i = 0; i < t.ndim; ++i) {
            if (t.strides[i] < 0) throw api::stage_error(api::stage::input, "from_dlpack: negative strides are not supported");
            strides.push_back(lens[i] == 1 ? 0 : static_cast<std::size_t>(t.strides[i]));
        }
        auto standard = shape::standard_strides(lens);
        for (std::size_t i = 0; i < lens.size(); ++i)
            if (lens[i] == 1) strides[i] = standard[i];
    } else {
        strides = shape::standard_strides(lens);
    }
    auto* data = static_cast<std::byte*>(t.data) + t.byte_offset;
    return argument(kiln::shape(type, lens, strides), data, owner);
}

}  // namespace

argument from_dlpack(py::handle obj) {
    py::object cap = py::isinstance<py::capsule>(obj) ? py::reinterpret_borrow<py::object>(obj) : obj.attr("__dlpack__")();
    return take_capsule(cap, false);
}

std::optional<caller_buffer> cuda_dlpack(py::handle obj) {
    if (!py::hasattr(obj, "__dlpack_device__") || !py::hasattr(obj, "__dlpack__")) return std::nullopt;
    auto dev = obj.attr("__dlpack_device__")().cast<std::pair<int, int>>();
    if (dev.first != dl_cuda && dev.first != dl_cuda_managed) return std::nullopt;
    // stream=1: the producer makes the data ready on the legacy default stream, which kiln waits for.
    return caller_buffer{take_capsule(obj.attr("__dlpack__")(py::arg("stream") = 1), true), true, nullptr};
}

}  // namespace kiln::py_api
