// A probe for "row-slab execution of convolution chains" (docs/performance.md, cpu part): mobilenet_v2's
// second block (16->96 1x1 at 112x112 + ReLU6, 96-channel 3x3 stride-2 depthwise + ReLU6, 96->24 1x1 at
// 56x56), channels-last float32 as kiln runs it, timed on 2 threads four ways:
//   onednn      the three primitives one after the other, each split by oneDNN (3 parallel regions)
//   slab        one parallel region; each thread runs the three layers on its own band of output rows
//               (primitives created on one thread for the band's shapes, the 3x3's halo row recomputed)
//   1thread     the three primitives on one thread
//   slab-timed  slab, printing each thread's time per layer of the last run
// `cpu_slab_probe cold [MB]` sweeps MB (default 64) of memory before every run (weights and
// activations out of cache, as between a model's layers); without it every run finds them warm.
// `cpu_slab_probe dirty` has both threads write over the block's buffers before each run (below).
//   g++ -O2 -fopenmp -std=c++17 bench/cpu_slab_probe.cpp -I.venv/include -L.venv/lib -ldnnl \
//       -Wl,-rpath,$PWD/.venv/lib -o build/cpu_slab_probe && GOMP_SPINCOUNT=1000 build/cpu_slab_probe [cold [MB]]
#include <dnnl.hpp>
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string>
using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
engine eng(engine::kind::cpu, 0);

struct conv {
  primitive p; memory::desc src, wt, dst; memory w, b, scratch; std::string impl;
  // H_in rows of input, pad top/bottom given, produces H_out rows
  conv(int ic, int oc, int g, int k, int s, int hin, int win, int pt, int pb, int hout, int wout, bool relu6,
       std::vector<float>& wdata, std::vector<float>& bdata) {
    src = memory::desc({1, ic, hin, win}, dt::f32, tag::acdb);
    dst = memory::desc({1, oc, hout, wout}, dt::f32, tag::acdb);
    memory::dims wd = g > 1 ? memory::dims{g, oc / g, ic / g, k, k} : memory::dims{oc, ic, k, k};
    memory::desc wany(wd, dt::f32, tag::any);
    memory::desc bd({oc}, dt::f32, tag::a);
    post_ops po; if (relu6) po.append_eltwise(algorithm::eltwise_clip_v2, 0.f, 6.f);
    primitive_attr attr; attr.set_post_ops(po);
    attr.set_scratchpad_mode(scratchpad_mode::user);
    int pl = k / 2;
    convolution_forward::primitive_desc pd(eng, prop_kind::forward_inference, algorithm::convolution_direct, src, wany, bd, dst,
        {s, s}, {0, 0}, {pt, pl}, {pb, pl}, attr);
    if (g > 1) { // prefer jit_dw
      std::string im = pd.impl_info_str();
      if (im.rfind("brdgmm_dw:", 0) == 0) {
        std::string want = "jit_dw:" + im.substr(10);
        auto c = pd; bool ok = false;
        while (pd.next_impl()) if (pd.impl_info_str() == want) { ok = true; break; }
        if (!ok) pd = c;
      }
    }
    impl = pd.impl_info_str();
    memory wu(memory::desc(wd, dt::f32, g > 1 ? tag::goihw : tag::oihw), eng, wdata.data());
    w = memory(pd.weights_desc(), eng);
    stream st(eng); reorder(wu, w).execute(st, wu, w); st.wait();
    b = memory(bd, eng, bdata.data());
    scratch = memory(pd.scratchpad_desc(), eng);
    p = convolution_forward(pd);
  }
  void run(stream& st, float* x, float* y) {
    memory xm(src, eng, x), ym(dst, eng, y);
    p.execute(st, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, scratch}});
  }
};

