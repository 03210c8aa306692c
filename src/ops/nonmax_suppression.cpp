// nonmax_suppression, as ONNX NonMaxSuppression: per batch and class, greedily keeps the boxes
// of highest score (ties: the lower index) whose IOU with every box kept before is at most
// iou_threshold, up to max_output_boxes_per_class, leaving out scores not above
// score_threshold. Inputs: boxes [B, N, 4], scores [B, C, N] and, optional in this order,
// max_output_boxes_per_class (integer; absent or <= 0 keeps none), iou_threshold (absent: 0) and
// score_threshold (absent: no threshold), each with one element. The thresholds are inputs, not
// attributes, as they never set the output shape. The output, int64 [selected, 3] rows of
// (batch, class, box), is data-dependent.
#include <algorithm>

#include "ops/common.hpp"

namespace kiln::ops {
namespace {

// A box as its extent along each of the two axes (min, max).
template <class F>
struct extent {
    F lo[2], hi[2];
};

struct nonmax_suppression {
    bool center_point_box = false;
    static constexpr std::string_view name = "nonmax_suppression";
    auto attributes() { return fields(field("center_point_box", center_point_box)); }
    op_traits traits() const { return {.data_dependent = true}; }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 2, 5);
        check_static(in);
        check_type(in, 0, float_type, "a float type");
        check_type(in, 1, float_type, "a float type");
        check_rank(in, 0, 3);
        check_rank(in, 1, 3);
        const auto& b = in[0].lens();
        const auto& s = in[1].lens();
        if (b[2] != 4) fail("boxes' last dim is ", b[2], "; expected 4");
        if (s[0] != b[0] || s[2] != b[1])
            fail("scores ", lens_to_string(s), " do not match boxes ", lens_to_string(b),
                 "; expected scores [batch, classes, boxes]");
        if (in.size() > 2) check_type(in, 2, integer_type, "an integer type (max_output_boxes_per_class)");
        for (std::size_t i = 3; i < in.size(); ++i) check_type(in, i, float_type, "a float type (a threshold)");
        for (std::size_t i = 2; i < in.size(); ++i)
            if (in[i].elements() != 1) fail("input ", i, " has ", in[i].elements(), " elements; expected one");
        return {dtype::int64, std::vector<dynamic_dim>{{.min = 0, .max = b[0] * s[1] * b[1]}, {.min = 3, .max = 3}}};
    }

    // Box j of a batch as extents, from corners (y1, x1, y2, x2 in any order) or centres.
    template <class F>
    extent<F> box(const std::vector<F>& v, std::size_t j) const {
        const F* c = &v[j * 4];
        if (center_point_box) return {{c[1] - c[3] / 2, c[0] - c[2] / 2}, {c[1] + c[3] / 2, c[0] + c[2] / 2}};
        return {{std::min(c[0], c[2]), std::min(c[1], c[3])}, {std::max(c[0], c[2]), std::max(c[1], c[3])}};
    }

    // Whether IOU(a, b) > threshold; boxes that do not overlap or have no area never suppress.
    template <class F>
    static bool suppresses(const extent<F>& a, const extent<F>& b, F threshold) {
        F side[2];
        for (int d = 0; d < 2; ++d) {
            side[d] = std::min(a.hi[d], b.hi[d]) - std::max(a.lo[d], b.lo[d]);
            if (!(side[d] > 0)) return false;
        }
        F inter = side[0] * side[1];
        F area_a = (a.hi[0] - a.lo[0]) * (a.hi[1] - a.lo[1]);
        F area_b = (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]);
        F uni = area_a + area_b - inter;
        if (!(inter > 0) || !(area_a > 0) || !(area_b > 0) || !(uni > 0)) return false;
        return inter / uni > threshold;
    }

    struct limits {
        std::int64_t max_out = 0;
        double iou = 0;
        bool has_score = false;
        double score = 0;
    };

    static limits read_limits(std::span<const argument> args) {
        limits l;
        if (args.size() > 2) l.max_out = to_int64s(args[2])[0];
        if (args.size() > 3) l.iou = to_doubles(args[3])[0];
        if (args.size() > 4) l.has_score = true, l.score = to_doubles(args[4])[0];
        return l;
    }

    // The boxes kept for one batch and class, in the order they are chosen.
    template <class F>
    std::vector<std::size_t> select(const std::vector<F>& boxes, const std::vector<F>& scores, const limits& l) const {
        std::vector<std::size_t> order;
        for (std::size_t j = 0; j < scores.size(); ++j)
            if (!l.has_score || scores[j] > static_cast<F>(l.score)) order.push_back(j);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t i, std::size_t j) { return scores[i] > scores[j]; });
        std::vector<std::size_t> kept;
        for (std::size_t j : order) {
            if (static_cast<std::int64_t>(kept.size()) >= l.max_out) break;
            auto bj = box(boxes, j);
            bool free = std::none_of(kept.begin(), kept.end(), [&](std::size_t k) {
                return suppresses(bj, box(boxes, k), static_cast<F>(l.iou));
            });
            if (free) kept.push_back(j);
        }
        return kept;
    }

    argument compute(const shape&, std::span<const argument> args) const {
        const auto& bl = args[0].get_shape().lens();
        std::size_t batches = bl[0], n = bl[1], classes = args[1].get_shape().lens()[1];
        limits l = read_limits(args);
        std::vector<std::int64_t> rows;
        // IOUs compute in the boxes' type (float for 16-bit floats), as ONNX's reference does, so
        // that a threshold met exactly compares the same.
        visit_type(args[0].get_shape().type(), [&](auto t) {
            using F = std::conditional_t<std::is_same_v<decltype(t), double>, double, float>;
            auto all_boxes = to_doubles(args[0]);
            auto all_scores = to_doubles(args[1]);
            for (std::size_t b = 0; b < batches; ++b) {
                std::vector<F> boxes(all_boxes.begin() + std::ptrdiff_t(b * n * 4),
                                     all_boxes.begin() + std::ptrdiff_t((b + 1) * n * 4));
                for (std::size_t c = 0; c < classes; ++c) {
                    auto first = all_scores.begin() + std::ptrdiff_t((b * classes + c) * n);
                    std::vector<F> scores(first, first + std::ptrdiff_t(n));
                    for (std::size_t j : select(boxes, scores, l))
                        rows.insert(rows.end(), {std::int64_t(b), std::int64_t(c), std::int64_t(j)});
                }
            }
        });
        return from_int64s(shape(dtype::int64, std::vector<std::size_t>{rows.size() / 3, 3}), rows);
    }
};
KILN_REGISTER_OP(nonmax_suppression)

}  // namespace
}  // namespace kiln::ops
