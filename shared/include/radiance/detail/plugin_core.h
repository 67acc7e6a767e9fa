/* rad_plugin.h: the kernel-library contract.
 *
 * A kernel library exports op schemas (what an op means: docs/OPS.md owns the names) and kernel
 * rows (one implementation each, with the band of parameters it serves). The engine believes the
 * constraints: a row that claims M <= 2048 but is correct to 64 is wrong at concurrency.
 *
 *   int                  rad_kernel_schema_count(void);
 *   const RadOpSchema*   rad_kernel_schema_at(int i);
 *   int                  rad_kernel_count(void);
 *   const RadKernelInfo* rad_kernel_at(int i);
 *
 * The numeric contract of the reference: f32 accumulation, IEEE round-to-nearest-even narrowing,
 * no FMA and no reassociation. The conversions below define that narrowing. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_DETAIL_PLUGIN_CORE_H
#define RADIANCE_DETAIL_PLUGIN_CORE_H

#include "abi_core.h"
#include <math.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- op schemas ------------------------------------------------------------------------- */

typedef enum RadParamType { RAD_P_INT = 1, RAD_P_F64 = 2, RAD_P_STR = 3 } RadParamType;
typedef enum RadParamNeed { RAD_REQUIRED = 0, RAD_OPTIONAL = 1, RAD_DERIVED = 2 } RadParamNeed;
typedef enum RadParamRole {
    RAD_PROLE_NONE = 0,
    RAD_PROLE_SEQ_CHUNK = 1, /* the scheduler must cut steps on this parameter */
    RAD_PROLE_CAPACITY = 2   /* a count the kernel only bounds itself by */
} RadParamRole;

typedef struct RadParamSpec {
    const char* name;
    int32_t type; /* RadParamType */
    int32_t need; /* RadParamNeed */
    int32_t role; /* RadParamRole */
} RadParamSpec;

typedef enum RadOperandRole {
    RAD_OPD_IN = 1,
    RAD_OPD_OUT = 2,
    RAD_OPD_INOUT = 3,
    RAD_OPD_WEIGHT = 4,
    RAD_OPD_WTAB = 5 /* a weight table read by index (an embedding) */
} RadOperandRole;

typedef struct RadOperandSpec {
    const char* name;
    int32_t role;     /* RadOperandRole */
    int32_t optional; /* 1: may be absent, passed as a null RadTensor.data */
} RadOperandSpec;

typedef struct RadOpSchema {
    const char* name;
    const RadParamSpec* params;
    int32_t n_params;
    const RadOperandSpec* operands;
    int32_t n_operands;
    const char* doc; /* what it computes, for a human */
} RadOpSchema;

/* ---- kernel rows: constraints ------------------------------------------------------------ */

typedef enum RadConstraintOp {
    RAD_C_EQ = 1,  /* key == value (ints) */
    RAD_C_LE = 2,  /* key <= value */
    RAD_C_GE = 3,  /* key >= value */
    RAD_C_DIV = 4, /* key % value == 0 */
    RAD_C_IN = 5   /* key (a string, or an int printed in decimal) is one of the words of `set` */
} RadConstraintOp;

typedef struct RadConstraint {
    const char* key; /* an op parameter, or a device.* fact */
    int32_t op;      /* RadConstraintOp */
    int64_t value;
    const char* set; /* RAD_C_IN: words separated by spaces or commas */
} RadConstraint;

#define RAD_CEQ(k, v) \
    { (k), RAD_C_EQ, (int64_t)(v), 0 }
#define RAD_CLE(k, v) \
    { (k), RAD_C_LE, (int64_t)(v), 0 }
#define RAD_CGE(k, v) \
    { (k), RAD_C_GE, (int64_t)(v), 0 }
#define RAD_CDIV(k, v) \
    { (k), RAD_C_DIV, (int64_t)(v), 0 }
#define RAD_CIN(k, s) \
    { (k), RAD_C_IN, 0, (s) }

