// The kiln._kiln extension: Program, Shape, Argument, CompileOptions, parse_onnx, verify, ...
// The kiln package (python/kiln/__init__.py) re-exports it; docstrings here are what help() shows.
#include <pybind11/stl.h>

#include <sstream>

#include "api/api_program.hpp"
#include "convert.hpp"
#include "core/error.hpp"
#include "core/operation.hpp"
#include "core/text_parser.hpp"

namespace kiln::py_api {

namespace {

using api::api_program;
using api::stage;
using api::stage_error;

using program_ptr = std::shared_ptr<api_program>;

struct py_compile_options {
    compile_options o;
};

// The exception classes; set when the module initialises.
struct error_classes {
    py::object base, parse, target, compile, input, run, io, cancelled;
} errors;

py::object error_class(stage s) {
    switch (s) {
        case stage::parse: return errors.parse;
        case stage::target: return errors.target;
        case stage::compile: return errors.compile;
        case stage::input: return errors.input;
        case stage::run: return errors.run;
        case stage::io: return errors.io;
    }
    return errors.base;
}

py::object make_error(py::module_& m, const char* name, std::vector<py::object> bases, const char* doc) {
    py::tuple b(bases.size());
    for (std::size_t i = 0; i < bases.size(); ++i) b[i] = bases[i];
    std::string qualified = std::string("kiln.") + name;
    auto cls = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(qualified.c_str(), doc, b.ptr(), nullptr));
    if (!cls) throw py::error_already_set();
    m.attr(name) = cls;
    return cls;
}

void register_errors(py::module_& m) {
    auto builtin = [](const char* n) { return py::module_::import("builtins").attr(n); };
    errors.base = make_error(m, "Error", {builtin("RuntimeError")}, "Base class of every error kiln raises.");
    errors.parse = make_error(m, "ParseError", {errors.base}, "A model cannot be read or is not supported.");
    errors.target = make_error(m, "TargetError", {errors.base, builtin("ValueError")},
                               "The target is not built into this kiln.");
    errors.compile = make_error(m, "CompileError", {errors.base}, "Compiling the program failed.");
    errors.input = make_error(m, "InputError", {errors.base, builtin("ValueError")},
                              "An input is missing, unknown, or of the wrong type or shape.");
    errors.run = make_error(m, "RunError", {errors.base}, "Running the program failed (the message names the node).");
    errors.io = make_error(m, "FileError", {errors.base, builtin("OSError")}, "A file cannot be read or written.");
    errors.cancelled = make_error(m, "CancelledError", {errors.base},
                                  "Program.cancel() stopped the call (the message names where).");
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const cancelled& e) {
            PyErr_SetString(errors.cancelled.ptr(), e.what());
        } catch (const stage_error& e) {
            PyErr_SetString(error_class(e.where).ptr(), e.what());
        } catch (const error& e) {
            PyErr_SetString(errors.base.ptr(), e.what());
        }
    });
}

param_map to_inputs(const api_program& p, const py::dict& inputs) {
    param_map m;
    auto shapes = p.input_shapes();
    for (auto [k, v] : inputs) {
        std::string name = py::str(k);
        auto it = std::find(p.input_names.begin(), p.input_names.end(), name);
        std::optional<dtype> want;
        if (it != p.input_names.end()) {
            const shape& s = shapes[static_cast<std::size_t>(it - p.input_names.begin())];
            if (s.is_sequence() || s.is_optional()) {
                m[name] = to_container(v, s, "input '" + name + "'");
                continue;
            }
            want = s.type();
        }
        m[name] = to_argument(v, want, "input '" + name + "'");
    }
    return m;
}

