#include "driver/program_output.hpp"

#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "driver/display.hpp"
#include "driver/program_json.hpp"
#include "tools/graphviz.hpp"

namespace kiln::driver {

namespace {

enum class output_format { text, brief, json, graphviz, binary };

bool ends_with(const std::string& s, const std::string& ext) {
    return s.size() >= ext.size() && s.compare(s.size() - ext.size(), ext.size(), ext) == 0;
}

std::string rendered_kind(const std::string& path) {
    for (const char* ext : {".svg", ".png", ".pdf"})
        if (ends_with(path, ext)) return std::string(ext).substr(1);
    return "";
}

output_format choose(const parsed_args& args, const std::string& path) {
    const std::pair<const char*, output_format> flags[] = {{"--text", output_format::text},
                                                           {"--json", output_format::json},
                                                           {"--graphviz", output_format::graphviz},
                                                           {"--binary", output_format::binary}};
    std::string given;
    output_format f = output_format::text;
    for (auto [flag, format] : flags) {
        if (!args.has(flag)) continue;
        if (!given.empty()) throw usage_error("give one output format: " + given + " and " + flag + " are both given");
        given = flag;
        f = format;
    }
    if (given.empty()) {
        if (ends_with(path, ".kiln")) f = output_format::binary;
        else if (ends_with(path, ".json")) f = output_format::json;
        else if (ends_with(path, ".dot") || ends_with(path, ".gv") || !rendered_kind(path).empty())
            f = output_format::graphviz;
    }
    if (args.has("--brief") && args.has("--full")) throw usage_error("give one of --brief and --full");
    if (args.has("--brief") || args.has("--full")) {
        std::string flag = args.has("--brief") ? "--brief" : "--full";
        if (f != output_format::text) throw usage_error(flag + " is about the text form; it does not apply to " + given);
    }
    // On a terminal or a pipe a model's weights would bury the program (157 MB for resnet18): the
    // text form on stdout abbreviates literals unless --full asks for them; a file gets them all.
    if (f == output_format::text && (args.has("--brief") || (path.empty() && !args.has("--full"))))
        f = output_format::brief;
    if (f == output_format::binary && path.empty())
        throw usage_error("--binary writes a saved program file: give it with -o FILE.kiln");
    return f;
}

// DOT through Graphviz's dot into an SVG/PNG/PDF file.
void render(const std::string& dot_text, const std::string& path, const std::string& kind) {
    if (std::system("command -v dot >/dev/null 2>&1") != 0)
        fail("rendering '", path, "' needs Graphviz's dot, which is not installed (Debian: apt install graphviz); ",
             "-o FILE.dot writes the DOT text instead");
    std::string dot_file = path + ".dot";
    write_text(dot_text, dot_file);
    std::string cmd = "dot -T" + kind + " -o '" + path + "' '" + dot_file + "'";
    int rc = std::system(cmd.c_str());
    std::filesystem::remove(dot_file);
    if (rc != 0) fail("Graphviz's dot could not render '", path, "'");
}

}  // namespace

std::vector<option_spec> output_option_specs() {
    return {
        {{"--text"}, option_spec::flag, "", "write the text IR (the default): on stdout with literals of more\nthan 16 values as '@literal{ ... }', to -o FILE in full"},
        {{"--brief"}, option_spec::flag, "", "text IR with literals of more than 16 values as '@literal{ ... }'\n(also to -o FILE)"},
        {{"--full"}, option_spec::flag, "", "text IR with every literal value (also on stdout)"},
        {{"--json"}, option_spec::flag, "", "write JSON: modules, then one instruction per line with its op,\nattributes, inputs, shape (and a literal's values)"},
        {{"--graphviz", "-g"}, option_spec::flag, "", "write a Graphviz DOT graph, fused regions as clusters (-o x.svg\nrenders it when Graphviz is installed)"},
        {{"--binary"}, option_spec::flag, "", "write a saved program (the default for -o x.kiln)"},
        {{"--output", "-o"}, option_spec::one, "FILE", "write to FILE instead of stdout"},
    };
}

std::string write_program(const parsed_args& args, const program& p, const saved_program_info& info,
                          const saved_parts& parts) {
    std::string path = args.get("--output");
    switch (choose(args, path)) {
    case output_format::binary:
        save_program(p, info, path, parts);
        return path + " (saved program, " + std::to_string(std::filesystem::file_size(path)) + " bytes)";
    case output_format::graphviz:
        if (std::string kind = rendered_kind(path); !kind.empty()) {
            render(program_to_dot(p), path, kind);
            return path + " (" + kind + ")";
        }
        write_text(program_to_dot(p), path);
        break;
    case output_format::json: write_text(program_to_json(p), path); break;
    case output_format::brief: write_text(brief_program(p), path); break;
    case output_format::text: write_text(to_string(p), path); break;
    }
    return path.empty() ? "" : path;
}

}  // namespace kiln::driver