int main(int argc, char** argv) {
  int nthr = 2;
  std::vector<float> w1(96 * 16), b1(96), w2(96 * 9), b2(96), w3(24 * 96), b3(24);
  for (auto* v : {&w1, &b1, &w2, &b2, &w3, &b3}) for (auto& x : *v) x = (rand() % 1000) / 1000.f - 0.5f;
  std::vector<float> in(112 * 112 * 16), t1(112 * 112 * 96), t2(56 * 56 * 96), out(56 * 56 * 24), out2(56 * 56 * 24);
  for (auto& x : in) x = (rand() % 1000) / 500.f - 1;
  std::vector<float> sweep((argc > 2 ? atoi(argv[2]) : 64) * (1 << 20) / 4);
  // full-size primitives, created with max threads 2
  omp_set_num_threads(nthr);
  conv C(16, 96, 1, 1, 1, 112, 112, 0, 0, 112, 112, true, w1, b1);
  conv A(96, 96, 96, 3, 2, 112, 112, 1, 1, 56, 56, true, w2, b2);
  conv B(96, 24, 1, 1, 1, 56, 56, 0, 0, 56, 56, false, w3, b3);
  // band primitives created with 1 thread
  omp_set_num_threads(1);
  // thread 0: C rows 0..55 (56 rows), A out rows 0..27 from input rows 0..55 with pad top 1 bottom 0, B rows 0..27
  // thread 1: C rows 55..111 (57 rows), A out rows 28..55 from input rows 55..111 pad 0/0, B rows 28..55
  conv C0(16, 96, 1, 1, 1, 56, 112, 0, 0, 56, 112, true, w1, b1), C1(16, 96, 1, 1, 1, 57, 112, 0, 0, 57, 112, true, w1, b1);
  conv A0(96, 96, 96, 3, 2, 56, 112, 1, 0, 28, 56, true, w2, b2), A1(96, 96, 96, 3, 2, 57, 112, 0, 0, 28, 56, true, w2, b2);
  conv B0(96, 24, 1, 1, 1, 28, 56, 0, 0, 28, 56, false, w3, b3), B1(96, 24, 1, 1, 1, 28, 56, 0, 0, 28, 56, false, w3, b3);
  conv C1t(16, 96, 1, 1, 1, 112, 112, 0, 0, 112, 112, true, w1, b1);
  conv A1t(96, 96, 96, 3, 2, 112, 112, 1, 1, 56, 56, true, w2, b2);
  conv B1t(96, 24, 1, 1, 1, 56, 56, 0, 0, 56, 56, false, w3, b3);
  omp_set_num_threads(nthr);
  printf("impl C %s A %s B %s | C0 %s A0 %s B0 %s\n", C.impl.c_str(), A.impl.c_str(), B.impl.c_str(), C0.impl.c_str(), A0.impl.c_str(), B0.impl.c_str());
  std::vector<float> t1a(57 * 112 * 96), t1b(57 * 112 * 96), t2a(28 * 56 * 96), t2b(28 * 56 * 96);
  stream st(eng);
  auto base = [&] { C.run(st, in.data(), t1.data()); A.run(st, t1.data(), t2.data()); B.run(st, t2.data(), out.data()); st.wait(); };
  stream streams[2] = {stream(eng), stream(eng)};   // one per thread
  auto slab = [&] {
#pragma omp parallel num_threads(2)
    {
      stream& s = streams[omp_get_thread_num()];
      if (omp_get_thread_num() == 0) {
        C0.run(s, in.data(), t1a.data()); A0.run(s, t1a.data(), t2a.data()); B0.run(s, t2a.data(), out2.data());
      } else {
        C1.run(s, in.data() + 55 * 112 * 16, t1b.data()); A1.run(s, t1b.data(), t2b.data()); B1.run(s, t2b.data(), out2.data() + 28 * 56 * 24);
      }
      s.wait();
    }
  };
  double tt[2][3];
  auto one = [&] { C1t.run(st, in.data(), t1.data()); A1t.run(st, t1.data(), t2.data()); B1t.run(st, t2.data(), out.data()); st.wait(); };
  auto slabt = [&] {
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num();
      stream& s = streams[t];
      auto c0 = std::chrono::steady_clock::now();
      if (t == 0) C0.run(s, in.data(), t1a.data()); else C1.run(s, in.data() + 55 * 112 * 16, t1b.data());
      auto c1 = std::chrono::steady_clock::now();
      if (t == 0) A0.run(s, t1a.data(), t2a.data()); else A1.run(s, t1b.data(), t2b.data());
      auto c2 = std::chrono::steady_clock::now();
      if (t == 0) B0.run(s, t2a.data(), out2.data()); else B1.run(s, t2b.data(), out2.data() + 28 * 56 * 24);
      auto c3 = std::chrono::steady_clock::now();
      tt[t][0] = std::chrono::duration<double, std::micro>(c1 - c0).count();
      tt[t][1] = std::chrono::duration<double, std::micro>(c2 - c1).count();
      tt[t][2] = std::chrono::duration<double, std::micro>(c3 - c2).count();
    }
  };
  base(); slab();
  double md = 0; for (size_t i = 0; i < out.size(); ++i) md = std::max(md, (double)std::abs(out[i] - out2[i]));
  printf("max diff %g\n", md);
  if (argc > 1 && std::string(argv[1]) == "dirty") {
    // Before each run both threads write over the block's buffers, as the layers before it do to
    // the arena: "other" has each thread dirty the half of t1 and t2 that the other thread writes
    // first when oneDNN splits by rows, "own" the half it writes itself; the slab variant's band
    // buffers are each thread's own (what a slab executor would keep).
    auto dirty = [&](bool swap) {
#pragma omp parallel num_threads(2)
      {
        int t = omp_get_thread_num(), h = swap ? 1 - t : t;
        for (auto* v : {&t1, &t2}) std::fill(v->begin() + v->size() / 2 * h, v->begin() + v->size() / 2 * (h + 1), 1.f);
        for (auto* v : t == 0 ? std::initializer_list<std::vector<float>*>{&t1a, &t2a} : std::initializer_list<std::vector<float>*>{&t1b, &t2b})
          std::fill(v->begin(), v->end(), 1.f);
      }
    };
    for (int round = 0; round < 4; ++round)
      for (int v = 0; v < 3; ++v) {
        std::vector<double> ts;
        for (int i = 0; i < 300; ++i) {
          dirty(v == 0);
          auto t0 = std::chrono::steady_clock::now();
          if (v == 1) slab(); else base();
          ts.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(ts.begin(), ts.end());
        printf("%s: median %.1f us min %.1f\n", v == 0 ? "onednn, other's lines" : v == 1 ? "slab, own lines" : "onednn, own lines", ts[ts.size() / 2], ts[0]);
      }
    return 0;
  }
  bool cold = argc > 1;
  for (int round = 0; round < 4; ++round)
  for (int v = 0; v < 4; ++v) {
    std::vector<double> ts;
    for (int i = 0; i < 300; ++i) {
      if (cold) { for (size_t j = 0; j < sweep.size(); j += 16) sweep[j] += 1; }
      auto t0 = std::chrono::steady_clock::now();
      if (v == 0) base(); else if (v == 1) slab(); else if (v == 2) one(); else slabt();
      ts.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ts.begin(), ts.end());
    if (v == 3) printf("  last slab per thread C/A/B: t0 %.0f %.0f %.0f t1 %.0f %.0f %.0f\n", tt[0][0], tt[0][1], tt[0][2], tt[1][0], tt[1][1], tt[1][2]);
    printf("%s: median %.1f us min %.1f\n", v == 0 ? "onednn" : v == 1 ? "slab" : v == 2 ? "1thread" : "slab-timed", ts[ts.size() / 2], ts[0]);
  }
}