// Host inputs and no output buffers: the outputs come back as numpy arrays the caller owns.
// Device inputs (torch.cuda tensors, ...) or output buffers: the executable reads and writes the
// caller's buffers (on the device without a host round trip on the gpu target).
py::dict run(const program_ptr& p, const py::dict& inputs, const std::optional<py::object>& outputs) {
    auto shapes = p->input_shapes();
    caller_inputs in;
    bool any_device = false;
    for (auto [k, v] : inputs) {
        std::string name = py::str(k);
        auto it = std::find(p->input_names.begin(), p->input_names.end(), name);
        std::optional<dtype> want;
        if (it != p->input_names.end()) {
            const shape& s = shapes[static_cast<std::size_t>(it - p->input_names.begin())];
            if (s.is_sequence() || s.is_optional()) {   // a list of arrays, or None or a value
                in[name] = {to_container(v, s, "input '" + name + "'")};
                continue;
            }
            want = s.type();
        }
        in[name] = to_buffer(v, want, "input '" + name + "'");
        any_device = any_device || in[name].on_device;
    }
    py::dict d;
    if (!outputs && !any_device) {
        param_map host;
        for (auto& [name, b] : in) host.emplace(name, b.arg);
        std::vector<argument> outs;
        {
            py::gil_scoped_release unlocked;
            outs = api::run(*p, host);   // copies the caller owns
        }
        for (std::size_t i = 0; i < outs.size(); ++i) d[py::str(p->output_names[i])] = to_python(outs[i]);
        return d;
    }
    std::vector<caller_buffer> out;
    std::vector<py::object> objects;
    if (outputs) {
        bool by_name = py::isinstance<py::dict>(*outputs);
        py::dict named = by_name ? py::dict(*outputs) : py::dict();
        py::list listed = by_name ? py::list() : py::list(*outputs);
        for (std::size_t i = 0; i < p->output_names.size(); ++i) {
            const std::string& name = p->output_names[i];
            if (by_name ? !named.contains(name) : i >= listed.size())
                throw stage_error(stage::input, cat("outputs: no buffer for output '", name, "'"));
            py::object o = by_name ? py::object(named[py::str(name)]) : py::object(listed[i]);
            if (py::isinstance<py::array>(o) && !o.attr("flags").attr("writeable").cast<bool>())
                throw stage_error(stage::input, cat("output '", name, "': the numpy array is read-only"));
            out.push_back(to_buffer(o, std::nullopt, "output '" + name + "'"));
            // A host buffer kiln had to convert (another byte order, odd strides) would be a copy.
            if (!out.back().on_device &&
                (!py::isinstance<py::array>(o) || out.back().arg.data() != py::reinterpret_borrow<py::array>(o).data()))
                throw stage_error(stage::input, cat("output '", name, "': give a writable numpy array in native byte "
                                                    "order with whole-element strides, or a CUDA tensor"));
            objects.push_back(o);
        }
        if (!by_name && listed.size() != p->output_names.size())
            throw stage_error(stage::input, cat(listed.size(), " output buffers given, the program has ",
                                                p->output_names.size(), " outputs"));
    } else {
        for (const auto& s : p->output_shapes()) {
            if (s.dynamic())
                throw stage_error(stage::input, "device inputs of a program with dynamic outputs need output buffers");
            argument a(s);
            out.push_back({a});
            objects.push_back(to_numpy(a));
        }
    }
    {
        py::gil_scoped_release unlocked;
        api::run_into(*p, in, out);
    }
    for (std::size_t i = 0; i < objects.size(); ++i) d[py::str(p->output_names[i])] = objects[i];
    return d;
}

py::dict shapes_dict(const std::vector<std::string>& names, const std::vector<shape>& shapes) {
    py::dict d;
    for (std::size_t i = 0; i < names.size(); ++i) d[py::str(names[i])] = shapes[i];
    return d;
}

onnx_options make_onnx_options(const std::optional<std::map<std::string, std::vector<std::size_t>>>& input_dims,
                               const std::optional<py::dict>& dim_params, std::optional<std::size_t> default_dim,
                               bool skip_unknown) {
    onnx_options o;
    if (input_dims) o.input_dims = *input_dims;
    if (dim_params) {
        for (auto [k, v] : *dim_params) {
            std::string name = py::str(k);
            dynamic_dim d;
            if (py::isinstance<py::int_>(v)) {
                d.min = d.max = v.cast<std::size_t>();
            } else {
                auto range = v.cast<std::pair<std::size_t, std::size_t>>();
                if (range.first > range.second)
                    throw stage_error(stage::input, cat("dim_params['", name, "']: the range (", range.first, ", ",
                                                        range.second, ") has min > max"));
                d.min = range.first;
                d.max = range.second;
            }
            o.dim_params[name] = d;
        }
    }
    o.default_dim = default_dim;
    o.skip_unknown_operators = skip_unknown;
    return o;
}

