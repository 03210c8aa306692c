/* Loads an ONNX classifier with kiln's C API, runs it on the default target (cpu without a GPU)
 * with a fixed input and prints the top-5 classes of its first output.
 * Usage: kiln_classify MODEL.onnx [DIM=N ...]   (DIM=N sizes a symbolic dim, e.g. batch=1) */
#include <kiln/kiln.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define CHECK(call)                                                                               \
    do {                                                                                          \
        kiln_status s_ = (call);                                                                  \
        if (s_ != KILN_STATUS_SUCCESS) {                                                          \
            fprintf(stderr, "%s: %s: %s\n", #call, kiln_status_string(s_), kiln_last_error_message()); \
            goto done;                                                                            \
        }                                                                                         \
    } while (0)

int main(int argc, char** argv) {
    int rc = 1;
    kiln_onnx_options_t opts = NULL;
    kiln_program_t prog = NULL;
    kiln_shape_t in_shape = NULL, out_shape = NULL;
    kiln_argument_t in_arg = NULL, out_arg = NULL;
    float *in = NULL, *out = NULL;
    const char* in_name = NULL;
    const char* out_name = NULL;
    const size_t* lens = NULL;
    size_t n_in = 0, n_out = 0, in_elems = 0, out_elems = 0, ndim = 0, i, k;
    kiln_dtype t;
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.onnx [DIM=N ...]\n", argv[0]);
        return 2;
    }
    CHECK(kiln_onnx_options_create(&opts));
    for (i = 2; i < (size_t)argc; ++i) {
        char* eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "expected DIM=N, got '%s'\n", argv[i]);
            goto done;
        }
        *eq = '\0';
        CHECK(kiln_onnx_options_set_dim_param(opts, argv[i], strtoul(eq + 1, NULL, 10), strtoul(eq + 1, NULL, 10)));
    }
    CHECK(kiln_parse_onnx_file(&prog, argv[1], opts));
    CHECK(kiln_program_compile(prog, NULL, NULL));   /* the default target: cpu without a GPU */
    CHECK(kiln_program_input_count(prog, &n_in));
    CHECK(kiln_program_output_count(prog, &n_out));
    if (n_in != 1 || n_out < 1) {
        fprintf(stderr, "expected a model with one input, got %zu inputs and %zu outputs\n", n_in, n_out);
        goto done;
    }
    CHECK(kiln_program_input_name(prog, 0, &in_name));
    CHECK(kiln_program_input_shape(prog, 0, &in_shape));
    CHECK(kiln_shape_type(in_shape, &t));
    if (t != KILN_FLOAT32) {
        fprintf(stderr, "expected a float input, '%s' is %s\n", in_name, kiln_dtype_name(t));
        goto done;
    }
    CHECK(kiln_shape_elements(in_shape, &in_elems));
    in = malloc(in_elems * sizeof(float));
    for (i = 0; i < in_elems; ++i) in[i] = (float)sin(0.01 * (double)i);
    CHECK(kiln_argument_create(&in_arg, in_shape, in));

    CHECK(kiln_program_output_name(prog, 0, &out_name));
    CHECK(kiln_program_output_shape(prog, 0, &out_shape));
    CHECK(kiln_shape_elements(out_shape, &out_elems));
    CHECK(kiln_shape_ndim(out_shape, &ndim));
    CHECK(kiln_shape_lens(out_shape, &lens));
    out = malloc(out_elems * sizeof(float));
    CHECK(kiln_argument_create(&out_arg, out_shape, out));
    if (n_out != 1) {
        fprintf(stderr, "expected one output, got %zu\n", n_out);
        goto done;
    }
    CHECK(kiln_program_run(prog, &in_name, &in_arg, 1, &out_arg, 1));

    printf("%s: %zu classes; top-5:\n", out_name, ndim ? lens[ndim - 1] : 1);
    for (k = 0; k < 5 && k < out_elems; ++k) {
        size_t best = 0;
        for (i = 1; i < out_elems; ++i)
            if (out[i] > out[best]) best = i;
        printf("  %zu: class %zu  %.6f\n", k + 1, best, out[best]);
        out[best] = -INFINITY;
    }
    rc = 0;
done:
    kiln_argument_destroy(out_arg);
    kiln_argument_destroy(in_arg);
    kiln_shape_destroy(out_shape);
    kiln_shape_destroy(in_shape);
    kiln_program_destroy(prog);
    kiln_onnx_options_destroy(opts);
    free(out);
    free(in);
    return rc;
}