/* Facts the engine measured about the ranks' machines; matched by constraints, never by params. */
#define RAD_FACT_P2P "device.p2p"           /* 1: every rank's card reaches every other's memory */
#define RAD_FACT_GPU "device.gpu"           /* 1: rows run on a GPU of this process */
#define RAD_FACT_CC "device.cc"             /* compute capability, major*10+minor */
#define RAD_FACT_WORLD "device.world"       /* ranks in the tensor-parallel group */
#define RAD_FACT_DISTINCT "device.distinct" /* 1: every rank of the group has a card of its own */

typedef enum RadDomain { RAD_DOMAIN_HOST = 1, RAD_DOMAIN_DEVICE = 2 } RadDomain;

/* ---- collectives --------------------------------------------------------------------------- */

/* The engine's communicator for collective rows (RadArgs.comm). Host staging: `staging` is a
 * shared-memory area every rank of one host maps, `world` slots of `slot_bytes` each, slot r
 * belonging to rank r; `barrier` returns when every rank reached it (RAD_OK), or an error when
 * the group is being torn down (a peer died), which the row returns as its launch status. */
typedef struct RadComm {
    uint32_t struct_size;
    int32_t rank;
    int32_t world;
    int32_t p2p; /* device.p2p: 1 when the ranks' cards reach each other's memory */
    void* staging;
    uint64_t slot_bytes;
    int (*barrier)(struct RadComm* c);
    void* engine;      /* the engine's own state behind barrier */
    void* device_comm; /* a device library's communicator (NCCL), when one was set up */
    /* Nonzero once this generation of the group is torn down (a peer died); never blocks. A
     * device row whose sums run on the card polls it while the host waits for the queue, and
     * aborts its own transport (NCCL, peer memory) so the step fails instead of hanging. */
    int (*aborted)(struct RadComm* c);
    void* reserved[3];
} RadComm;

/* ---- launch arguments -------------------------------------------------------------------- */

typedef struct RadParam {
    const char* name;
    int32_t type; /* RadParamType */
    int32_t _pad;
    int64_t i;
    double f;
    const char* s;
} RadParam;

typedef struct RadArgs {
    const RadOpSchema* schema;
    RadTensor* t; /* operands, positional in the schema's order */
    int32_t n_t;
    int32_t n_p;
    const RadParam* p; /* parameters; the ranged one holds this launch's extent */
    void* instance;    /* what the row's init hook returned */
    void* scratch;     /* the row's scratch hook's bytes */
    uint64_t scratch_bytes;
    RadStream stream; /* the engine's queue on a device; NULL on the host */
    int32_t rank;
    int32_t world_size;
    void* comm; /* the engine's collective context for collective rows */
    void* reserved[4];
} RadArgs;

typedef int (*RadLaunchFn)(const RadArgs* a);
/* Per resolved (op, band, domain) state; `geom` carries the band's upper-bound parameters. */
typedef int (*RadInitFn)(const RadArgs* geom, void** instance);
typedef void (*RadFiniFn)(void* instance);
typedef uint64_t (*RadScratchFn)(const RadArgs* geom);
/* Layout hook: RAD_OK (own form; relayout produces it), RAD_E_UNSUPPORTED (stored as is),
 * RAD_E_DTYPE (not my encoding), RAD_E_SHAPE, or RAD_LAYOUT_ANY. */
typedef int (*RadLayoutFn)(const RadEncoding* enc, int operand, const RadArgs* geom);
typedef int (*RadRelayoutFn)(const RadEncoding* enc, int operand, const void* const* planes, void* out, uint64_t out_bytes,
                             const RadArgs* geom);