program_ptr parse_onnx(py::object source, const std::optional<std::map<std::string, std::vector<std::size_t>>>& input_dims,
                       const std::optional<py::dict>& dim_params, std::optional<std::size_t> default_dim,
                       bool skip_unknown) {
    onnx_options o = make_onnx_options(input_dims, dim_params, default_dim, skip_unknown);
    if (py::isinstance<py::bytes>(source) || py::isinstance<py::bytearray>(source) ||
        py::isinstance<py::memoryview>(source)) {
        std::string bytes = py::bytes(source);
        py::gil_scoped_release unlocked;
        return api::parse_onnx_buffer(bytes.data(), bytes.size(), o);
    }
    std::string path = py::str(py::module_::import("os").attr("fspath")(source));
    py::gil_scoped_release unlocked;
    return api::parse_onnx_file(path, o);
}

compile_options options_of(const std::optional<py_compile_options>& o) { return o ? o->o : compile_options{}; }

std::string precision_name(compute_precision p) {
    return p == compute_precision::fp16 ? "fp16" : p == compute_precision::bf16 ? "bf16" : "fp32";
}

void bind_options(py::module_& m) {
    py::class_<py_compile_options>(m, "CompileOptions", "Options of Program.compile (stored with saved programs).")
        .def(py::init([](bool optimize, bool fast_math, bool exhaustive_tune, bool offload_copy, bool fp16, bool bf16,
                         bool kernel_cache, bool allow_tf32, int device) {
                 if (fp16 && bf16) throw stage_error(stage::input, "CompileOptions: give fp16 or bf16, not both");
                 if (device < 0) throw stage_error(stage::input, cat("CompileOptions: device ", device, " is negative"));
                 compile_options o{optimize,
                                   fp16   ? compute_precision::fp16
                                   : bf16 ? compute_precision::bf16
                                          : compute_precision::fp32,
                                   fast_math, exhaustive_tune, offload_copy};
                 o.kernel_cache = kernel_cache;
                 o.allow_tf32 = allow_tf32;
                 o.device = device;
                 return py_compile_options{o};
             }),
             py::kw_only(), py::arg("optimize") = true, py::arg("fast_math") = true, py::arg("exhaustive_tune") = false,
             py::arg("offload_copy") = false, py::arg("fp16") = false, py::arg("bf16") = false,
             py::arg("kernel_cache") = true, py::arg("allow_tf32") = false, py::arg("device") = 0,
             "optimize: run the generic passes; fp16/bf16: compute in that float type; offload_copy: inputs and "
             "outputs stay on the host (GPU target); gpu: kernel_cache=False compiles every kernel without the "
             "disk cache, allow_tf32 lets float32 GEMMs and convolutions use TF32, device is the CUDA device.")
        .def_property("optimize", [](const py_compile_options& s) { return s.o.optimize; },
                      [](py_compile_options& s, bool v) { s.o.optimize = v; })
        .def_property("fast_math", [](const py_compile_options& s) { return s.o.fast_math; },
                      [](py_compile_options& s, bool v) { s.o.fast_math = v; })
        .def_property("exhaustive_tune", [](const py_compile_options& s) { return s.o.exhaustive_tune; },
                      [](py_compile_options& s, bool v) { s.o.exhaustive_tune = v; })
        .def_property("offload_copy", [](const py_compile_options& s) { return s.o.offload_copy; },
                      [](py_compile_options& s, bool v) { s.o.offload_copy = v; })
        .def_property("kernel_cache", [](const py_compile_options& s) { return s.o.kernel_cache; },
                      [](py_compile_options& s, bool v) { s.o.kernel_cache = v; })
        .def_property("allow_tf32", [](const py_compile_options& s) { return s.o.allow_tf32; },
                      [](py_compile_options& s, bool v) { s.o.allow_tf32 = v; })
        .def_property("device", [](const py_compile_options& s) { return s.o.device; },
                      [](py_compile_options& s, int v) {
                          if (v < 0) throw stage_error(stage::input, cat("CompileOptions: device ", v, " is negative"));
                          s.o.device = v;
                      })
        .def_property_readonly("precision", [](const py_compile_options& s) { return precision_name(s.o.precision); },
                               "'fp32', 'fp16' or 'bf16'.")
        .def("__repr__", [](const py_compile_options& s) {
            return cat("CompileOptions(optimize=", s.o.optimize ? "True" : "False", ", fast_math=",
                       s.o.fast_math ? "True" : "False", ", exhaustive_tune=", s.o.exhaustive_tune ? "True" : "False",
                       ", offload_copy=", s.o.offload_copy ? "True" : "False", ", precision='",
                       precision_name(s.o.precision), "', kernel_cache=", s.o.kernel_cache ? "True" : "False",
                       ", allow_tf32=", s.o.allow_tf32 ? "True" : "False", ", device=", s.o.device, ")");
        });
}

}  // namespace

