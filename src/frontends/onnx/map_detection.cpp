// ONNX detection ops: NonMaxSuppression, RoiAlign and MaxRoiPool onto kiln's ops of the same kind.
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

// kiln's op takes the optional limits as a prefix of its inputs: an absent one before a present
// one becomes its ONNX default (max_output_boxes_per_class 0, iou_threshold 0).
inputs_t non_max_suppression(const node_info& n, context& ctx, const inputs_t& in) {
    std::size_t last = in.size();
    while (last > 2 && ctx.is_none(in[last - 1])) --last;
    inputs_t args{in.at(0), in.at(1)};
    for (std::size_t i = 2; i < last; ++i) {
        if (!ctx.is_none(in[i]))
            args.push_back(in[i]);
        else if (i == 2)
            args.push_back(ctx.add_literal(literal(shape(dtype::int64), std::vector<std::int64_t>{0})));
        else
            args.push_back(ctx.add_literal(literal(shape(dtype::float32), std::vector<double>{0})));
    }
    return {ctx.add("nonmax_suppression", value{{"center_point_box", n.attr_int("center_point_box", 0) != 0}}, args)};
}
KILN_ONNX_OP("", "NonMaxSuppression", 10, non_max_suppression)

// Opset 10 has no coordinate_transformation_mode: it behaves as output_half_pixel, which
// opset 16 added as an option beside its new default, half_pixel.
op_mapping roi_align(const char* default_ctm) {
    return [=](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
        value attrs{{"mode", n.attr_string("mode", "avg")},
                    {"coordinate_transformation_mode", n.attr_string("coordinate_transformation_mode", default_ctm)},
                    {"output_height", n.attr_int("output_height", 1)},
                    {"output_width", n.attr_int("output_width", 1)},
                    {"sampling_ratio", n.attr_int("sampling_ratio", 0)},
                    {"spatial_scale", n.attr_float("spatial_scale", 1.0f)}};
        return {ctx.add("roi_align", attrs, {in.at(0), in.at(1), in.at(2)})};
    };
}
KILN_ONNX_OP("", "RoiAlign", 10, roi_align("output_half_pixel"))
KILN_ONNX_OP("", "RoiAlign", 16, roi_align("half_pixel"))

inputs_t max_roi_pool(const node_info& n, context& ctx, const inputs_t& in) {
    n.attr("pooled_shape");
    return {ctx.add("max_roi_pool",
                    value{{"pooled_shape", to_value(n.attr_ints("pooled_shape"))},
                          {"spatial_scale", n.attr_float("spatial_scale", 1.0f)}},
                    {in.at(0), in.at(1)})};
}
KILN_ONNX_OP("", "MaxRoiPool", 1, max_roi_pool)

}  // namespace
}  // namespace kiln::onnx_fe
