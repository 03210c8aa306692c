#include "driver/onnx_info.hpp"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "core/error.hpp"

namespace kiln::driver {

namespace {

using google::protobuf::io::CodedInputStream;

// Field numbers from onnx.proto.
constexpr std::uint32_t model_graph = 7;
constexpr std::uint32_t graph_initializer = 5, graph_input = 11, graph_output = 12;
constexpr std::uint32_t tensor_name = 8;
constexpr std::uint32_t value_info_name = 1, value_info_type = 2;
constexpr std::uint32_t type_tensor = 1, tensor_type_shape = 2, shape_dim = 1, dim_param = 2;

enum wire : std::uint32_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

struct malformed {};

void skip_field(CodedInputStream& in, std::uint32_t wire_type) {
    std::uint64_t v = 0;
    std::uint32_t len = 0;
    bool ok = false;
    switch (wire_type) {
    case varint: ok = in.ReadVarint64(&v); break;
    case fixed64: ok = in.Skip(8); break;
    case fixed32: ok = in.Skip(4); break;
    case length_delimited: ok = in.ReadVarint32(&len) && len <= INT_MAX && in.Skip(static_cast<int>(len)); break;
    default: break;   // groups are not used by onnx.proto
    }
    if (!ok) throw malformed{};
}

// Calls on(field) for each length-delimited field of the message that ends at the current
// limit, with the stream limited to that field's bytes; on returns false to skip the field.
template <class F>
void each_field(CodedInputStream& in, F on) {
    while (std::uint32_t tag = in.ReadTag()) {
        std::uint32_t field = tag >> 3, wire_type = tag & 7;
        if (wire_type != length_delimited) {
            skip_field(in, wire_type);
            continue;
        }
        std::uint32_t len = 0;
        if (!in.ReadVarint32(&len) || len > INT_MAX) throw malformed{};
        auto limit = in.PushLimit(static_cast<int>(len));
        if (!on(field) && !in.Skip(in.BytesUntilLimit())) throw malformed{};
        if (in.BytesUntilLimit() != 0) throw malformed{};
        in.PopLimit(limit);
    }
    if (!in.ConsumedEntireMessage()) throw malformed{};
}

std::string read_rest(CodedInputStream& in) {
    std::string s;
    if (!in.ReadString(&s, in.BytesUntilLimit())) throw malformed{};
    return s;
}

// A ValueInfoProto: its name, and the dim_params of its tensor type into `symbols`.
std::string value_info(CodedInputStream& in, std::set<std::string>* symbols) {
    std::string name;
    each_field(in, [&](std::uint32_t f) {
        if (f == value_info_name) name = read_rest(in);
        if (f != value_info_type || !symbols) return f == value_info_name;
        each_field(in, [&](std::uint32_t t) {
            if (t != type_tensor) return false;
            each_field(in, [&](std::uint32_t s) {
                if (s != tensor_type_shape) return false;
                each_field(in, [&](std::uint32_t d) {
                    if (d != shape_dim) return false;
                    each_field(in, [&](std::uint32_t p) {
                        if (p == dim_param) symbols->insert(read_rest(in));
                        return p == dim_param;
                    });
                    return true;
                });
                return true;
            });
            return true;
        });
        return true;
    });
    return name;
}

void graph(CodedInputStream& in, onnx_model_info& info) {
    std::vector<std::string> inputs, initializers;
    std::set<std::string> symbols;
    each_field(in, [&](std::uint32_t f) {
        if (f == graph_input) inputs.push_back(value_info(in, &symbols));
        else if (f == graph_output) info.outputs.push_back(value_info(in, nullptr));
        else if (f == graph_initializer)
            each_field(in, [&](std::uint32_t t) {
                if (t == tensor_name) initializers.push_back(read_rest(in));
                return t == tensor_name;
            });
        return f == graph_input || f == graph_output || f == graph_initializer;
    });
    // Inputs that are also initializers are constants with defaults, not inputs (as the frontend reads them).
    for (auto& n : inputs)
        if (std::find(initializers.begin(), initializers.end(), n) == initializers.end()) info.inputs.push_back(n);
    info.symbols = std::move(symbols);
}

}  // namespace

onnx_model_info scan_onnx_model(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) fail("cannot read '", path, "'");
    onnx_model_info info;
    bool ok = true;
    {
        google::protobuf::io::FileInputStream file(fd);   // seeks over skipped fields (the weights)
        CodedInputStream in(&file);
        in.SetTotalBytesLimit(INT_MAX);
        try {
            each_field(in, [&](std::uint32_t f) {
                if (f == model_graph) graph(in, info);
                return f == model_graph;
            });
        } catch (const malformed&) {
            ok = false;
        }
    }
    ::close(fd);
    if (!ok) fail(path, ": not a valid ONNX model: the protobuf could not be parsed");
    return info;
}

}  // namespace kiln::driver
