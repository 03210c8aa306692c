#include "driver/loader.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <regex>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/text_parser.hpp"
#include "driver/display.hpp"
#include "driver/onnx_info.hpp"
#include "driver/program_json.hpp"
#include "frontends/onnx/onnx.hpp"
#include "tools/program_tools.hpp"

namespace kiln::driver {

namespace {

// Whether `path` ends with the lowercase `ext`, in any case (".onnx", ".ONNX").
bool has_extension(const std::string& path, const std::string& ext) {
    return path.size() >= ext.size() && std::equal(ext.rbegin(), ext.rend(), path.rbegin(), [](char e, char p) {
               return std::tolower(static_cast<unsigned char>(p)) == e;
           });
}

// Text IR is text; an ONNX ModelProto starts with a field tag (0x08 for ir_version), and its
// lengths and weights are binary, so control bytes show up early.
bool looks_like_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail("cannot read '", path, "'");
    char buf[512];
    f.read(buf, sizeof buf);
    for (std::streamsize i = 0; i < f.gcount(); ++i) {
        auto c = static_cast<unsigned char>(buf[i]);
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
    }
    return true;
}

bool starts_with_brace(const std::string& path) {
    std::ifstream f(path);
    char c = 0;
    f >> c;
    return c == '{';
}

model_format detect_format(const parsed_args& args, const std::string& path) {
    const std::pair<const char*, model_format> flags[] = {{"--onnx", model_format::onnx},
                                                          {"--kiln-text", model_format::kiln_text},
                                                          {"--kiln-json", model_format::kiln_json},
                                                          {"--kiln", model_format::saved}};
    std::string given;
    model_format f = model_format::kiln_text;
    for (auto [flag, format] : flags) {
        if (!args.has(flag)) continue;
        if (!given.empty()) throw usage_error("give one format: " + given + " and " + flag + " are both given");
        given = flag;
        f = format;
    }
    if (!given.empty()) return f;
    if (is_saved_program(path) || has_extension(path, ".kiln")) return model_format::saved;
    if (has_extension(path, ".onnx")) return model_format::onnx;
    if (has_extension(path, ".kir")) return model_format::kiln_text;
    if (has_extension(path, ".json")) return model_format::kiln_json;
    if (!looks_like_text(path)) return model_format::onnx;
    return starts_with_brace(path) ? model_format::kiln_json : model_format::kiln_text;
}

// MIGraphX's form "[{min:1,max:64,optimals:[1,8,64]}, 3]" (bare keys; a number is a fixed dim)
// read as JSON once its keys are quoted.
std::vector<dynamic_dim> parse_dyn_dims(const std::string& text, const std::string& what) {
    static const std::regex bare_key(R"(([A-Za-z_]+)\s*:)");
    std::string json = std::regex_replace(text, bare_key, "\"$1\":");
    std::vector<dynamic_dim> dims;
    auto dim = [&](const value& v) {
        if (v.is_int()) {
            auto n = static_cast<std::size_t>(v.as_int());
            return dynamic_dim{n, n, {}, {}};
        }
        dynamic_dim d{static_cast<std::size_t>(v.at("min").as_int()), static_cast<std::size_t>(v.at("max").as_int()), {}, {}};
        if (v.contains("optimals"))
            for (const auto& o : v.at("optimals").as_array()) d.optimals.push_back(static_cast<std::size_t>(o.as_int()));
        if (d.min > d.max) fail("min ", d.min, " > max ", d.max);
        return d;
    };
    try {
        value v = parse_json(json);
        if (!v.is_array()) return {dim(v)};
        for (const auto& e : v.as_array()) dims.push_back(dim(e));
    } catch (const error& e) {
        throw usage_error(what + " expects dims like '[{min:1,max:64,optimals:[1,8,64]}, 3, 224]', got '" + text +
                          "' (" + e.what() + ")");
    }
    return dims;
}

dynamic_dim parse_dim_param(const std::string& word, std::string& name) {
    auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
        throw usage_error("--dim-param expects NAME=N or NAME=MIN:MAX (e.g. 'batch=8', 'batch=1:64'), got '" + word + "'");
    name = word.substr(0, eq);
    std::string v = word.substr(eq + 1), what = "--dim-param " + name;
    auto colon = v.find(':');
    if (colon == std::string::npos) {
        auto n = parse_count(v, what);
        return {n, n, {}, {}};
    }
    auto lo = parse_count(v.substr(0, colon), what), hi = parse_count(v.substr(colon + 1), what);
    if (lo > hi) throw usage_error(what + ": the range " + v + " has MIN > MAX");
    return {lo, hi, {}, {}};
}

// A note for the frontend's message when the dims of the input it names came from a file.
std::string dims_note(const std::string& message, const dim_options& dims) {
    for (const auto& [name, d] : dims.inputs)
        if (d.source.rfind("--input-dim", 0) != 0 && message.find("input '" + name + "'") != std::string::npos)
            return " (" + name + "'s dims " + lens_to_string(d.lens) + " come from " + d.source + ")";
    return "";
}

void check_names(const model_file& f, const dim_options& dims) {
    for (const auto& [name, d] : dims.inputs)
        if (std::find(f.inputs.begin(), f.inputs.end(), name) == f.inputs.end())
            fail(d.source, ": the model has no input '", name, "' (inputs: ", list_names(f.inputs), ")");
    for (const auto& [name, d] : dims.params)
        if (!f.symbols.count(name))
            fail("--dim-param ", name, ": the model's inputs have no symbolic dim '", name, "' (symbolic dims: ",
                 list_names({f.symbols.begin(), f.symbols.end()}), ")");
}

std::string read_whole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read '", path, "'");
    std::string text{std::istreambuf_iterator<char>(in), {}};
    if (text.empty()) fail(path, ": empty file");
    return text;
}

