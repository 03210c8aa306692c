#include "api/api_program.hpp"

#include "core/container.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "tools/saved_program.hpp"

namespace kiln::api {

namespace {

std::unique_ptr<api_program> wrap(program p, std::vector<std::string> outs) {
    auto r = std::make_unique<api_program>();
    r->input_names = p.main().parameter_names();
    std::size_t n = p.main().output_shapes().size();
    if (outs.size() != n) {
        outs.clear();
        for (std::size_t i = 0; i < n; ++i) outs.push_back("#output_" + std::to_string(i));
    }
    r->output_names = std::move(outs);
    r->prog = std::move(p);
    return r;
}

onnx_options quiet(onnx_options o) {
    if (!o.warn) o.warn = [](const std::string&) {};
    return o;
}

}  // namespace

std::vector<shape> api_program::input_shapes() const {
    std::vector<shape> s;
    for (auto p : current().main().parameters()) s.push_back(p->get_shape());
    return s;
}

std::vector<shape> api_program::output_shapes() const { return current().main().output_shapes(); }

std::unique_ptr<api_program> parse_onnx_file(const std::string& path, onnx_options opts) {
    return at_stage(stage::parse, [&] {
        std::vector<std::string> outs;
        program p = kiln::parse_onnx_file(path, quiet(std::move(opts)), &outs);
        return wrap(std::move(p), std::move(outs));
    });
}

std::unique_ptr<api_program> parse_onnx_buffer(const void* data, std::size_t size, onnx_options opts) {
    return at_stage(stage::parse, [&] {
        std::vector<std::string> outs;
        program p = kiln::parse_onnx_buffer(data, size, quiet(std::move(opts)), ".", &outs);
        return wrap(std::move(p), std::move(outs));
    });
}

std::unique_ptr<api_program> from_program(program p, std::vector<std::string> output_names) {
    return wrap(std::move(p), std::move(output_names));
}

void save(const api_program& p, const std::string& path) {
    if (!p.compiled())
        throw stage_error(stage::compile, cat("save: the program is not compiled; compile it for a target before saving '",
                                              path, "'"));
    saved_program_info info;
    info.target = p.target_name();
    info.device_arch = p.device_arch;
    info.options = p.options;
    info.output_names = p.output_names;
    at_stage(stage::io, [&] {
        save_program(p.current(), info, path, p.exe->saved());
        return 0;
    });
}

std::unique_ptr<api_program> load(const std::string& path) {
    loaded_program l = at_stage(stage::io, [&] { return load_program(path); });
    auto t = at_stage(stage::target, [&] { return make_target(l.info.target); });
    auto r = wrap(std::move(l.prog), l.info.output_names);
    r->exe = at_stage(stage::compile, [&] { return t->load_saved(std::move(r->prog), l.info.options, std::move(l.parts)); });
    r->target = t->name();
    r->device_arch = l.info.device_arch;
    r->options = l.info.options;
    return r;
}

void compile(api_program& p, const std::string& target_name, const compile_options& opts) {
    auto t = at_stage(stage::target, [&] { return make_target(target_name.empty() ? default_target() : target_name); });
    if (p.compiled())
        throw stage_error(stage::compile, cat("the program is already compiled for '", p.target_name(),
                                              "'; parse or load it again to compile for '", target_name, "'"));
    run_control_scope scope(p.control);
    p.exe = at_stage(stage::compile, [&] { return t->compile(std::move(p.prog), opts, pass_options{.dump_dir = ""}); });
    p.target = t->name();
    p.device_arch = t->device_arch();
    p.options = opts;
}

void check_inputs(const api_program& p, const param_map& inputs) {
    std::string missing;
    for (const auto& n : p.input_names)
        if (!inputs.count(n)) missing += (missing.empty() ? "'" : ", '") + n + "'";
    if (!missing.empty()) throw stage_error(stage::input, cat("missing input ", missing));
    for (const auto& [name, a] : inputs) {
        auto param = p.current().main().get_parameter(name);
        if (param == p.current().main().end()) {
            std::string known;
            for (const auto& n : p.input_names) known += (known.empty() ? "" : ", ") + n;
            throw stage_error(stage::input, cat("unknown input '", name, "' (the inputs are: ", known, ")"));
        }
        const shape& want = param->get_shape();
        const shape& got = a.get_shape();
        if (want.is_sequence() || want.is_optional()) {
            // Init-captures: clang before 16 cannot capture structured bindings.
            at_stage(stage::input,
                     [&want, &value = a, &label = name] { check_value(want, value, cat("input '", label, "'")); });
            continue;
        }
        if (got.type() != want.type())
            throw stage_error(stage::input, cat("input '", name, "' has type ", dtype_name(got.type()), ", expected ",
                                                dtype_name(want.type())));
        bool fits = want.dynamic() ? got.ndim() == want.ndim() : got.lens() == want.lens();
        for (std::size_t i = 0; fits && want.dynamic() && i < got.ndim(); ++i)
            fits = got.lens()[i] >= want.dyn_dims()[i].min && got.lens()[i] <= want.dyn_dims()[i].max;
        if (!fits)
            throw stage_error(stage::input, cat("input '", name, "' has lens ", lens_to_string(got.lens()),
                                                ", expected ", to_string(want)));
    }
}

std::vector<argument> run(api_program& p, const param_map& inputs) {
    if (!p.compiled()) throw stage_error(stage::run, "the program is not compiled: compile it for a target first");
    check_inputs(p, inputs);
    std::lock_guard lock(p.running);
    run_control_scope scope(p.control);
    auto outs = at_stage(stage::run, [&] { return p.exe->run(inputs); });
    // The executable owns its outputs until its next run; the caller gets its own.
    for (auto& o : outs) o = o.copy();
    return outs;
}

void run_into(api_program& p, const caller_inputs& inputs, std::span<const caller_buffer> outputs) {
    if (!p.compiled()) throw stage_error(stage::run, "the program is not compiled: compile it for a target first");
    param_map args;
    for (const auto& [name, b] : inputs) args.emplace(name, b.arg);
    check_inputs(p, args);
    auto shapes = p.output_shapes();
    if (outputs.size() != shapes.size())
        throw stage_error(stage::input, cat(outputs.size(), " output buffers given, the program has ", shapes.size(),
                                            " outputs"));
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const shape& got = outputs[i].arg.get_shape();
        if (shapes[i].dynamic()) continue;   // the executable checks it against what it computed
        if (got.type() != shapes[i].type() || got.lens() != shapes[i].lens())
            throw stage_error(stage::input, cat("output '", p.output_names[i], "' computes ", to_string(shapes[i]),
                                                " but its buffer is ", to_string(got)));
    }
    std::lock_guard lock(p.running);
    run_control_scope scope(p.control);
    at_stage(stage::run, [&] {
        p.exe->run_into(inputs, outputs);
        return 0;
    });
}

param_map complete_inputs(const api_program& p, param_map inputs, std::uint64_t seed) {
    auto params = p.current().main().parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
        const std::string& name = p.input_names[i];
        if (inputs.count(name)) continue;
        const shape& s = params[i]->get_shape();
        if (s.dynamic())
            throw stage_error(stage::input, cat("input '", name, "' has dynamic dims ", to_string(s),
                                                "; give it a value to size it"));
        inputs[name] = random_argument(s, seed, i);
    }
    return inputs;
}

}  // namespace kiln::api