void bind_tensors(py::module_& m);   // tensors.cpp

void bind_program(py::module_& m) {
    py::class_<api_program, program_ptr>(m, "Program", "A model parsed into kiln's IR, compiled for a target to run.")
        .def("compile",
             [](api_program& p, const std::string& target, const std::optional<py_compile_options>& o) {
                 py::gil_scoped_release unlocked;
                 api::compile(p, target, options_of(o));
             },
             py::arg("target") = "", py::arg("options") = py::none(),
             "Compiles for 'ref', 'cpu' or 'gpu' (where built); '' picks the default target (gpu where a GPU is "
             "found, else cpu). A program compiles once.")
        .def("run", &run, py::arg("inputs"), py::arg("outputs") = py::none(),
             "Runs the compiled program on {name: array}; returns {output name: numpy array}. Inputs may be "
             "CUDA tensors (__cuda_array_interface__ or DLPack, e.g. torch.cuda tensors) on a program compiled "
             "for 'gpu': read on the device, zero copy through the host. outputs: buffers to write the results "
             "into, a list in output order or {output name: buffer} (writable numpy arrays or CUDA tensors of "
             "the output's type and shape); then run returns {output name: that buffer}.")
        .def("cancel", [](const api_program& p) { p.control.cancel(); },
             "Stops this program's compile, run, verify or perf_report in progress on another thread (or, "
             "when none is, the next one), which raises kiln.CancelledError naming the instruction it stopped "
             "before. Checked before each instruction and Loop iteration.")
        .def("input_names", [](const api_program& p) { return p.input_names; }, "The inputs' names, in order.")
        .def("output_names", [](const api_program& p) { return p.output_names; },
             "The outputs' names, in order (ONNX names; '#output_I' for programs from text IR).")
        .def("input_shapes", [](const api_program& p) { return shapes_dict(p.input_names, p.input_shapes()); },
             "{input name: Shape}; dynamic inputs have DynamicDim ranges.")
        .def("output_shapes", [](const api_program& p) { return shapes_dict(p.output_names, p.output_shapes()); },
             "{output name: Shape}")
        .def_property_readonly("target", [](const api_program& p) -> std::optional<std::string> {
            if (!p.compiled()) return std::nullopt;
            return p.target_name();
        }, "The target it is compiled for, or None.")
        .def("perf_report",
             [](const program_ptr& p, std::optional<py::dict> inputs, std::size_t iterations, std::uint64_t seed) {
                 param_map in = inputs ? to_inputs(*p, *inputs) : param_map{};
                 py::gil_scoped_release unlocked;
                 return api::time_runs(*p, in, iterations, seed);
             },
             py::arg("inputs") = py::none(), py::arg("iterations") = 10, py::arg("seed") = 0,
             "Times the compiled program: one warm-up run, `iterations` whole runs (min, median, p90, p99, ...), "
             "then `iterations` runs timing each instruction (PerfReport.instructions, .by_op). Inputs not given "
             "are seeded random values.")
        .def("save",
             [](const api_program& p, py::object path) {
                 std::string s = py::str(py::module_::import("os").attr("fspath")(path));
                 py::gil_scoped_release unlocked;
                 api::save(p, s);
             },
             py::arg("path"), "Saves the compiled program; kiln.load(path) reads it back without compiling.")
        .def("print", [](const api_program& p) { py::print(to_string(p.current()), py::arg("end") = ""); },
             "Prints the text IR.")
        .def("__str__", [](const api_program& p) { return to_string(p.current()); })
        .def("__repr__", [](const api_program& p) {
            return cat("<kiln.Program: ", p.input_names.size(), " inputs, ", p.output_names.size(), " outputs, ",
                       p.compiled() ? "compiled for " + p.target_name() : std::string("not compiled"), ">");
        });

    m.def("parse_onnx", &parse_onnx, py::arg("path_or_bytes"), py::kw_only(), py::arg("input_dims") = py::none(),
          py::arg("dim_params") = py::none(), py::arg("default_dim") = py::none(),
          py::arg("skip_unknown_operators") = false,
          "Parses an ONNX model from a path or bytes. input_dims: {input: [lens]}; dim_params: {symbol: n or "
          "(min, max)}; default_dim: the size of symbolic dims not set otherwise.");
    m.def("load",
          [](py::object path) {
              std::string s = py::str(py::module_::import("os").attr("fspath")(path));
              py::gil_scoped_release unlocked;
              return program_ptr(api::load(s));
          },
          py::arg("path"), "Loads a program saved by Program.save, compiled for the target it was saved for.");
    m.def("parse_text", [](const std::string& text) {
        try {
            return program_ptr(api::from_program(parse_text(text)));
        } catch (const error& e) {
            throw stage_error(stage::parse, e.what());
        }
    }, py::arg("text"), "Parses kiln's text IR (what str(program) prints).");
}