model_file open_text(model_file f) {
    program p = [&] {
        if (f.format == model_format::kiln_text) return parse_text_file(f.path);
        if (f.format == model_format::kiln_json) return program_from_json(read_whole(f.path), f.path);
        f.saved.emplace(load_program(f.path));
        return std::move(f.saved->prog);
    }();
    // Running a program that computes nothing would print "0 instructions" and nothing else.
    if (p.main().output_shapes().empty()) fail(f.path, ": model has no outputs");
    for (auto param : p.main().parameters()) {
        f.inputs.push_back(param_name(*param));
        for (const auto& d : param->get_shape().dyn_dims())
            if (!d.symbol.empty()) f.symbols.insert(d.symbol);
    }
    f.text = std::move(p);
    return f;
}

}  // namespace

void dim_options::add(const std::string& name, input_dims d) {
    auto [it, added] = inputs.emplace(name, d);
    if (!added && it->second.lens != d.lens)
        throw usage_error(it->second.source + " gives " + lens_to_string(it->second.lens) + " but " + d.source +
                          " gives " + lens_to_string(d.lens));
}

std::vector<option_spec> loader_options(bool with_dims) {
    std::vector<option_spec> opts = {
        {{"--onnx"}, option_spec::flag, "", "read FILE as an ONNX model (the default for .onnx, or binary content)"},
        {{"--kiln-text"}, option_spec::flag, "", "read FILE as kiln text IR (the default for .kir, or text content)"},
        {{"--kiln-json"}, option_spec::flag, "", "read FILE as kiln JSON, the form 'kiln read --json' writes (the\ndefault for .json)"},
        {{"--kiln"}, option_spec::flag, "", "read FILE as a saved compiled program, as 'kiln compile -o x.kiln'\nwrites (the default for .kiln, or the file's magic bytes)"},
        {{"--trim", "-t"}, option_spec::one, "N", "cut the last N instructions of main (the last one left becomes\nthe output)"},
    };
    if (!with_dims) return opts;
    std::vector<option_spec> dims = {
        {{"--input-dim"}, option_spec::many, "@NAME D...",
         "the lens of input NAME (ONNX: overrides the model's dims; text IR:\nthe size `kiln run` gives a dynamic input)",
         true},
        {{"--dim-param"}, option_spec::one, "NAME=N",
         "the size of the inputs' symbolic dim NAME, or with NAME=MIN:MAX a range\n(ONNX: the dim stays dynamic)", true},
        {{"--default-dim"}, option_spec::one, "N", "the size of every symbolic dim not set otherwise"},
        {{"--batch"}, option_spec::one, "N", "the batch size: --default-dim N, and perf's rate counts N items per run"},
        {{"--dyn-input-dim"}, option_spec::many, "@NAME DIMS",
         "ONNX: input NAME's dims, dynamic ones as ranges:\n'[{min:1,max:64,optimals:[1,8,64]}, 3, 224, 224]'", true},
        {{"--default-dyn-dim"}, option_spec::one, "DIM",
         "ONNX: the range of every symbolic dim not set otherwise:\n'{min:1,max:64,optimals:[1,8,64]}'"},
        {{"--skip-unknown-operators"}, option_spec::flag, "",
         "ONNX: parse past unsupported ops (they fail when run, naming the node)"},
    };
    opts.insert(opts.end(), dims.begin(), dims.end());
    return opts;
}

