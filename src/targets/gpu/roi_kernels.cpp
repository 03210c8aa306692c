// roi_align and max_roi_pool: one thread per output element [roi, channel, bin row, bin col],
// computing its bin as ref does (ops/roi_align.cpp) in double: roi_align's bilinear samples
// (average, or the largest weighted corner for max), max_roi_pool's whole-pixel maximum. A batch
// index outside the batch is a run-time error naming the roi, as ref's is (kiln_error.cuh).
#include "core/error.hpp"
#include "ops/roi_align.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

// The kernel's frame: parameters, layouts, the output element's coordinates, the image plane's
// offset `base` once batch index `b` is checked; `body` computes `r` (a double) from X's plane.
std::string roi_frame(const instruction& ins, const std::string& entry, const std::string& batch_index,
                      const std::string& body) {
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& rois = ins.inputs()[1]->get_shape();
    const shape& y = ins.get_shape();
    const auto& l = y.lens();
    std::string params = cat(device_type(y.type()), "* __restrict__ y, const ", device_type(x.type()), "* __restrict__ x, const ",
                             device_type(rois.type()), "* __restrict__ rois");
    if (ins.inputs().size() == 3)
        params += cat(", const ", device_type(ins.inputs()[2]->get_shape().type()), "* __restrict__ batch_indices");
    return cat("#include \"kiln_elementwise.cuh\"\n#include \"kiln_error.cuh\"\n",
               "extern \"C\" __global__ void __launch_bounds__(256) ", entry, "(", params, ", kiln::error_slot* err) {\n",
               "    constexpr auto R = ", layout_of_all(rois), ";\n",
               ins.inputs().size() == 3 ? cat("    constexpr auto B = ", layout_of_all(ins.inputs()[2]->get_shape()), ";\n") : "",
               "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
               "        const kiln::i64 pw = i % ", l[3], "ull, ph = i / ", l[3], "ull % ", l[2], "ull, c = i / ", l[3] * l[2],
               "ull % ", l[1], "ull, n = i / ", l[3] * l[2] * l[1], "ull;\n",
               "        auto roi = [&](int j) { return (double)kiln::load(rois[R.offset(n * ", rois.lens()[1], "ull + j)]); };\n",
               "        const kiln::i64 b = ", batch_index, ";\n",
               "        if (b < 0 || b >= ", x.lens()[0], "ll) { kiln::raise(err, kiln::error_index_out_of_range, b, n); y[i] = ",
               device_type(y.type()), "{}; continue; }\n",
               "        const kiln::i64 base = b * ", x.strides()[0], "ll + c * ", x.strides()[1], "ll;\n",
               "        auto at = [&](kiln::i64 yy, kiln::i64 xx) { return (double)kiln::load(x[base + yy * ", x.strides()[2],
               "ll + xx * ", x.strides()[3], "ll]); };\n",
               body, "        kiln::store(y[i], r);\n    }\n}\n");
}

std::string roi_align_body(const ops::roi_align& op, const shape& x) {
    const bool half = op.coordinate_transformation_mode == "half_pixel", avg = op.mode == "avg";
    const std::size_t h = x.lens()[2], w = x.lens()[3];
    return cat(
        "        const double off = ", half ? "0.5" : "0.0", ", scale = ", double_literal(op.spatial_scale), ";\n",
        "        const double x0 = roi(0) * scale - off, y0 = roi(1) * scale - off;\n",
        "        double rw = roi(2) * scale - off - x0, rh = roi(3) * scale - off - y0;\n",
        half ? "" : "        rw = rw < 1.0 ? 1.0 : rw; rh = rh < 1.0 ? 1.0 : rh;\n",
        "        const double bh = rh / ", op.output_height, ".0, bw = rw / ", op.output_width, ".0;\n",
        "        const kiln::u64 gh = (kiln::u64)(", op.sampling_ratio > 0 ? cat(op.sampling_ratio, ".0") : "bh > 0 ? ceil(bh) : 0.0", "),",
        " gw = (kiln::u64)(", op.sampling_ratio > 0 ? cat(op.sampling_ratio, ".0") : "bw > 0 ? ceil(bw) : 0.0", ");\n",
        "        double acc = 0;\n",
        "        for (kiln::u64 iy = 0; iy < gh; ++iy)\n",
        "            for (kiln::u64 ix = 0; ix < gw; ++ix) {\n",
        "                double sy = y0 + double(ph) * bh + (double(iy) + 0.5) * bh / double(gh);\n",
        "                double sx = x0 + double(pw) * bw + (double(ix) + 0.5) * bw / double(gw);\n",
        // bilinear(): points more than a pixel outside have zero weights on element (0, 0).
        "                kiln::u64 ya = 0, xa = 0, yb = 0, xb = 0; double wt[4] = {0, 0, 0, 0};\n",
        "                if (!(sy < -1.0 || sy > ", h, ".0 || sx < -1.0 || sx > ", w, ".0)) {\n",
        "                    sy = sy < 0.0 ? 0.0 : sy; sx = sx < 0.0 ? 0.0 : sx;\n",
        "                    ya = (kiln::u64)sy; xa = (kiln::u64)sx; yb = ya + 1; xb = xa + 1;\n",
        "                    if (ya >= ", h - 1, "ull) { ya = yb = ", h - 1, "ull; sy = double(ya); }\n",
        "                    if (xa >= ", w - 1, "ull) { xa = xb = ", w - 1, "ull; sx = double(xa); }\n",
        "                    const double ly = sy - double(ya), lx = sx - double(xa), hy = 1 - ly, hx = 1 - lx;\n",
        "                    wt[0] = hy * hx; wt[1] = hy * lx; wt[2] = ly * hx; wt[3] = ly * lx;\n",
        "                }\n",
        "                const double v[4] = {wt[0] * at(ya, xa), wt[1] * at(ya, xb), wt[2] * at(yb, xa), wt[3] * at(yb, xb)};\n",
        avg ? "                acc += v[0] + v[1] + v[2] + v[3];\n"
            : "                double m = v[0];\n"
              "                for (int j = 1; j < 4; ++j) if (m < v[j]) m = v[j];\n"
              "                const double prev = iy == 0 && ix == 0 ? v[0] : acc;\n"
              "                acc = prev < m ? m : prev;\n",
        "            }\n",
        avg ? "        const double r = acc / double(gh * gw > 0 ? gh * gw : 1);\n" : "        const double r = acc;\n");
}

