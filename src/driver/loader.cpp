#include "driver/loader.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "core/error.hpp"
#include "core/text_parser.hpp"
#include "driver/display.hpp"
#include "driver/onnx_info.hpp"
#include "frontends/onnx/onnx.hpp"

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

model_format detect_format(const parsed_args& args, const std::string& path) {
    bool onnx = args.has("--onnx"), text = args.has("--kiln-text");
    if (onnx && text) throw usage_error("give one format: --onnx and --kiln-text are both given");
    if (onnx || text) return onnx ? model_format::onnx : model_format::kiln_text;
    if (has_extension(path, ".onnx")) return model_format::onnx;
    if (has_extension(path, ".kir")) return model_format::kiln_text;
    return looks_like_text(path) ? model_format::kiln_text : model_format::onnx;
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

model_file open_text(model_file f) {
    program p = parse_text_file(f.path);
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
    };
    if (!with_dims) return opts;
    std::vector<option_spec> dims = {
        {{"--input-dim"}, option_spec::many, "@NAME D...",
         "the lens of input NAME (ONNX: overrides the model's dims; text IR:\nthe size `kiln run` gives a dynamic input)",
         true},
        {{"--dim-param"}, option_spec::one, "NAME=N",
         "the size of the inputs' symbolic dim NAME, or with NAME=MIN:MAX a range\n(ONNX: the dim stays dynamic)", true},
        {{"--default-dim"}, option_spec::one, "N", "the size of every symbolic dim not set otherwise"},
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
    o.skip_unknown_operators = args.has("--skip-unknown-operators");
    return o;
}

model_file open_model(const parsed_args& args) {
    model_file f;
    f.path = *args.positional();
    f.format = detect_format(args, f.path);
    if (f.format == model_format::kiln_text) return open_text(std::move(f));
    auto info = scan_onnx_model(f.path);
    f.inputs = std::move(info.inputs);
    f.outputs = std::move(info.outputs);
    f.symbols = std::move(info.symbols);
    return f;
}

program load_model(model_file& f, const dim_options& dims, bool sizes_inputs) {
    if (f.format == model_format::kiln_text) {
        if (dims.skip_unknown_operators)
            throw usage_error("--skip-unknown-operators applies to ONNX models; '" + f.path + "' is kiln text IR");
        if (dims.given() && !sizes_inputs)
            throw usage_error("--input-dim, --dim-param and --default-dim set the dims of an ONNX model's inputs; '" +
                              f.path + "' is kiln text IR (kiln run takes them to size its dynamic inputs)");
    }
    check_names(f, dims);
    if (f.format == model_format::kiln_text) return std::move(*f.text);
    onnx_options o;
    for (const auto& [name, d] : dims.inputs) o.input_dims[name] = d.lens;
    o.dim_params = dims.params;
    o.default_dim = dims.default_dim;
    o.skip_unknown_operators = dims.skip_unknown_operators;
    try {
        return parse_onnx_file(f.path, o);
    } catch (const error& e) {
        fail(e.what(), dims_note(e.what(), dims));
    }
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