dim_options read_dim_options(const parsed_args& args) {
    dim_options o;
    for (const auto& use : args.uses("--input-dim")) {
        if (use.size() < 2 || use[0].size() < 2 || use[0][0] != '@')
            throw usage_error("--input-dim expects @NAME then its dims, e.g. '--input-dim @x 1 28 28'");
        std::string name = use[0].substr(1), source = "--input-dim " + use[0];
        if (o.inputs.count(name)) throw usage_error(source + " is given twice");
        input_dims d{{}, source};
        for (std::size_t i = 1; i < use.size(); ++i) d.lens.push_back(parse_count(use[i], source));
        o.inputs.emplace(name, d);
    }
    for (const auto& use : args.uses("--dim-param")) {
        std::string name;
        dynamic_dim d = parse_dim_param(use.at(0), name);
        if (!o.params.emplace(name, d).second) throw usage_error("--dim-param " + name + " is given twice");
    }
    if (args.has("--default-dim")) o.default_dim = parse_count(args.get("--default-dim"), "--default-dim");
    if (args.has("--batch")) {
        if (o.default_dim) throw usage_error("--batch N sets --default-dim N; give one of them");
        o.batch = parse_count(args.get("--batch"), "--batch");
        if (*o.batch == 0) throw usage_error("--batch expects a positive integer, got 0");
        o.default_dim = o.batch;
    }
    for (const auto& use : args.uses("--dyn-input-dim")) {
        if (use.size() != 2 || use[0].size() < 2 || use[0][0] != '@')
            throw usage_error("--dyn-input-dim expects @NAME then its dims in one word, e.g. "
                              "--dyn-input-dim @x \"[{min:1,max:64}, 3, 224, 224]\"");
        std::string name = use[0].substr(1), what = "--dyn-input-dim " + use[0];
        if (!o.dyn_inputs.emplace(name, parse_dyn_dims(use[1], what)).second) throw usage_error(what + " is given twice");
        if (o.inputs.count(name)) throw usage_error("input '" + name + "' is given by both --input-dim and --dyn-input-dim");
    }
    if (args.has("--default-dyn-dim")) {
        auto d = parse_dyn_dims(args.get("--default-dyn-dim"), "--default-dyn-dim");
        if (d.size() != 1) throw usage_error("--default-dyn-dim expects one dim, e.g. '{min:1,max:64}'");
        o.default_dyn_dim = d[0];
    }
    if (args.has("--trim")) o.trim = parse_count(args.get("--trim"), "--trim");
    o.skip_unknown_operators = args.has("--skip-unknown-operators");
    return o;
}

