// LD_PRELOAD library for bench/cpu_regions.py: times every OpenMP parallel region that oneDNN
// opens (it calls libgomp's GOMP_parallel_start / GOMP_parallel_end) and every
// dnnl_primitive_execute call kiln makes, to see where a multi-threaded run spends the time that
// is not kernel work: the serial gap between two primitives, how late the pool's other thread
// enters a region (it may have gone to sleep), and how long the calling thread waits at the join.
// Records go to the file named by KILN_REGIONS_OUT when the process exits. Two threads assumed
// (the calling one and one more): with more, the last worker to enter or leave is recorded.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { records = 1 << 16 };

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

typedef void (*region_fn)(void*);

// The region in flight (oneDNN does not nest them: a nested one is passed through).
static struct {
    region_fn fn;
    void* data;
    double start, started, worker_in, worker_out;
} cur;
static int depth;
static double last_end, exec_out;

// Per region: gap since the previous region ended, fork (start call), worker's entry after the
// start call, the calling thread's work, the worker's work, the join (end call).
static float region_rec[records][6];
static long nregions;
// Per primitive execute: the gap since the previous execute returned (kiln's side of the gap).
static float exec_rec[records];
static long nexecs;

static void worker_body(void* p) {
    (void)p;
    double in = now_us();
    cur.fn(cur.data);
    if (omp_get_thread_num() != 0) {
        cur.worker_in = in;
        cur.worker_out = now_us();
    }
}

void GOMP_parallel_start(region_fn fn, void* data, unsigned n) {
    static void (*real)(region_fn, void*, unsigned);
    if (!real) real = (void (*)(region_fn, void*, unsigned))dlsym(RTLD_NEXT, "GOMP_parallel_start");
    if (depth++) {
        real(fn, data, n);
        return;
    }
    cur.fn = fn;
    cur.data = data;
    cur.worker_in = cur.worker_out = 0;
    cur.start = now_us();
    real(worker_body, NULL, n);   // the calling thread runs fn itself after this returns
    cur.started = now_us();
}

void GOMP_parallel_end(void) {
    static void (*real)(void);
    if (!real) real = (void (*)(void))dlsym(RTLD_NEXT, "GOMP_parallel_end");
    if (--depth) {
        real();
        return;
    }
    double joined = now_us();
    real();
    double end = now_us();
    float* r = region_rec[nregions++ % records];
    r[0] = last_end > 0 ? cur.start - last_end : 0;
    r[1] = cur.started - cur.start;
    r[2] = cur.worker_in > 0 ? cur.worker_in - cur.start : -1;
    r[3] = joined - cur.started;
    r[4] = cur.worker_in > 0 ? cur.worker_out - cur.worker_in : -1;
    r[5] = end - joined;
    last_end = end;
}

int dnnl_primitive_execute(void* prim, void* stream, int nargs, const void* args) {
    static int (*real)(void*, void*, int, const void*);
    if (!real) real = (int (*)(void*, void*, int, const void*))dlsym(RTLD_NEXT, "dnnl_primitive_execute");
    double in = now_us();
    if (exec_out > 0) exec_rec[nexecs % records] = in - exec_out;
    ++nexecs;
    int status = real(prim, stream, nargs, args);
    exec_out = now_us();
    return status;
}

__attribute__((destructor)) static void write_records(void) {
    const char* path = getenv("KILN_REGIONS_OUT");
    if (!path) return;
    FILE* f = fopen(path, "w");
    if (!f) return;
    for (long i = nregions > records ? nregions - records : 0; i < nregions; ++i) {
        float* r = region_rec[i % records];
        fprintf(f, "region %.3f %.3f %.3f %.3f %.3f %.3f\n", r[0], r[1], r[2], r[3], r[4], r[5]);
    }
    for (long i = nexecs > records ? nexecs - records : 0; i < nexecs; ++i)
        fprintf(f, "execute %.3f\n", exec_rec[i % records]);
    fclose(f);
}
