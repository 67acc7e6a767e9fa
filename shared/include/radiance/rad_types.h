/* rad_types.h: the scalar vocabulary every plugin and the engine share.
 *
 * Plain C so any compiler can build a plugin against it. Every struct here is part of the ABI:
 * its size and field offsets enter the layout fingerprint (rad_abi.h), so a change to one
 * without a bump of RAD_ABI_VERSION is still caught at load. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_RAD_TYPES_H
#define RADIANCE_RAD_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. 0 is success; negative values are errors a caller can name. */
typedef enum RadStatus {
    RAD_OK = 0,
    RAD_E_UNSUPPORTED = -1, /* declines: this machine, this encoding, this shape */
    RAD_E_DTYPE = -2,       /* an operand's element type is not one this row serves */
    RAD_E_SHAPE = -3,       /* an extent is outside what the row serves (zero rows included) */
    RAD_E_ARG = -4,         /* a required parameter is missing or malformed */
    RAD_E_NOMEM = -5,
    RAD_E_IO = -6,
    RAD_E_FORMAT = -7, /* bytes that do not parse (a container, a plane) */
    RAD_E_ABI = -8,    /* ABI version or layout disagreement */
    RAD_E_INTERNAL = -9,
    RAD_LAYOUT_ANY = 1 /* layout hook: reads the bytes without interpreting them */
} RadStatus;

/* Element types of planes, tensors and operands. Values are stored in containers: never
 * renumber, only append. Sub-byte types pack along the row, lowest bits first. */
typedef enum RadDType {
    RAD_DT_NONE = 0,
    RAD_F32 = 1,
    RAD_F16 = 2,
    RAD_BF16 = 3,
    RAD_F64 = 4,
    RAD_I8 = 5,
    RAD_U8 = 6,
    RAD_I16 = 7,
    RAD_I32 = 8,
    RAD_I64 = 9,
    RAD_U32 = 10,
    RAD_FP8_E4M3 = 11, /* OCP e4m3fn: bias 7, max 448, no infinities */
    RAD_FP8_E5M2 = 12,
    RAD_U4 = 13,
    RAD_I4 = 14,
    RAD_U2 = 15,
    RAD_U1 = 16,
    RAD_U6 = 17,
    RAD_FP4_E2M1 = 18,
    RAD_DT_COUNT = 19
} RadDType;

/* Bits per element of a dtype (0 for unknown). */
static inline int rad_dtype_bits(int dt) {
    switch (dt) {
    case RAD_F32:
    case RAD_I32:
    case RAD_U32: return 32;
    case RAD_F16:
    case RAD_BF16:
    case RAD_I16: return 16;
    case RAD_F64:
    case RAD_I64: return 64;
    case RAD_I8:
    case RAD_U8:
    case RAD_FP8_E4M3:
    case RAD_FP8_E5M2: return 8;
    case RAD_U6: return 6;
    case RAD_U4:
    case RAD_I4:
    case RAD_FP4_E2M1: return 4;
    case RAD_U2: return 2;
    case RAD_U1: return 1;
    default: return 0;
    }
}

static inline const char* rad_dtype_name(int dt) {
    switch (dt) {
    case RAD_F32: return "f32";
    case RAD_F16: return "f16";
    case RAD_BF16: return "bf16";
    case RAD_F64: return "f64";
    case RAD_I8: return "i8";
    case RAD_U8: return "u8";
    case RAD_I16: return "i16";
    case RAD_I32: return "i32";
    case RAD_I64: return "i64";
    case RAD_U32: return "u32";
    case RAD_FP8_E4M3: return "fp8_e4m3";
    case RAD_FP8_E5M2: return "fp8_e5m2";
    case RAD_U4: return "u4";
    case RAD_I4: return "i4";
    case RAD_U2: return "u2";
    case RAD_U1: return "u1";
    case RAD_U6: return "u6";
    case RAD_FP4_E2M1: return "fp4_e2m1";
    default: return "?";
    }
}

/* Bytes of one row of `cols` elements: sub-byte rows start on a byte. */
static inline uint64_t rad_row_bytes(int dt, uint64_t cols) { return (cols * (uint64_t)rad_dtype_bits(dt) + 7u) / 8u; }

#define RAD_MAX_RANK 4

/* A view of an operand. `shape` is the extent the caller narrowed it to (usually smaller than
 * the buffer); `row_pitch` is bytes between consecutive rows of dim 0 (0 = dense).
 * An absent optional operand has data == NULL. */
typedef struct RadTensor {
    void* data;
    int32_t dtype;
    int32_t rank;
    int64_t shape[RAD_MAX_RANK];
    int64_t row_pitch;
} RadTensor;

/* Opaque handle for the engine's execution queue on a device (NULL on the host). */
typedef struct RadStreamImpl* RadStream;

#ifdef __cplusplus
}
#endif
#endif
