// nonmax_suppression (ops/nonmax_suppression.cpp) on the GPU, as ref computes it: per batch and
// class, the greedy choice of the highest scores (ties: the lower index) whose IOU with every box
// kept before is at most the threshold, up to max_output_boxes_per_class, scores not above the
// score threshold left out; IOUs in the boxes' type (float for 16-bit floats).
//  - one thread per (batch, class) walks its boxes in score order (each step finds the next one
//    after the last in that order, so nothing is sorted or allocated) and lists the boxes it keeps
//    and their count; the thresholds are read on the device;
//  - the host reads the total count back (one synchronisation: the result's length);
//  - one thread per (batch, class) writes its rows after those of the pairs before it.
// Each thread is quadratic in the number of boxes: correct, not fast. The products and quotients
// are rounded on their own (never fused), so a threshold met exactly compares as in ref.
#include "core/error.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/gpu_error.hpp"

namespace kiln::gpu {
namespace {

argument run_nms(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    std::string where = cat(ins.name(), ins.source_name().empty() ? "" : cat(" (node '", ins.source_name(), "')"));
    std::vector<argument> in;
    for (const auto& a : args) in.push_back(r.standard(ins, a));
    const auto& bl = in[0].get_shape().lens();
    nms_geometry g{bl[0], in[1].get_shape().lens()[1], bl[1], in[0].get_shape().type(), in[1].get_shape().type(), {}};
    for (std::size_t i = 2; i < in.size(); ++i) g.limits.push_back(in[i].get_shape().type());
    bool center = ins.get_operator().attributes().at("center_point_box").as_bool();
    std::size_t pairs = g.batches * g.classes;
    argument kept = r.allocate(shape(dtype::int64, std::vector<std::size_t>{std::max<std::size_t>(pairs * g.boxes, 1)}));
    argument counts = r.allocate(shape(dtype::int64, std::vector<std::size_t>{std::max<std::size_t>(pairs, 1)}));
    argument total = r.allocate(shape(dtype::uint64, std::vector<std::size_t>{1}));
    KILN_GPU_CHECK(cudaMemsetAsync(total.data(), 0, 8, r.stream()), cat("clearing the count of ", where));
    void* kp = kept.data();
    void* cp = counts.data();
    void* tp = total.data();
    void* p[5] = {};
    for (std::size_t i = 0; i < in.size(); ++i) p[i] = in[i].data();
    launch_dims d = elementwise_launch(pairs);
    if (pairs > 0) {
        void* a[] = {&kp, &cp, &tp, &p[0], &p[1], &p[2], &p[3], &p[4]};
        launch_kernel(r.kernel(nms_select_kernel(g, center, where)), d.grid, d.block, a, r.stream(), where);
    }
    auto n = static_cast<std::size_t>(r.read_scalar(total, cat("reading the count of ", where)));
    argument y = r.allocate(shape(dtype::int64, std::vector<std::size_t>{n, 3}));
    if (n > 0) {
        void* yp = y.data();
        void* a[] = {&yp, &kp, &cp};
        launch_kernel(r.kernel(nms_write_kernel(g, where)), d.grid, d.block, a, r.stream(), where);
    }
    return y;
}

const gpu_dynamic_op_registrar nms_runs{{
    "nonmax_suppression (boxes kept per batch and class, their count read back, then written)",
    [](const instruction& ins) { return ins.name() == "nonmax_suppression"; },
    run_nms}};

std::string frame(const nms_geometry& g) {
    return cat("#include \"kiln_elementwise.cuh\"\n",
               "constexpr kiln::i64 B = ", g.batches, "ll, C = ", g.classes, "ll, N = ", g.boxes, "ll;\n");
}

}  // namespace

kernel_source nms_select_kernel(const nms_geometry& g, bool center, const std::string& where) {
    bool dbl = g.boxes_type == dtype::float64;
    std::string f = dbl ? "double" : "float";
    std::string sfx = dbl ? "d" : "f";
    // Absent limits: no boxes kept, an IOU threshold of 0, no score threshold (as ref).
    auto type = [&](std::size_t i) { return i < g.limits.size() ? device_type(g.limits[i]) : std::string("float"); };
    std::string corners =
        center ? "e.lo[0] = c1 - c3 / 2; e.lo[1] = c0 - c2 / 2; e.hi[0] = c1 + c3 / 2; e.hi[1] = c0 + c2 / 2;\n"
               : "e.lo[0] = c2 < c0 ? c2 : c0; e.lo[1] = c3 < c1 ? c3 : c1;\n"
                 "    e.hi[0] = c0 < c2 ? c2 : c0; e.hi[1] = c1 < c3 ? c3 : c1;\n";
    std::string code = cat(
        frame(g), "typedef ", f, " F;\n",
        "struct extent { F lo[2], hi[2]; };\n",
        "__device__ extent box(const ", device_type(g.boxes_type), "* boxes, kiln::i64 b, kiln::i64 j) {\n",
        "    auto c = boxes + (b * N + j) * 4;\n",
        "    F c0 = (F)kiln::load(c[0]), c1 = (F)kiln::load(c[1]), c2 = (F)kiln::load(c[2]), c3 = (F)kiln::load(c[3]);\n",
        "    extent e;\n    ", corners, "    return e;\n}\n",
        "__device__ bool suppresses(const extent& a, const extent& b, F threshold) {\n",
        "    F side[2];\n",
        "    for (int d = 0; d < 2; ++d) {\n",
        "        F hi = a.hi[d] < b.hi[d] ? a.hi[d] : b.hi[d], lo = a.lo[d] < b.lo[d] ? b.lo[d] : a.lo[d];\n",
        "        side[d] = hi - lo;\n",
        "        if (!(side[d] > 0)) return false;\n",
        "    }\n",
        "    F inter = __", sfx, "mul_rn(side[0], side[1]);\n",
        "    F area_a = __", sfx, "mul_rn(a.hi[0] - a.lo[0], a.hi[1] - a.lo[1]);\n",
        "    F area_b = __", sfx, "mul_rn(b.hi[0] - b.lo[0], b.hi[1] - b.lo[1]);\n",
        "    F uni = area_a + area_b - inter;\n",
        "    if (!(inter > 0) || !(area_a > 0) || !(area_b > 0) || !(uni > 0)) return false;\n",
        "    return __", sfx, "div_rn(inter, uni) > threshold;\n}\n",
        "extern \"C\" __global__ void __launch_bounds__(256) kiln_nms_select(kiln::i64* __restrict__ kept, ",
        "kiln::i64* __restrict__ counts, unsigned long long* total, const ", device_type(g.boxes_type),
        "* __restrict__ boxes, const ", device_type(g.scores_type), "* __restrict__ scores, const ", type(0),
        "* max_out, const ", type(1), "* iou, const ", type(2), "* score_min) {\n",
        "    const kiln::i64 limit = ", g.limits.size() > 0 ? "(kiln::i64)kiln::load(*max_out)" : "0", ";\n",
        "    const F iou_max = ", g.limits.size() > 1 ? "(F)kiln::load(*iou)" : "0", ";\n",
        "    const bool has_min = ", g.limits.size() > 2 ? "true" : "false", ";\n",
        "    const F score_min_f = has_min ? (F)kiln::load(*score_min) : (F)0;\n",
        "    for (kiln::i64 t = kiln::global_thread(); t < B * C; t += kiln::grid_threads()) {\n",
        "        const kiln::i64 b = t / C;\n",
        "        auto s = scores + t * N;\n",
        "        kiln::i64* mine = kept + t * N;\n",
        "        kiln::i64 k = 0, last = -1;\n",
        "        F last_score = 0;\n",
        "        while (k < limit) {\n",
        // The next box in the order of decreasing score, then increasing index, after the last.
        "            kiln::i64 best = -1;\n",
        "            F best_score = 0;\n",
        "            for (kiln::i64 j = 0; j < N; ++j) {\n",
        "                F sj = (F)kiln::load(s[j]);\n",
        "                if (has_min && !(sj > score_min_f)) continue;\n",
        "                if (last >= 0 && !(sj < last_score || (sj == last_score && j > last))) continue;\n",
        "                if (best < 0 || sj > best_score) best = j, best_score = sj;\n",
        "            }\n",
        "            if (best < 0) break;\n",
        "            last = best, last_score = best_score;\n",
        "            extent e = box(boxes, b, best);\n",
        "            bool free = true;\n",
        "            for (kiln::i64 q = 0; q < k && free; ++q) free = !suppresses(e, box(boxes, b, mine[q]), iou_max);\n",
        "            if (free) mine[k++] = best;\n",
        "        }\n",
        "        counts[t] = k;\n",
        "        if (k) atomicAdd(total, (unsigned long long)k);\n",
        "    }\n}\n");
    return {"kiln_nms_select", code, where};
}

kernel_source nms_write_kernel(const nms_geometry& g, const std::string& where) {
    std::string code = cat(frame(g),
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_nms_write(kiln::i64* __restrict__ y, ",
                           "const kiln::i64* __restrict__ kept, const kiln::i64* __restrict__ counts) {\n",
                           "    for (kiln::i64 t = kiln::global_thread(); t < B * C; t += kiln::grid_threads()) {\n",
                           "        kiln::i64 row = 0;\n",
                           "        for (kiln::i64 u = 0; u < t; ++u) row += counts[u];\n",
                           "        for (kiln::i64 q = 0; q < counts[t]; ++q, ++row) {\n",
                           "            y[row * 3] = t / C;\n",
                           "            y[row * 3 + 1] = t % C;\n",
                           "            y[row * 3 + 2] = kept[t * N + q];\n",
                           "        }\n",
                           "    }\n}\n");
    return {"kiln_nms_write", code, where};
}

}  // namespace kiln::gpu