model_file open_model(const parsed_args& args) {
    model_file f;
    f.path = *args.positional();
    check_input_file(f.path);
    f.format = detect_format(args, f.path);
    if (f.format != model_format::onnx) return open_text(std::move(f));
    auto info = scan_onnx_model(f.path);
    f.inputs = std::move(info.inputs);
    f.outputs = std::move(info.outputs);
    f.symbols = std::move(info.symbols);
    return f;
}

const char* format_name(model_format f) {
    return f == model_format::kiln_json ? "kiln JSON" : f == model_format::saved ? "a saved program" : "kiln text IR";
}

// Cuts the last `n` instructions of main (--trim).
program trimmed(program p, std::size_t n) {
    if (n == 0) return p;
    std::vector<std::size_t> computing;
    std::size_t pos = 0;
    for (const auto& ins : p.main()) {
        if (is_computing(ins)) computing.push_back(pos);
        ++pos;
    }
    if (n >= computing.size())
        throw usage_error("--trim " + std::to_string(n) + " would cut every instruction (main has " +
                          std::to_string(computing.size()) + ")");
    return program_prefix(p, computing[computing.size() - 1 - n]);
}

program load_untrimmed(model_file& f, const dim_options& dims, bool sizes_inputs) {
    if (f.format != model_format::onnx) {
        std::string what = std::string(format_name(f.format));
        if (dims.skip_unknown_operators)
            throw usage_error("--skip-unknown-operators applies to ONNX models; '" + f.path + "' is " + what);
        if (!dims.dyn_inputs.empty() || dims.default_dyn_dim)
            throw usage_error("--dyn-input-dim and --default-dyn-dim apply to ONNX models; '" + f.path + "' is " + what);
        if (dims.given() && !sizes_inputs)
            throw usage_error("--input-dim, --dim-param, --default-dim and --batch set the dims of an ONNX model's inputs; '" +
                              f.path + "' is " + what + " (kiln run takes them to size its dynamic inputs)");
    }
    check_names(f, dims);
    for (const auto& [name, d] : dims.dyn_inputs)
        if (std::find(f.inputs.begin(), f.inputs.end(), name) == f.inputs.end())
            fail("--dyn-input-dim @", name, ": the model has no input '", name, "' (inputs: ", list_names(f.inputs), ")");
    if (f.format != model_format::onnx) return std::move(*f.text);
    onnx_options o;
    for (const auto& [name, d] : dims.inputs) o.input_dims[name] = d.lens;
    o.dim_params = dims.params;
    o.default_dim = dims.default_dim;
    o.skip_unknown_operators = dims.skip_unknown_operators;
    o.dyn_input_dims = dims.dyn_inputs;
    o.default_dyn_dim = dims.default_dyn_dim;
    try {
        return parse_onnx_file(f.path, o);
    } catch (const error& e) {
        fail(e.what(), dims_note(e.what(), dims));
    }
}

program load_model(model_file& f, const dim_options& dims, bool sizes_inputs) {
    return trimmed(load_untrimmed(f, dims, sizes_inputs), dims.trim);
}

std::string saved_summary(const model_file& f) {
    if (!f.saved) return "";
    const auto& i = f.saved->info;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.3f", f.saved->load_ms);
    std::string s = "Loaded " + f.path + " in " + ms + " ms (target " + i.target;
    if (!i.device_arch.empty()) s += " " + i.device_arch;
    s += ", kiln " + i.kiln_version + ", options hash " + i.options_hash + ", " +
         std::to_string(f.saved->mapped_bytes) + " literal bytes mapped); not compiled again";
    return s;
}

std::string output_label(const model_file& f, std::size_t i) {
    std::string label = "#output_" + std::to_string(i);
    if (i < f.outputs.size() && !f.outputs[i].empty()) label += " (" + f.outputs[i] + ")";
    return label;
}

std::string list_names(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? "none" : s;
}

}  // namespace kiln::driver