typedef struct RadKernelInfo {
    const char* name;
    const char* op; /* the schema it implements */
    const char* family;
    const char* computes; /* for a human */
    const char* shape;    /* for a human: the band it serves */
    const char* dtypes;   /* for a human */
    int32_t domain;       /* RadDomain */
    int32_t priority;     /* breaks ties within one plugin, highest first */
    const RadConstraint* constraints;
    int32_t n_constraints;
    int32_t _pad;
    RadLaunchFn launch;
    RadInitFn init;
    RadFiniFn fini;
    RadScratchFn scratch;
    RadLayoutFn layout;
    RadRelayoutFn relayout;
    const char* replaces; /* the exact chain of conventional ops one launch computes, or NULL */
    void* reserved[4];
} RadKernelInfo;

typedef int (*RadSchemaCountFn)(void);
typedef const RadOpSchema* (*RadSchemaAtFn)(int i);
typedef int (*RadKernelCountFn)(void);
typedef const RadKernelInfo* (*RadKernelAtFn)(int i);
typedef int (*RadKernelFlagFn)(int i); /* rad_kernel_concurrent / _collective / _reference */
/* rad_kernel_set_deterministic(on) (optional): `--deterministic` (docs/OPS.md general rules). With
 * on = 1 every row of the library must give a row the same bits whatever else rides in its launch,
 * however its prompt was chunked and at any thread count; RAD_OK when the library now does,
 * anything else when it cannot. The engine calls it (with 0 or 1) before planning on every
 * non-reference library that has host rows; one without it cannot run under --deterministic.
 * Process-wide: the last engine's setting holds. Reference libraries are deterministic by
 * construction and need not export it. */
typedef int (*RadKernelSetDeterministicFn)(int on);
/* rad_kernel_queued(i) (optional, device rows): 1 when everything the row does is queued on the
 * engine's stream, with no host wait inside the launch, so a recorded graph may hold it. The
 * engine records a tensor-parallel decode step only when every collective row of the plan says
 * so (a host-staging collective waits for its peers on the host and says 0). */

/* ---- everyday helpers (header-only: a plugin links nothing of the engine) ---------------- */

static inline const RadParam* rad_args_find(const RadArgs* a, const char* name) {
    for (int i = 0; i < a->n_p; ++i)
        if (strcmp(a->p[i].name, name) == 0) return &a->p[i];
    return 0;
}
static inline int64_t rad_args_geti_or(const RadArgs* a, const char* name, int64_t dflt) {
    const RadParam* p = rad_args_find(a, name);
    if (!p) return dflt;
    return p->type == RAD_P_F64 ? (int64_t)p->f : p->i;
}
static inline int64_t rad_args_geti(const RadArgs* a, const char* name) { return rad_args_geti_or(a, name, 0); }
static inline double rad_args_getf_or(const RadArgs* a, const char* name, double dflt) {
    const RadParam* p = rad_args_find(a, name);
    if (!p) return dflt;
    return p->type == RAD_P_INT ? (double)p->i : p->f;
}
static inline double rad_args_getf(const RadArgs* a, const char* name) { return rad_args_getf_or(a, name, 0.0); }
static inline const char* rad_args_gets_or(const RadArgs* a, const char* name, const char* dflt) {
    const RadParam* p = rad_args_find(a, name);
    return (p && p->type == RAD_P_STR && p->s) ? p->s : dflt;
}
/* Operand i, or NULL when absent (optional operands arrive with null data). */
static inline const RadTensor* rad_arg_in(const RadArgs* a, int i) { return (i >= 0 && i < a->n_t && a->t[i].data) ? &a->t[i] : 0; }
static inline RadTensor* rad_arg_out(const RadArgs* a, int i) { return (i >= 0 && i < a->n_t && a->t[i].data) ? &a->t[i] : 0; }
static inline int64_t rad_tensor_rows(const RadTensor* t) { return t->rank > 0 ? t->shape[0] : 1; }
static inline int64_t rad_tensor_lastdim(const RadTensor* t) { return t->rank > 0 ? t->shape[t->rank - 1] : 1; }
static inline int64_t rad_tensor_elems(const RadTensor* t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; ++i) n *= t->shape[i];
    return n;
}
/* Bytes between rows of dim 0: the stored pitch, or the dense pitch of the trailing dims. */
static inline int64_t rad_tensor_row_pitch(const RadTensor* t) {
    if (t->row_pitch) return t->row_pitch;
    int64_t inner = 1;
    for (int i = 1; i < t->rank; ++i) inner *= t->shape[i];
    return (int64_t)rad_row_bytes(t->dtype, (uint64_t)inner);
}

