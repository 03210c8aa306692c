#include "driver/loader.hpp"

#include "core/text_parser.hpp"

namespace kiln::driver {

std::vector<option_spec> loader_options() {
    option_spec onnx{{"--onnx"}};
    onnx.unavailable = "the ONNX frontend is not built yet; kiln reads kiln text IR (.kir) for now";
    return {onnx};
}

program load_program(const parsed_args& args) { return parse_text_file(*args.positional()); }

}  // namespace kiln::driver