std::string max_roi_pool_body(const ops::max_roi_pool& op, const shape& x) {
    const std::size_t h = x.lens()[2], w = x.lens()[3];
    auto bin = [](const char* p, std::int64_t bins, const char* start, const char* len, std::size_t n, const char* lo,
                  const char* hi) {
        return cat("        kiln::i64 ", lo, " = (kiln::i64)floor(double(", p, ") * (double(", len, ") / ", bins, ".0)) + ", start,
                   ", ", hi, " = (kiln::i64)ceil(double(", p, " + 1) * (double(", len, ") / ", bins, ".0)) + ", start, ";\n",
                   "        ", lo, " = ", lo, " < 0 ? 0 : ", lo, " > ", n, "ll ? ", n, "ll : ", lo, "; ", hi, " = ", hi,
                   " < 0 ? 0 : ", hi, " > ", n, "ll ? ", n, "ll : ", hi, ";\n");
    };
    return cat("        const double scale = ", double_literal(op.spatial_scale), ";\n",
               "        const kiln::i64 x1 = (kiln::i64)round(roi(1) * scale), y1 = (kiln::i64)round(roi(2) * scale);\n",
               "        kiln::i64 rw = (kiln::i64)round(roi(3) * scale) - x1 + 1, rh = (kiln::i64)round(roi(4) * scale) - y1 + 1;\n",
               "        rw = rw < 1 ? 1 : rw; rh = rh < 1 ? 1 : rh;\n",
               bin("ph", op.pooled_shape[0], "y1", "rh", h, "h0", "h1"), bin("pw", op.pooled_shape[1], "x1", "rw", w, "w0", "w1"),
               "        double r = h0 < h1 && w0 < w1 ? -(1.0 / 0.0) : 0.0;\n",
               "        for (kiln::i64 a = h0; a < h1; ++a)\n",
               "            for (kiln::i64 e = w0; e < w1; ++e) { const double v = at(a, e); if (r < v) r = v; }\n");
}

void lower_roi(lowering_context& ctx, const instruction& ins) {
    const shape& x = ins.inputs()[0]->get_shape();
    std::string code, entry;
    const std::size_t batch = x.lens()[0];
    error_explainer explain;
    if (const auto* op = ins.get_operator().get_if<ops::roi_align>()) {
        entry = "kiln_roi_align";
        code = roi_frame(ins, entry, "(kiln::i64)kiln::load(batch_indices[B.offset(n)])", roi_align_body(*op, x));
        explain = [batch](const error_slot& s) {
            return cat("batch_indices[", s.position, "]=", s.value, " is out of range for a batch of ", batch);
        };
    } else {
        entry = "kiln_max_roi_pool";
        code = roi_frame(ins, entry, "(kiln::i64)roi(0)",
                         max_roi_pool_body(ins.get_operator().get<ops::max_roi_pool>(), x));
        explain = [batch](const error_slot& s) {
            return cat("roi ", s.position, " has batch index ", s.value, "; the batch has ", batch);
        };
    }
    std::vector<void*> pointers{ctx.address(ins)};
    for (auto i : ins.inputs()) pointers.push_back(ctx.address(*i));
    pointers.push_back(ctx.error_slot(ins, std::move(explain)));
    ctx.add_kernel(ins, {entry, code, ctx.where(ins)}, elementwise_launch(ins.get_shape().elements()), std::move(pointers));
}

const gpu_lowering_registrar roi_lowering{{
    "roi_align/max_roi_pool (generated kernel, one thread per output element)",
    [](const instruction& ins) {
        const auto& op = ins.get_operator();
        return (op.get_if<ops::roi_align>() || op.get_if<ops::max_roi_pool>()) && ins.get_shape().standard();
    },
    lower_roi,
}};

}  // namespace
}  // namespace kiln::gpu
