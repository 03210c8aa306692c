#include "core/target.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/error.hpp"

namespace kiln {

namespace {
std::map<std::string, std::unique_ptr<target> (*)(), std::less<>>& targets() {
    static std::map<std::string, std::unique_ptr<target> (*)(), std::less<>> t;
    return t;
}
}  // namespace

void register_target(std::string name, std::unique_ptr<target> (*factory)()) { targets()[std::move(name)] = factory; }

std::vector<std::string> built_targets() {
    std::vector<std::string> names;
    for (const auto& [n, f] : targets()) names.push_back(n);
    return names;
}

std::unique_ptr<target> make_target(std::string_view name) {
    auto it = targets().find(name);
    if (it == targets().end()) {
        std::string built;
        for (const auto& n : built_targets()) built += (built.empty() ? "" : ", ") + n;
        fail("target '", name, "' is not built into this kiln (built targets: ", built, ")");
    }
    return it->second();
}

std::string default_target() {
    auto built = built_targets();
    auto has = [&](const char* n) { return std::find(built.begin(), built.end(), n) != built.end(); };
    if (has("gpu")) {
        try {
            make_target("gpu");   // its constructor finds the device, or throws saying why there is none
            return "gpu";
        } catch (const std::exception&) {
        }
    }
    return has("cpu") ? "cpu" : "ref";
}

void lower(program& p, const target& t, const compile_options& opts, const pass_options& popts) {
    run_passes(p, t.passes(opts), popts);
}

std::unique_ptr<executable> target::compile(program p, const compile_options& opts, const pass_options& popts) const {
    lower(p, *this, opts, popts);
    return load(std::move(p), opts);
}

std::vector<std::string> ignored_device_options(const compile_options& opts, std::string_view target) {
    std::vector<std::string> r;
    if (opts.allow_tf32) r.push_back(cat("--allow-tf32 (", target, " computes float32 in float32)"));
    if (opts.device != 0) r.push_back(cat("--device ", opts.device, " (", target, " runs on the host)"));
    if (!opts.kernel_cache) r.push_back("--no-cache (only the gpu target's kernel cache can be bypassed so far)");
    return r;
}

std::unique_ptr<executable> target::load_saved(program lowered, const compile_options& opts, saved_parts parts) const {
    if (!parts.kernels.empty())
        fail("the saved program carries ", parts.kernels.size(), " compiled kernels, which the ", name(), " target does not take");
    return load(std::move(lowered), opts);
}

void copy_result(const argument& from, const argument& to, const std::string& label) {
    const shape &f = from.get_shape(), &t = to.get_shape();
    if (f.type() != t.type() || f.lens() != t.lens())
        fail("output '", label, "' computes ", to_string(f), " but its buffer is ", to_string(t));
    if (f.type() == dtype::string) fail("output '", label, "' holds strings, which cannot be copied into a caller's buffer");
    if (is_packed(f.type())) {
        if (!t.standard()) fail("output '", label, "': a packed int4 buffer must be standard");
        auto c = from.copy();
        std::memcpy(to.data(), c.data(), t.bytes());
        return;
    }
    std::size_t size = f.type_bits() / 8;
    if (f.standard() && t.standard()) {
        std::memcpy(to.data(), from.data(), f.elements() * size);
        return;
    }
    for (std::size_t i = 0; i < f.elements(); ++i)
        std::memcpy(to.data() + t.index(i) * size, from.data() + f.index(i) * size, size);
}

void executable::run_into(const caller_inputs& inputs, std::span<const caller_buffer> outputs) {
    const module& m = get_program().main();
    for (const auto& [name, b] : inputs)
        if (b.on_device)
            fail("input '", name, "' is device memory, but this executable runs on host memory (device buffers "
                 "need the gpu target)");
    std::size_t count = m.output_shapes().size();
    if (outputs.size() != count) fail(outputs.size(), " output buffers given, the program has ", count, " outputs");
    for (std::size_t i = 0; i < outputs.size(); ++i)
        if (outputs[i].on_device)
            fail("output ", i, " is device memory, but this executable runs on host memory (device buffers need the "
                 "gpu target)");
    param_map host;
    for (const auto& [name, b] : inputs) host.emplace(name, b.arg);
    auto results = run(host);
    for (std::size_t i = 0; i < outputs.size(); ++i) copy_result(results[i], outputs[i].arg, cat("#", i));
}

}  // namespace kiln