void bind_verify_report(py::module_& m) {
    using api::output_check;
    auto cmp = [](auto member) { return [member](const output_check& o) { return o.cmp.*member; }; };
    auto tol = [](auto member) { return [member](const output_check& o) { return o.cmp.tol.*member; }; };
    py::class_<output_check>(m, "OutputCheck",
                             "How one output compared in verify(): passed when the relative RMS error is at most "
                             "rms_tol and every element is within atol + rtol * |ref|.")
        .def_readonly("name", &output_check::name)
        .def_property_readonly("passed", cmp(&comparison::pass))
        .def_property_readonly("reason", &output_check::reason, "Why it failed, on one line ('' when it passed).")
        .def_property_readonly("mismatch", cmp(&comparison::mismatch),
                               "Set when the types or lens differ (then the numbers are not compared).")
        .def_property_readonly("rms", cmp(&comparison::rms_error),
                               "Relative RMS error: sqrt(sum (got - ref)^2 / sum ref^2) (absolute when ref is all 0).")
        .def_property_readonly("max_abs", cmp(&comparison::max_abs), "The largest |got - ref|.")
        .def_property_readonly("elements", cmp(&comparison::elements))
        .def_property_readonly("not_close", cmp(&comparison::not_close), "Elements failing the allclose test.")
        .def_property_readonly("worst_index",
                               [](const output_check& o) { return py::tuple(py::cast(o.cmp.worst_position)); },
                               "The index of the element with the largest |got - ref| (NaN/Inf against a number "
                               "counts as largest).")
        .def_property_readonly("worst_got", cmp(&comparison::worst_got))
        .def_property_readonly("worst_ref", cmp(&comparison::worst_ref))
        .def_property_readonly("nan_got", cmp(&comparison::nan_got))
        .def_property_readonly("nan_ref", cmp(&comparison::nan_ref))
        .def_property_readonly("inf_got", cmp(&comparison::inf_got))
        .def_property_readonly("inf_ref", cmp(&comparison::inf_ref))
        .def_property_readonly("rtol", tol(&tolerances::rtol), "The tolerances used (given, or by dtype).")
        .def_property_readonly("atol", tol(&tolerances::atol))
        .def_property_readonly("rms_tol", tol(&tolerances::rms_tol))
        .def("__str__", [](const output_check& o) {
            return o.name + ": " + (o.cmp.pass ? "PASS" : "FAIL") + "\n" + describe(o.cmp);
        });
    py::class_<api::verify_report>(m, "VerifyReport", "verify()'s result; true when every output passed.")
        .def_readonly("passed", &api::verify_report::passed)
        .def_readonly("seed", &api::verify_report::seed)
        .def_readonly("outputs", &api::verify_report::outputs)
        .def("__bool__", [](const api::verify_report& r) { return r.passed; })
        .def("__str__", &api::verify_report::to_string);
    m.def(
        "verify",
        [](const program_ptr& p, std::optional<py::dict> inputs, const std::string& target, std::optional<double> rtol,
           std::optional<double> atol, std::optional<double> rms_tol, const std::optional<py_compile_options>& o,
           std::uint64_t seed) {
            param_map in = inputs ? to_inputs(*p, *inputs) : param_map{};
            py::gil_scoped_release unlocked;
            return api::verify(*p, in, target, options_of(o), tolerance_overrides{rms_tol, atol, rtol}, seed);
        },
        py::arg("program").none(false), py::arg("inputs") = py::none(), py::arg("target") = "",
        py::arg("rtol") = py::none(), py::arg("atol") = py::none(), py::arg("rms_tol") = py::none(),
        py::arg("options") = py::none(), py::arg("seed") = 0,
        "Compiles a copy of the (uncompiled) program for the target ('': the default target) and compares its outputs with the program run "
        "on ref without optimisation, as `kiln verify` does: an output passes when its relative RMS error is at "
        "most rms_tol and every element is within atol + rtol * |ref|. Tolerances not given default by dtype and "
        "precision (1e-3 each for float32, 8e-2/4e-2/4e-2 for fp16/bf16, 0 for integers). Inputs not given are "
        "seeded random values.");
}

