// The driver's commands. Each file defines one command group; main.cpp dispatches to them.
#pragma once
#include "driver/args.hpp"

namespace kiln::driver {

struct command {
    command_spec spec;
    int (*run)(const parsed_args& args);   // returns the exit status
};

command op_command();       // op_cmd.cpp
command read_command();     // inspect_cmds.cpp
command params_command();   // inspect_cmds.cpp
command run_command();      // run_cmd.cpp
command compile_command();  // compile_cmd.cpp
command verify_command();   // verify_cmd.cpp
command perf_command();     // perf_cmd.cpp
command onnx_command();     // onnx_cmd.cpp

}  // namespace kiln::driver