/* ---- conversions: the reference narrowing is IEEE round-to-nearest-even ------------------ */

static inline uint32_t rad_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float rad_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float rad_bf16_to_f32(uint16_t h) { return rad_bits_f32((uint32_t)h << 16); }
static inline uint16_t rad_f32_to_bf16(float f) {
    uint32_t u = rad_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static inline float rad_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0) {
        if (man == 0) return rad_bits_f32(sign);
        float v = (float)man * (1.0f / 16777216.0f); /* subnormal: man * 2^-24 */
        return sign ? -v : v;
    }
    if (exp == 31) return rad_bits_f32(sign | 0x7f800000u | (man << 13));
    return rad_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}
static inline uint16_t rad_f32_to_f16(float f) {
    uint32_t u = rad_f32_bits(f), sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to infinity */
    if (a < 0x38800000u) {                                   /* subnormal or zero in f16 */
        float v = rad_bits_f32(a) * 16777216.0f;             /* exact: scale by 2^24 */
        uint32_t m = (uint32_t)v;
        float rem = v - (float)m;
        if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
        return (uint16_t)(sign | m);
    }
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - (112u << 23);
    return (uint16_t)(sign | (r >> 13));
}

/* Read element `i` of a dense plane of dtype `dt` as f32 (float dtypes and integers). */
static inline float rad_load_f32(int dt, const void* base, int64_t i) {
    switch (dt) {
    case RAD_F32: return ((const float*)base)[i];
    case RAD_BF16: return rad_bf16_to_f32(((const uint16_t*)base)[i]);
    case RAD_F16: return rad_f16_to_f32(((const uint16_t*)base)[i]);
    case RAD_F64: return (float)((const double*)base)[i];
    case RAD_I32: return (float)((const int32_t*)base)[i];
    case RAD_I8: return (float)((const int8_t*)base)[i];
    case RAD_U8: return (float)((const uint8_t*)base)[i];
    default: return NAN;
    }
}
static inline void rad_store_f32(int dt, void* base, int64_t i, float v) {
    switch (dt) {
    case RAD_F32: ((float*)base)[i] = v; break;
    case RAD_BF16: ((uint16_t*)base)[i] = rad_f32_to_bf16(v); break;
    case RAD_F16: ((uint16_t*)base)[i] = rad_f32_to_f16(v); break;
    case RAD_F64: ((double*)base)[i] = (double)v; break;
    default: break;
    }
}
/* Raw bits of element `i` of a sub-byte or byte plane row (lowest bits first). */
static inline uint32_t rad_load_bits(int dt, const void* row, int64_t i) {
    int bits = rad_dtype_bits(dt);
    uint64_t bit = (uint64_t)i * (uint64_t)bits;
    const uint8_t* p = (const uint8_t*)row + bit / 8;
    uint32_t v = 0;
    for (int k = 0; k < (bits + (int)(bit % 8) + 7) / 8 && k < 5; ++k) v |= (uint32_t)p[k] << (8 * k);
    v >>= bit % 8;
    return bits >= 32 ? v : v & ((1u << bits) - 1u);
}
static inline void rad_store_bits(int dt, void* row, int64_t i, uint32_t v) {
    int bits = rad_dtype_bits(dt);
    for (int b = 0; b < bits; ++b) {
        uint64_t bit = (uint64_t)i * (uint64_t)bits + (uint64_t)b;
        uint8_t* p = (uint8_t*)row + bit / 8;
        uint8_t m = (uint8_t)(1u << (bit % 8));
        if ((v >> b) & 1u)
            *p |= m;
        else
            *p &= (uint8_t)~m;
    }
}

#ifdef __cplusplus
}
#endif
#endif