void bind_perf_report(py::module_& m) {
    using api::perf_result;
    auto t = [](auto member) { return [member](const perf_result& r) { return r.timings.*member; }; };
    py::class_<api::instruction_time>(m, "InstructionTime", "One instruction's time in Program.perf_report().")
        .def_readonly("line", &api::instruction_time::line, "The compiled instruction (or kernel) as printed.")
        .def_readonly("op", &api::instruction_time::op)
        .def_readonly("ms", &api::instruction_time::ms, "Interquartile mean over the timed runs, in ms.")
        .def_readonly("share", &api::instruction_time::share, "Its share of the instructions' total (0..1).")
        .def("__repr__",
             [](const api::instruction_time& i) { return cat("<InstructionTime ", i.line, ": ", i.ms, " ms>"); });
    py::class_<perf_result>(m, "PerfReport", "Program.perf_report()'s timings, in milliseconds.")
        .def_readonly("target", &perf_result::target)
        .def_property_readonly("iterations", t(&perf_report::iterations))
        .def_property_readonly("mean_ms", t(&perf_report::mean))
        .def_property_readonly("min_ms", t(&perf_report::min))
        .def_property_readonly("median_ms", t(&perf_report::median))
        .def_property_readonly("p90_ms", t(&perf_report::p90))
        .def_property_readonly("p99_ms", t(&perf_report::p99))
        .def_property_readonly("max_ms", t(&perf_report::max))
        .def_property_readonly("run_ms", t(&perf_report::run_ms), "Each whole run, sorted.")
        .def_property_readonly("total_ms", t(&perf_report::iq_mean),
                               "The mean of the middle half of the whole runs (steady on a busy machine).")
        .def_property_readonly("rate", [](const perf_result& r) { return r.timings.rate(); }, "Runs per second.")
        .def_property_readonly("instructions_ms", t(&perf_report::instructions_ms), "The instructions' total.")
        .def_property_readonly("overhead_ms", t(&perf_report::overhead_ms),
                               "total_ms minus instructions_ms (negative when timing each instruction costs more).")
        .def_readonly("instructions", &perf_result::instructions,
                      "Main's instructions in order, with times (empty when the target cannot time them).")
        .def_readonly("by_op", &perf_result::by_op, "(op, ms, share) summed by op, largest first.")
        .def_readonly("op_counts", &perf_result::op_counts, "(op, instructions of main), most first.")
        .def("__str__", &perf_result::to_string);
}

void init_module(py::module_& m) {
    m.doc() = "kiln: a deep-learning inference compiler (the compiled core; use the kiln package).";
    register_errors(m);
    bind_options(m);
    bind_tensors(m);
    bind_program(m);
    bind_verify_report(m);
    bind_perf_report(m);
    m.def("ops", &registered_ops, "Every op kiln's IR has, sorted.");
    m.def("onnx_ops", &onnx_supported_ops, "The supported ONNX ops as 'domain:OpType' ('' is ai.onnx), sorted.");
    m.def("built_targets", &built_targets, "The targets built into this kiln: ['ref', ...].");
}

}  // namespace kiln::py_api

PYBIND11_MODULE(_kiln, m) { kiln::py_api::init_module(m); }
