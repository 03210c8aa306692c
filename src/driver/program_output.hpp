// How read and compile write a program: text IR (literals abbreviated on stdout unless --full,
// in full to a file unless --brief), JSON, DOT
// (--graphviz; rendered to SVG/PNG/PDF by Graphviz's dot when -o names such a file) or a saved
// program container (--binary), to stdout or -o FILE. Without a format flag, -o's extension
// picks one (.kiln, .json, .dot/.gv, .svg/.png/.pdf; else text).
#pragma once
#include <string>
#include <vector>

#include "driver/args.hpp"
#include "tools/saved_program.hpp"

namespace kiln::driver {

std::vector<option_spec> output_option_specs();
// Returns what was written ("model.kiln (saved program, 12 KiB)") or "" for stdout.
// `parts`: what the executable keeps in a saved program (executable::saved), binary only.
std::string write_program(const parsed_args& args, const program& p, const saved_program_info& info,
                          const saved_parts& parts = {});

}  // namespace kiln::driver
