/* rad_quant.h: the quantiser contract, for rad-convert.
 *
 *   int                     rad_quant_count(void);
 *   const RadQuantizerInfo* rad_quant_at(int i);
 *
 * For each weight a recipe rule picks: `encoding` says what would be written, the architecture
 * declares against it, then the weight arrives in row blocks (so a huge table streams) and
 * `quantize` writes canonical planes only. Two plugins naming one quantiser are refused. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_DETAIL_QUANT_CORE_H
#define RADIANCE_DETAIL_QUANT_CORE_H

#include "abi_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct RadQuantOption {
    const char* key;
    int32_t type; /* RAD_P_INT, RAD_P_F64 or RAD_P_STR (rad_plugin.h) */
    int32_t _pad;
    const char* deflt; /* default, as text */
    const char* doc;
} RadQuantOption;

/* A weight as the quantiser sees it: logical f32 rows [r0, r0+n_rows) of [rows x cols]. */
typedef struct RadQuantInput {
    const char* name;
    int64_t rows, cols;
    int64_t r0, n_rows;
    const float* data;           /* n_rows * cols values, row-major */
    const char* const* opt_keys; /* the recipe's options for this weight */
    const char* const* opt_vals;
    int32_t n_opts;
    int32_t _pad;
} RadQuantInput;

typedef int (*RadQuantEncodingFn)(const char* name, int64_t rows, int64_t cols, const char* const* opt_keys, const char* const* opt_vals,
                                  int n_opts, RadEncoding* out);
typedef int64_t (*RadQuantRowBlockFn)(const RadEncoding* enc, int64_t rows, int64_t cols);
/* Writes the planes of the input's rows: planes[k] points at plane k's bytes for row block r0. */
typedef int (*RadQuantizeFn)(const RadEncoding* enc, const RadQuantInput* in, void* const* planes);
/* Decodes rows of a scheme of its own to f32; RAD_E_UNSUPPORTED for an encoding it did not write. */
typedef int (*RadQuantDecodeFn)(const RadEncoding* enc, int64_t rows, int64_t cols, int64_t r0, int64_t n_rows, const void* const* planes,
                                float* out);

typedef struct RadQuantizerInfo {
    const char* name; /* what a recipe names */
    const char* doc;
    const RadQuantOption* options;
    int32_t n_options;
    int32_t _pad;
    RadQuantEncodingFn encoding;
    RadQuantRowBlockFn row_block; /* rows per quantize() call; 0 = whole weight */
    RadQuantizeFn quantize;
    RadQuantDecodeFn decode; /* optional, only for a scheme of its own */
} RadQuantizerInfo;

typedef int (*RadQuantCountFn)(void);
typedef const RadQuantizerInfo* (*RadQuantAtFn)(int i);

#ifdef __cplusplus
}
#endif
#endif
