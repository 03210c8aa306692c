// How oneDNN's reorders between kiln's layouts scale from one thread to two (docs/performance.md, cpu
// part): each reorder created on N threads (a oneDNN reorder runs with the threads it was created
// with), run 500 times warm, median. On a quiet machine the image models' 1x3x224x224 NCHW ->
// channels-last input reorder takes the same on one thread as on two (22-23 us); measured while
// another process kept the second core busy, two threads took 72-121 us, which is where the
// idea of running small reorders on one thread came from (tried and reverted: reorders of 64 or
// more channels at 56x56 are 1.6-2x faster on two threads).
//   g++ -O2 -fopenmp -std=c++17 bench/cpu_reorder_probe.cpp -I.venv/include -L.venv/lib -ldnnl \
//       -Wl,-rpath,$PWD/.venv/lib -o build/cpu_reorder_probe && GOMP_SPINCOUNT=1000 build/cpu_reorder_probe
#include <dnnl.hpp>
#include <cstdio>
#include <chrono>
#include <vector>
#include <algorithm>
#include <cstring>
#include <omp.h>
using namespace dnnl; using tag = memory::format_tag; using dt = memory::data_type;
int main() {
  engine eng(engine::kind::cpu, 0); stream st(eng);
  struct C { memory::dims d; tag f, t; };
  for (auto c : {C{{1,3,224,224}, tag::abcd, tag::acdb}, C{{1,3,448,448}, tag::abcd, tag::acdb}, C{{1,64,56,56}, tag::abcd, tag::acdb},
                 C{{1,256,56,56}, tag::abcd, tag::acdb}, C{{1,64,56,56}, tag::acdb, tag::abcd}, C{{1,4,128,32}, tag::abcd, tag::acbd}, C{{1,3,64,64}, tag::abcd, tag::acdb},
                 C{{1,32,56,56}, tag::abcd, tag::acdb}, C{{1,16,56,56}, tag::abcd, tag::acdb}, C{{1,32,28,28}, tag::abcd, tag::acdb},
                 C{{1,8,128,128}, tag::abcd, tag::acdb}, C{{1,3,128,128}, tag::abcd, tag::acdb}, C{{1,12,128,64}, tag::abcd, tag::acbd}}) {
    memory a(memory::desc(c.d, dt::f32, c.f), eng), b(memory::desc(c.d, dt::f32, c.t), eng);
    memset(a.get_data_handle(), 0, a.get_desc().get_size());
    double med[3];
    for (int n : {1, 2}) {
      omp_set_num_threads(n);
      reorder r(a, b);
      omp_set_num_threads(2);
      std::vector<double> ts;
      for (int i = 0; i < 500; ++i) { auto t0 = std::chrono::steady_clock::now(); r.execute(st, a, b); st.wait(); ts.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count()); }
      std::sort(ts.begin(), ts.end()); med[n] = ts[250];
    }
    printf("%ldx%ldx%ldx%ld %d->%d: 1 thread %.1f us, 2 threads %.1f us\n", c.d[0], c.d[1], c.d[2], c.d[3], (int)c.f, (int)c.t, med[1], med[2]);
  }
}
