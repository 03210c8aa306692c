#include "driver/run_io.hpp"

#include <cctype>
#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "driver/npy.hpp"

namespace kiln::driver {

namespace {

void add_given(input_options& o, const std::string& name, given_input g) {
    if (auto it = o.given.find(name); it != o.given.end())
        throw usage_error("input '" + name + "' is given by both " + it->second.source + " and " + g.source);
    o.dims.add(name, {g.arg.get_shape().lens(), g.source});
    o.given.emplace(name, std::move(g));
}

std::string file_stem(const model_file& f, std::size_t i) {
    if (i >= f.outputs.size() || f.outputs[i].empty()) return "#output_" + std::to_string(i);
    std::string s = f.outputs[i];
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
    return s;
}

const std::vector<argument>& parts(const argument& a) { return a.sub_arguments(); }
const std::vector<shape>& parts(const shape& s) { return s.sub_shapes(); }

// A value splits into its tuple's, sequence's or optional's values; a type only into a tuple's
// (a sequence's length is not in its type).
bool splits(const argument& a) { return !a.get_shape().is_tensor(); }
bool splits(const shape& s) { return s.is_tuple(); }

// Appends make(name, v) for `v` (an argument or a shape), or for each of its values as NAME[J].
template <class V, class T, class F>
void flatten(const std::string& name, const V& v, std::vector<T>& out, F make) {
    if (!splits(v)) {
        out.push_back(make(name, v));
        return;
    }
    for (std::size_t j = 0; j < parts(v).size(); ++j) flatten(name + "[" + std::to_string(j) + "]", parts(v)[j], out, make);
}

}  // namespace

void add_npy_inputs(const parsed_args& args, input_options& o) {
    for (const auto& use : args.uses("--input")) {
        const std::string& word = use.at(0);
        auto eq = word.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
            throw usage_error("--input expects NAME=FILE.npy, got '" + word + "'");
        std::string file = word.substr(eq + 1);
        add_given(o, word.substr(0, eq), {read_npy(file), "--input " + word, file});
    }
}

void add_test_data_inputs(const std::string& dir, const onnx_test_data& td, const model_file& f, input_options& o) {
    if (td.inputs.size() != f.inputs.size())
        fail("--test-data ", dir, ": ", td.inputs.size(), " input files (input_*.pb) but the model has ", f.inputs.size(),
             " inputs (", list_names(f.inputs), ")");
    for (std::size_t k = 0; k < td.inputs.size(); ++k) {
        std::string file = dir + "/input_" + std::to_string(k) + ".pb";
        add_given(o, f.inputs[k], {td.inputs[k], "--test-data " + file, file});
    }
}

std::vector<named_value> labelled_outputs(const model_file& f, const std::vector<argument>& outs) {
    std::vector<named_value> r;
    for (std::size_t i = 0; i < outs.size(); ++i)
        flatten(output_label(f, i), outs[i], r, [](const std::string& n, const argument& a) { return named_value{n, a}; });
    return r;
}

std::vector<argument> flat_values(const std::vector<argument>& values) {
    std::vector<argument> r;
    for (const auto& v : values) flatten("", v, r, [](const std::string&, const argument& a) { return a; });
    return r;
}

void prepare_saving(const std::string& dir, const model_file& f, const std::vector<shape>& outputs) {
    std::vector<std::pair<std::string, shape>> flat;
    for (std::size_t i = 0; i < outputs.size(); ++i)
        flatten(output_label(f, i), outputs[i], flat, [](const std::string& n, const shape& s) { return std::pair{n, s}; });
    for (const auto& [label, s] : flat)
        if (npy_descr(s.type()).empty())
            fail("--save-outputs: ", label, " is ", dtype_name(s.type()), ", which numpy has no dtype for");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail("--save-outputs: cannot create the folder '", dir, "': ", ec.message());
}

std::vector<std::string> save_outputs(const std::string& dir, const model_file& f, const std::vector<argument>& outs) {
    std::vector<named_value> files;
    std::set<std::string> stems;
    for (std::size_t i = 0; i < outs.size(); ++i) {
        std::string stem = file_stem(f, i);
        // Two ONNX names may map to the same file name: the later output keeps its index.
        if (!stems.insert(stem).second) stem = "#output_" + std::to_string(i);
        flatten(stem, outs[i], files, [](const std::string& n, const argument& a) { return named_value{n, a}; });
    }
    std::vector<std::string> names;
    for (const auto& [stem, a] : files) {
        names.push_back(stem + ".npy");
        try {
            write_npy(dir + "/" + names.back(), a);
        } catch (const error& e) {
            fail("--save-outputs: ", e.what());
        }
    }
    return names;
}

}  // namespace kiln::driver
