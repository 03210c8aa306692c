// The C API (include/kiln/kiln.h) over kiln::api: errors, options and programs. Shapes and
// arguments are in c_api_tensors.cpp.
#include "api/c_api_detail.hpp"

using namespace kiln::c_api_detail;

extern "C" {

const char* kiln_last_error_message(void) { return last_error.c_str(); }

const char* kiln_status_string(kiln_status s) {
    switch (s) {
        case KILN_STATUS_SUCCESS: return "success";
        case KILN_STATUS_BAD_PARAM: return "bad parameter";
        case KILN_STATUS_PARSE_ERROR: return "parse error";
        case KILN_STATUS_UNKNOWN_TARGET: return "unknown target";
        case KILN_STATUS_COMPILE_ERROR: return "compile error";
        case KILN_STATUS_INPUT_ERROR: return "input error";
        case KILN_STATUS_RUN_ERROR: return "run error";
        case KILN_STATUS_IO_ERROR: return "i/o error";
        case KILN_STATUS_INTERNAL_ERROR: return "internal error";
        case KILN_STATUS_CANCELLED: return "cancelled";
    }
    return "unknown status";
}
const char* kiln_built_targets(void) {
    static const std::string names = [] {
        std::string s;
        for (const auto& n : kiln::built_targets()) s += (s.empty() ? "" : ",") + n;
        return s;
    }();
    return names.c_str();
}

// ONNX options

kiln_status kiln_onnx_options_create(kiln_onnx_options_t* out) {
    return guard([&] {
        need_out(out);
        *out = new kiln_onnx_options{};
    });
}

kiln_status kiln_onnx_options_destroy(kiln_onnx_options_t o) {
    delete o;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_onnx_options_set_input_dims(kiln_onnx_options_t o, const char* input, const size_t* lens,
                                             size_t ndim) {
    return guard([&] { need(o, "options").o.input_dims[need_str(input, "input")] = to_vector(lens, ndim, "lens"); });
}

kiln_status kiln_onnx_options_set_dim_param(kiln_onnx_options_t o, const char* symbol, size_t min, size_t max) {
    return guard([&] {
        if (min > max) throw bad_param(kiln::cat("dim param '", symbol ? symbol : "", "': min ", min, " > max ", max));
        need(o, "options").o.dim_params[need_str(symbol, "symbol")] = kiln::dynamic_dim{min, max, {}, {}};
    });
}

kiln_status kiln_onnx_options_set_default_dim(kiln_onnx_options_t o, size_t n) {
    return guard([&] { need(o, "options").o.default_dim = n; });
}

kiln_status kiln_onnx_options_set_skip_unknown_operators(kiln_onnx_options_t o, int skip) {
    return guard([&] { need(o, "options").o.skip_unknown_operators = skip != 0; });
}

// Compile options

kiln_status kiln_compile_options_create(kiln_compile_options_t* out) {
    return guard([&] {
        need_out(out);
        *out = new kiln_compile_options{};
    });
}

kiln_status kiln_compile_options_destroy(kiln_compile_options_t o) {
    delete o;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_compile_options_set_optimize(kiln_compile_options_t o, int on) {
    return guard([&] { need(o, "options").o.optimize = on != 0; });
}

kiln_status kiln_compile_options_set_fast_math(kiln_compile_options_t o, int on) {
    return guard([&] { need(o, "options").o.fast_math = on != 0; });
}

kiln_status kiln_compile_options_set_exhaustive_tune(kiln_compile_options_t o, int on) {
    return guard([&] { need(o, "options").o.exhaustive_tune = on != 0; });
}

kiln_status kiln_compile_options_set_offload_copy(kiln_compile_options_t o, int on) {
    return guard([&] { need(o, "options").o.offload_copy = on != 0; });
}

kiln_status kiln_compile_options_set_precision(kiln_compile_options_t o, kiln_precision p) {
    return guard([&] {
        if (p != KILN_PRECISION_FP32 && p != KILN_PRECISION_FP16 && p != KILN_PRECISION_BF16)
            throw bad_param(kiln::cat("unknown kiln_precision ", static_cast<int>(p)));
        need(o, "options").o.precision = static_cast<kiln::compute_precision>(p);
    });
}
kiln_status kiln_compile_options_set_kernel_cache(kiln_compile_options_t o, int on) {
    return guard([&] { need(o, "options").o.kernel_cache = on != 0; });
}

kiln_status kiln_compile_options_set_allow_tf32(kiln_compile_options_t o, int on) {
    return guard([&] { need(o, "options").o.allow_tf32 = on != 0; });
}

kiln_status kiln_compile_options_set_device(kiln_compile_options_t o, int device) {
    return guard([&] {
        if (device < 0) throw bad_param(kiln::cat("device ", device, " is negative"));
        need(o, "options").o.device = device;
    });
}

// Programs

kiln_status kiln_parse_onnx_file(kiln_program_t* out, const char* path, kiln_onnx_options_t options) {
    return guard([&] {
        need_out(out);
        *out = nullptr;
        auto p = kiln::api::parse_onnx_file(need_str(path, "path"), options ? options->o : kiln::onnx_options{});
        *out = new kiln_program{std::move(p), {}, {}};
    });
}

kiln_status kiln_parse_onnx_buffer(kiln_program_t* out, const void* data, size_t size, kiln_onnx_options_t options) {
    return guard([&] {
        need_out(out);
        *out = nullptr;
        if (data == nullptr) throw bad_param("data is NULL");
        auto p = kiln::api::parse_onnx_buffer(data, size, options ? options->o : kiln::onnx_options{});
        *out = new kiln_program{std::move(p), {}, {}};
    });
}

kiln_status kiln_program_destroy(kiln_program_t p) {
    delete p;
    return KILN_STATUS_SUCCESS;
}

kiln_status kiln_program_compile(kiln_program_t p, const char* target, kiln_compile_options_t options) {
    return guard([&] {
        kiln::api::compile(*need(p, "program").p, target ? target : "",
                           options ? options->o : kiln::compile_options{});
    });
}

kiln_status kiln_program_target(kiln_program_t p, const char** out) {
    return guard([&] {
        need_out(out);
        need(p, "program").target = p->p->target_name();
        *out = p->target.c_str();
    });
}

kiln_status kiln_program_input_count(kiln_program_t p, size_t* out) {
    return guard([&] {
        need_out(out);
        *out = need(p, "program").p->input_names.size();
    });
}

kiln_status kiln_program_input_name(kiln_program_t p, size_t i, const char** out) {
    return guard([&] {
        need_out(out);
        const auto& names = need(p, "program").p->input_names;
        *out = names[checked_index(i, names.size(), "input")].c_str();
    });
}

kiln_status kiln_program_input_shape(kiln_program_t p, size_t i, kiln_shape_t* out) {
    return guard([&] {
        need_out(out);
        auto shapes = need(p, "program").p->input_shapes();
        *out = new_shape(shapes[checked_index(i, shapes.size(), "input")]);
    });
}

kiln_status kiln_program_output_count(kiln_program_t p, size_t* out) {
    return guard([&] {
        need_out(out);
        *out = need(p, "program").p->output_names.size();
    });
}

kiln_status kiln_program_output_name(kiln_program_t p, size_t i, const char** out) {
    return guard([&] {
        need_out(out);
        const auto& names = need(p, "program").p->output_names;
        *out = names[checked_index(i, names.size(), "output")].c_str();
    });
}

kiln_status kiln_program_output_shape(kiln_program_t p, size_t i, kiln_shape_t* out) {
    return guard([&] {
        need_out(out);
        auto shapes = need(p, "program").p->output_shapes();
        *out = new_shape(shapes[checked_index(i, shapes.size(), "output")]);
    });
}

kiln_status kiln_program_run(kiln_program_t p, const char* const* input_names, const kiln_argument_t* inputs,
                             size_t input_count, const kiln_argument_t* outputs, size_t output_count) {
    return guard([&] {
        auto& prog = *need(p, "program").p;
        if (input_count > 0 && (input_names == nullptr || inputs == nullptr))
            throw bad_param("input_names or inputs is NULL");
        if (output_count != prog.output_names.size())
            throw kiln::api::stage_error(stage::input, kiln::cat(output_count, " output buffers given, the program has ",
                                                                 prog.output_names.size(), " outputs"));
        if (output_count > 0 && outputs == nullptr) throw bad_param("outputs is NULL");
        kiln::caller_inputs in;
        for (size_t k = 0; k < input_count; ++k) {
            std::string name = need_str(input_names[k], "an input name");
            const kiln_argument& a = need(inputs[k], "an input argument");
            if (!in.emplace(name, kiln::caller_buffer{a.a, a.device}).second)
                throw kiln::api::stage_error(stage::input, kiln::cat("input '", name, "' is given twice"));
        }
        std::vector<kiln::caller_buffer> out;
        for (size_t k = 0; k < output_count; ++k) {
            const kiln_argument& a = need(outputs[k], "an output argument");
            out.push_back({a.a, a.device});
        }
        kiln::api::run_into(prog, in, out);
    });
}

kiln_status kiln_program_cancel(kiln_program_t p) {
    return guard([&] { need(p, "program").p->control.cancel(); });
}

kiln_status kiln_program_save(kiln_program_t p, const char* path) {
    return guard([&] { kiln::api::save(*need(p, "program").p, need_str(path, "path")); });
}

kiln_status kiln_load(kiln_program_t* out, const char* path) {
    return guard([&] {
        need_out(out);
        *out = nullptr;
        auto p = kiln::api::load(need_str(path, "path"));
        *out = new kiln_program{std::move(p), {}, {}};
    });
}

kiln_status kiln_program_string(kiln_program_t p, const char** out) {
    return guard([&] {
        need_out(out);
        need(p, "program").text = kiln::to_string(p->p->current());
        *out = p->text.c_str();
    });
}

}  // extern "C"
