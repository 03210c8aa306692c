// The C API's shapes and arguments (include/kiln/kiln.h).
#include "api/c_api_detail.hpp"

using namespace kiln::c_api_detail;

extern "C" {

const char* kiln_dtype_name(kiln_dtype t) {
    if (static_cast<int>(t) < 0 || static_cast<int>(t) >= static_cast<int>(kiln::dtype::string)) return nullptr;
    return kiln::dtype_name(static_cast<kiln::dtype>(t)).data();
}

// Shapes

kiln_status kiln_shape_create(kiln_shape_t* out, kiln_dtype t, const size_t* lens, size_t ndim) {
    return kiln_shape_create_strided(out, t, lens, nullptr, ndim);
}

kiln_status kiln_shape_create_strided(kiln_shape_t* out, kiln_dtype t, const size_t* lens, const size_t* strides,
                                      size_t ndim) {
    return guard([&] {
        need_out(out);
        auto l = to_vector(lens, ndim, "lens");
        kiln::dtype d = to_dtype(t);
        *out = new_shape(strides ? kiln::shape(d, l, to_vector(strides, ndim, "strides")) : kiln::shape(d, l));
    });
}

kiln_status kiln_shape_destroy(kiln_shape_t s) {
    delete s;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_shape_type(kiln_shape_t s, kiln_dtype* out) {
    return guard([&] {
        need_out(out);
        if (need(s, "shape").s.type() == kiln::dtype::string) throw bad_param("a string tensor has no kiln_dtype");
        *out = static_cast<kiln_dtype>(need(s, "shape").s.type());
    });
}

kiln_status kiln_shape_ndim(kiln_shape_t s, size_t* out) {
    return guard([&] {
        need_out(out);
        *out = need(s, "shape").s.ndim();
    });
}

kiln_status kiln_shape_lens(kiln_shape_t s, const size_t** out) {
    return guard([&] {
        need_out(out);
        const auto& l = need(s, "shape").s.lens();
        if (s->s.dynamic()) throw bad_param("the shape is dynamic: use kiln_shape_dim_range");
        *out = l.empty() ? nullptr : l.data();
    });
}

kiln_status kiln_shape_strides(kiln_shape_t s, const size_t** out) {
    return guard([&] {
        need_out(out);
        const auto& st = need(s, "shape").s.strides();
        if (s->s.dynamic()) throw bad_param("the shape is dynamic: it has no strides");
        *out = st.empty() ? nullptr : st.data();
    });
}

kiln_status kiln_shape_is_dynamic(kiln_shape_t s, int* out) {
    return guard([&] {
        need_out(out);
        *out = need(s, "shape").s.dynamic() ? 1 : 0;
    });
}

kiln_status kiln_shape_dim_range(kiln_shape_t s, size_t i, size_t* min, size_t* max, const char** symbol) {
    return guard([&] {
        auto dims = need(s, "shape").s.dims();
        if (i >= dims.size()) throw bad_param(kiln::cat("dim ", i, " is out of range (ndim ", dims.size(), ")"));
        if (min) *min = dims[i].min;
        if (max) *max = dims[i].max;
        s->symbol = dims[i].symbol;
        if (symbol) *symbol = s->symbol.c_str();
    });
}

kiln_status kiln_shape_elements(kiln_shape_t s, size_t* out) {
    return guard([&] {
        need_out(out);
        if (need(s, "shape").s.dynamic()) throw bad_param("the shape is dynamic: its element count is not known");
        *out = s->s.elements();
    });
}

kiln_status kiln_shape_bytes(kiln_shape_t s, size_t* out) {
    return guard([&] {
        need_out(out);
        if (need(s, "shape").s.dynamic()) throw bad_param("the shape is dynamic: its size is not known");
        *out = s->s.bytes();
    });
}

kiln_status kiln_shape_string(kiln_shape_t s, const char** out) {
    return guard([&] {
        need_out(out);
        need(s, "shape").text = to_string(s->s);
        *out = s->text.c_str();
    });
}

// Arguments

kiln_status kiln_argument_create(kiln_argument_t* out, kiln_shape_t s, void* data) {
    return guard([&] {
        need_out(out);
        const kiln::shape& sh = need(s, "shape").s;
        if (sh.dynamic()) throw bad_param(kiln::cat("an argument needs a static shape, got ", to_string(sh)));
        *out = new kiln_argument{data ? kiln::argument(sh, static_cast<std::byte*>(data), nullptr) : kiln::argument(sh)};
    });
}

kiln_status kiln_argument_create_device(kiln_argument_t* out, kiln_shape_t s, void* device_data) {
    return guard([&] {
        need_out(out);
        const kiln::shape& sh = need(s, "shape").s;
        if (device_data == nullptr) throw bad_param("device_data is NULL");
        if (sh.dynamic()) throw bad_param(kiln::cat("an argument needs a static shape, got ", to_string(sh)));
        if (!sh.standard()) throw bad_param(kiln::cat("a device argument must be row-major packed, got ", to_string(sh)));
        *out = new kiln_argument{kiln::argument(sh, static_cast<std::byte*>(device_data), nullptr), true};
    });
}

kiln_status kiln_argument_is_device(kiln_argument_t a, int* out) {
    return guard([&] {
        need_out(out);
        *out = need(a, "argument").device ? 1 : 0;
    });
}

kiln_status kiln_argument_destroy(kiln_argument_t a) {
    delete a;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_argument_shape(kiln_argument_t a, kiln_shape_t* out) {
    return guard([&] {
        need_out(out);
        *out = new_shape(need(a, "argument").a.get_shape());
    });
}

kiln_status kiln_argument_data(kiln_argument_t a, void** out) {
    return guard([&] {
        need_out(out);
        *out = need(a, "argument").a.data();
    });
}

}  // extern "C"
