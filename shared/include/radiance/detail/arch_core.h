/* arch/rad_arch.h: the architecture-plugin contract.
 *
 * A plugin declares a model in two phases. rad_arch_declare names every weight, buffer, KV group
 * and op once, against the model's metadata and the deployment (RadBuildCtx); rad_arch_step then
 * only issues handles obtained at declare: it may not allocate and may not synchronise. The engine
 * picks a plugin by the exact (rad_arch_id, rad_arch_quant) pair, with no fallback.
 *
 * The plugin links nothing of the engine: RadBuilder and RadCtx carry function tables, and the
 * inline wrappers below (rad_decl_weight, rad_issue, ...) call through them. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_DETAIL_ARCH_CORE_H
#define RADIANCE_DETAIL_ARCH_CORE_H

#include "plugin_core.h"
#include "quant_core.h"
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t rad_weight;
typedef int32_t rad_buf;
typedef int32_t rad_op;
typedef int32_t rad_kv;
#define RAD_NULL_HANDLE (-1)

/* ---- metadata ---------------------------------------------------------------------------- */

typedef struct RadModelMeta {
    uint32_t struct_size;
    int32_t n_layers;
    const char* arch_id;
    const char* name;
    const char* quant;
    int64_t n_embd;
    int64_t n_head;
    int64_t n_head_kv;
    int64_t head_dim; /* read, never derived: hidden / heads is wrong on several families */
    int64_t n_ff;
    int64_t n_vocab;
    int64_t n_ctx_train;
    int64_t n_expert;
    int64_t n_expert_used;
    double rms_eps;
    double rope_theta;
    /* everything else, as text: rad_meta_geti/getf/gets parse it */
    const char* const* kv_key;
    const char* const* kv_val;
    int32_t n_kv;
    int32_t _pad;
} RadModelMeta;

static inline const char* rad_meta_gets(const RadModelMeta* m, const char* key, const char* dflt) {
    for (int i = 0; i < m->n_kv; ++i)
        if (strcmp(m->kv_key[i], key) == 0) return m->kv_val[i];
    return dflt;
}
static inline int rad_meta_has(const RadModelMeta* m, const char* key) { return rad_meta_gets(m, key, 0) != 0; }
static inline int64_t rad_meta_geti(const RadModelMeta* m, const char* key, int64_t dflt) {
    const char* s = rad_meta_gets(m, key, 0);
    if (!s || !*s) return dflt;
    if (strcmp(s, "true") == 0) return 1;
    if (strcmp(s, "false") == 0) return 0;
    char* end = 0;
    long long v = strtoll(s, &end, 10);
    return (end && *end == 0) ? (int64_t)v : (int64_t)strtod(s, 0);
}
static inline double rad_meta_getf(const RadModelMeta* m, const char* key, double dflt) {
    const char* s = rad_meta_gets(m, key, 0);
    if (!s || !*s) return dflt;
    return strtod(s, 0);
}

/* ---- deployment -------------------------------------------------------------------------- */

typedef struct RadBuildCtx {
    uint32_t struct_size;
    int32_t rank;
    int32_t world_size; /* dimensions a plugin declares per rank are already divided by it */
    int32_t max_tok;    /* tokens in one step */
    int32_t max_seqs;   /* sequences in one step */
    int32_t max_ctx;    /* longest context a sequence may reach */
    int32_t max_mixed_tok;
    int32_t kv_dtype;     /* RadDType of the attention cache */
    int32_t shape_probe;  /* a sizing declare: must not touch state the real declare wrote */
    int32_t max_out_rows; /* logits rows one step may ask for (0 = the plugin's own rule) */
    int32_t act_dtype;    /* RadDType of activations the kernels exchange (RAD_F32 on the reference path) */
    int32_t reserved[13];
} RadBuildCtx;

/* ---- declarations ------------------------------------------------------------------------ */

typedef enum RadAccess {
    RAD_ACCESS_PER_TOKEN = 1,
    RAD_ACCESS_PER_REQUEST = 2,
    RAD_ACCESS_CONDITIONAL = 3,
    RAD_ACCESS_RARE = 4,
    RAD_ACCESS_VOCAB = 5
} RadAccess;

typedef enum RadShard {
    RAD_SHARD_NONE = 0, /* replicated */
    RAD_SHARD_ROW = 1,  /* split dim 0 (each row part split separately) */
    RAD_SHARD_COL = 2   /* split dim 1; the plugin adds the all-reduce that follows */
} RadShard;

typedef struct RadWeightDecl {
    int32_t dtype; /* dtype the ops read; a wider one than stored is an exact widening */
    int32_t rank;
    int64_t shape[RAD_MAX_RANK]; /* the full logical shape; the core slices per rank */
    int32_t access;              /* RadAccess */
    int32_t shard;               /* RadShard */
    int32_t group;               /* unit of movement (a layer, an expert) */
    int32_t optional;            /* absent from the container is not an error */
    int32_t n_row_parts;         /* SHARD_ROW of a stack: the widths of the stacked parts */
    int32_t row_unit;            /* SHARD_ROW: rows per unit (a head's rows; 0 = single rows). Units are never
                           * split: a part of U >= world units gives rank r units [r*U/world,
                           * (r+1)*U/world); a part of fewer units than ranks (world % U == 0) is
                           * replicated, rank r taking unit r*U/world (kv heads under wide TP). */
    const int64_t* row_parts;
    const char* source; /* view of another stored weight; NULL = the weight of its own name */
    const char* planes; /* planes of `source` to take; NULL = all */
} RadWeightDecl;

typedef enum RadBufKind {
    RAD_BUF_TRANSIENT = 1, /* liveness-analysed: may share bytes with others */
    RAD_BUF_PERSIST = 2,   /* kept across steps */
    RAD_BUF_DERIVED = 3    /* computed by the core from the batch each step (`derive` names it) */
} RadBufKind;

typedef struct RadBufDecl {
    int32_t dtype;
    int32_t rank;
    int64_t shape[RAD_MAX_RANK]; /* dim 0 is the row capacity (usually max_tok) */
    int32_t kind;                /* RadBufKind */
    int32_t _pad;
    const char* derive;
} RadBufDecl;

typedef enum RadKvKind {
    RAD_KV_FULL = 1,   /* paged per token, growing */
    RAD_KV_WINDOW = 2, /* bounded by a sliding window */
    RAD_KV_LINEAR = 3, /* per-sequence fixed state */
    RAD_KV_CONV = 4,
    RAD_KV_RING = 5
} RadKvKind;

typedef struct RadKvGroupDecl {
    int32_t kind; /* RadKvKind */
    int32_t dtype;
    int32_t n_head_kv; /* on this rank */
    int32_t head_dim;
    int32_t window;   /* RAD_KV_WINDOW: tokens kept */
    int32_t n_planes; /* 2 for K and V. A group of an 8-bit float dtype (the fp8 KV cache) also
                       * has planes 2 and 3, the K and V scales, f32 [blocks, block, n_head_kv]
                       * (rad_kv_fp8.h), which the engine adds by the dtype: pass them to
                       * attention as its k_scale / v_scale (arch/blocks/rad_block_kv.h). */
    int32_t reserved[6];
} RadKvGroupDecl;

typedef enum RadMapKind {
    RAD_MAP_COPY = 1,   /* several sources: the first present wins (a tied lm_head) */
    RAD_MAP_CONCAT = 2, /* stack all sources along dim 0 */
    RAD_MAP_TRANSPOSE = 3,
    RAD_MAP_ROWS = 4,
    RAD_MAP_COLS = 5
} RadMapKind;

typedef struct RadNameMapEntry {
    const char* target; /* the declared weight's name */
    int32_t kind;       /* RadMapKind */
    int32_t n_sources;
    const char* const* sources; /* checkpoint tensor names */
} RadNameMapEntry;

/* An op parameter at declare: a fixed value, or the one ranged extent [i, hi] per op. */
typedef struct RadParamDecl {
    const char* name;
    int32_t type;   /* RadParamType */
    int32_t ranged; /* 1: [i, hi] is the range this parameter takes at issue */
    int64_t i;
    int64_t hi;
    double f;
    const char* s;
} RadParamDecl;

#define RAD_INT(k, v) \
    { (k), RAD_P_INT, 0, (int64_t)(v), 0, 0.0, 0 }
#define RAD_RANGE(k, lo, hi) \
    { (k), RAD_P_INT, 1, (int64_t)(lo), (int64_t)(hi), 0.0, 0 }
#define RAD_F64(k, v) \
    { (k), RAD_P_F64, 0, 0, 0, (double)(v), 0 }
#define RAD_STR(k, v) \
    { (k), RAD_P_STR, 0, 0, 0, 0.0, (v) }

typedef struct RadBuilder RadBuilder;

typedef struct RadBuilderApi {
    uint32_t struct_size;
    rad_weight (*decl_weight)(RadBuilder* b, const char* name, const RadWeightDecl* d);
    rad_buf (*decl_buffer)(RadBuilder* b, const char* name, const RadBufDecl* d);
    rad_kv (*decl_kv_group)(RadBuilder* b, const char* name, const RadKvGroupDecl* d);
    int (*bind_layer_kv)(RadBuilder* b, rad_kv kv, int layer);
    rad_op (*decl_op)(RadBuilder* b, const char* op, const RadParamDecl* params, int n_params, const rad_weight* weights, int n_weights);
    void (*op_reads)(RadBuilder* b, rad_op op, const rad_buf* bufs, int n);
    void (*op_writes)(RadBuilder* b, rad_op op, const rad_buf* bufs, int n);
    int (*op_resolved)(RadBuilder* b, rad_op op);
    int (*op_declared)(RadBuilder* b, const char* op);
    int (*name_map)(RadBuilder* b, const RadNameMapEntry* entries, int n);
    void (*declare_logits)(RadBuilder* b, rad_buf logits);
    void (*note)(RadBuilder* b, const char* text);
    void (*fail)(RadBuilder* b, const char* why);
    int (*kv_block_size)(RadBuilder* b, rad_kv kv);
    int (*weight_encoding)(RadBuilder* b, rad_weight w, RadEncoding* out);
    /* ABI 4: the pooled hidden output (rad_declare_pooled below). */
    void (*declare_pooled)(RadBuilder* b, rad_buf pooled);
    void* reserved[7];
} RadBuilderApi;

struct RadBuilder {
    const RadBuilderApi* api;
    void* impl;
};

static inline rad_weight rad_decl_weight(RadBuilder* b, const char* name, const RadWeightDecl* d) {
    return b->api->decl_weight(b, name, d);
}
static inline rad_buf rad_decl_buffer(RadBuilder* b, const char* name, const RadBufDecl* d) { return b->api->decl_buffer(b, name, d); }
static inline rad_kv rad_decl_kv_group(RadBuilder* b, const char* name, const RadKvGroupDecl* d) {
    return b->api->decl_kv_group(b, name, d);
}
static inline int rad_bind_layer_kv(RadBuilder* b, rad_kv kv, int layer) { return b->api->bind_layer_kv(b, kv, layer); }
static inline rad_op rad_decl_op(RadBuilder* b, const char* op, const RadParamDecl* p, int np, const rad_weight* w, int nw) {
    return b->api->decl_op(b, op, p, np, w, nw);
}
static inline void rad_op_reads(RadBuilder* b, rad_op op, const rad_buf* bufs, int n) { b->api->op_reads(b, op, bufs, n); }
static inline void rad_op_writes(RadBuilder* b, rad_op op, const rad_buf* bufs, int n) { b->api->op_writes(b, op, bufs, n); }
static inline int rad_op_resolved(RadBuilder* b, rad_op op) { return b->api->op_resolved(b, op); }
static inline int rad_op_declared(RadBuilder* b, const char* op) { return b->api->op_declared(b, op); }
static inline int rad_decl_name_map(RadBuilder* b, const RadNameMapEntry* e, int n) { return b->api->name_map(b, e, n); }
static inline void rad_declare_logits(RadBuilder* b, rad_buf logits) { b->api->declare_logits(b, logits); }
/* An embedding program: `pooled` ([max_tok, n_embd], the activation dtype) receives, when a step
 * asks (RadBatch.n_hidden > 0), the final normed hidden state of each row hidden_ids names, in
 * that order, in rows [0, n_hidden): what the head would read, before the head. Pooling over a
 * request's rows (last token, mean) and the L2 normalisation are the caller's (the front end pools
 * the returned rows, so a prompt prefilled in chunks pools like one prefilled whole). An
 * architecture that declares none serves no embeddings (a step asking for rows is refused). */
static inline void rad_declare_pooled(RadBuilder* b, rad_buf pooled) { b->api->declare_pooled(b, pooled); }
static inline void rad_note(RadBuilder* b, const char* text) { b->api->note(b, text); }
static inline void rad_decl_fail(RadBuilder* b, const char* why) { b->api->fail(b, why); }
static inline int rad_kv_block_size(RadBuilder* b, rad_kv kv) { return b->api->kv_block_size(b, kv); }
static inline int rad_weight_encoding(RadBuilder* b, rad_weight w, RadEncoding* out) { return b->api->weight_encoding(b, w, out); }

/* ---- the step ---------------------------------------------------------------------------- */

typedef enum RadPhase { RAD_PHASE_PREFILL = 1, RAD_PHASE_DECODE = 2, RAD_PHASE_MIXED = 3 } RadPhase;

/* One step's batch, built once by the core and shared by every block. Sequences are ordered
 * decode-first; cu_seqlens holds absolute row offsets (n_seq + 1 entries). The arrays are host
 * memory an architecture may read while it issues. A recorded decode step replays for later
 * steps with the same n_tok, n_seq, n_out and block_table_stride and the same answer to "are
 * out_ids 0..n_tok-1?", so issuing may depend on those and on nothing else of the batch's
 * contents. */
typedef struct RadBatch {
    uint32_t struct_size;
    int32_t phase; /* RadPhase */
    int32_t n_tok;
    int32_t n_seq;
    int32_t n_seq_decode;        /* the first n_seq_decode sequences carry one token each */
    int32_t n_out;               /* rows whose logits are wanted; 0: do not run the head */
    const int32_t* token_ids;    /* [n_tok] */
    const int32_t* positions;    /* [n_tok] */
    const int32_t* cu_seqlens;   /* [n_seq + 1] */
    const int32_t* seq_ids;      /* [n_seq] */
    const int32_t* out_ids;      /* [n_out]: row indices into the step's tokens */
    const int32_t* q_lens;       /* [n_seq]: new tokens per sequence */
    const int32_t* ctx_lens;     /* [n_seq]: tokens in the cache after this step */
    const int32_t* block_tables; /* [n_seq][block_table_stride] KV block ids */
    int32_t block_table_stride;
    int32_t max_q_len;
    int32_t max_ctx_len;
    int32_t n_hidden; /* ABI 4: rows whose final normed hidden state is wanted (rad_declare_pooled); 0: none */
    int32_t reserved_i[6];
    const int32_t* hidden_ids; /* [n_hidden]: row indices into the step's tokens, any order */
    const void* reserved_p[7];
} RadBatch;

typedef enum RadOperandKind {
    RAD_OPND_NONE = 0,   /* an absent optional operand */
    RAD_OPND_BUF = 1,    /* a declared buffer, first `rows` rows */
    RAD_OPND_WEIGHT = 2, /* a declared weight */
    RAD_OPND_RAW = 3,    /* host memory of the batch (token ids, positions, cu_seqlens) */
    RAD_OPND_KV = 4      /* a layer's KV state of a group */
} RadOperandKind;

typedef struct RadOperandRef {
    int32_t kind;    /* RadOperandKind */
    int32_t handle;  /* buffer / weight / kv group */
    int64_t rows;    /* BUF: rows; RAW: elements, or rows of a 2-D array when cols > 0 */
    int64_t col0;    /* BUF: first column (a view of a wide buffer); KV: the plane (0 = K, 1 = V; an fp8 group's 2 = K scale, 3 = V scale) */
    int64_t cols;    /* BUF: columns of the view (0 = all); RAW: columns of a 2-D array */
    int32_t dtype;   /* RAW: element type */
    int32_t layer;   /* KV: which layer */
    const void* ptr; /* RAW */
} RadOperandRef;

static inline RadOperandRef rad_brows(rad_buf b, int64_t rows) {
    RadOperandRef r;
    memset(&r, 0, sizeof r);
    r.kind = RAD_OPND_BUF;
    r.handle = b;
    r.rows = rows;
    return r;
}
static inline RadOperandRef rad_bview(rad_buf b, int64_t rows, int64_t col0, int64_t cols) {
    RadOperandRef r = rad_brows(b, rows);
    r.col0 = col0;
    r.cols = cols;
    return r;
}
static inline RadOperandRef rad_w(rad_weight w) {
    RadOperandRef r;
    memset(&r, 0, sizeof r);
    r.kind = RAD_OPND_WEIGHT;
    r.handle = w;
    return r;
}
static inline RadOperandRef rad_raw(const void* p, int dtype, int64_t n) {
    RadOperandRef r;
    memset(&r, 0, sizeof r);
    r.kind = RAD_OPND_RAW;
    r.ptr = p;
    r.dtype = dtype;
    r.rows = n;
    return r;
}
static inline RadOperandRef rad_raw2(const void* p, int dtype, int64_t rows, int64_t cols) {
    RadOperandRef r = rad_raw(p, dtype, rows);
    r.cols = cols;
    return r;
}
/* Plane `plane` (0 = K, 1 = V; an fp8 group's 2 = K scale, 3 = V scale) of layer `layer`'s state in KV group `g`. */
static inline RadOperandRef rad_kvref(rad_kv g, int layer, int plane) {
    RadOperandRef r;
    memset(&r, 0, sizeof r);
    r.kind = RAD_OPND_KV;
    r.handle = g;
    r.layer = layer;
    r.col0 = plane;
    return r;
}
static inline RadOperandRef rad_none(void) {
    RadOperandRef r;
    memset(&r, 0, sizeof r);
    r.kind = RAD_OPND_NONE;
    r.handle = RAD_NULL_HANDLE;
    return r;
}

typedef struct RadCtx RadCtx;

typedef struct RadCtxApi {
    uint32_t struct_size;
    /* Issue a declared op over `n` of its ranged extent; returns RAD_OK or an error, and a failed
     * issue fails the step. Zero rows is not a call: RAD_E_SHAPE, nothing written. */
    int (*issue)(RadCtx* c, rad_op op, const RadOperandRef* opds, int n_opds, int64_t n);
    void (*step_fail)(RadCtx* c, const char* what);
    int (*status)(RadCtx* c);
    void* reserved[8];
} RadCtxApi;

struct RadCtx {
    const RadCtxApi* api;
    void* impl;
};

static inline int rad_issue(RadCtx* c, rad_op op, const RadOperandRef* opds, int n, int64_t rows) {
    return c->api->issue(c, op, opds, n, rows);
}
static inline void rad_step_fail(RadCtx* c, const char* what) { c->api->step_fail(c, what); }
static inline int rad_step_status(RadCtx* c) { return c->api->status(c); }

/* ---- exports ----------------------------------------------------------------------------- */

typedef const char* (*RadArchIdFn)(void);
typedef const char* (*RadArchQuantFn)(void);
typedef int (*RadArchDeclareFn)(RadBuilder* b, const RadModelMeta* meta, const RadBuildCtx* ctx);
typedef void (*RadArchStepFn)(RadCtx* c, const RadBatch* batch);

#ifdef __cplusplus
}
/* C++ conveniences for plugins: RAD_ISSUE(c, op, rows, operands...) */
#include <initializer_list>
static inline int rad_issue_list(RadCtx* c, rad_op op, int64_t rows, std::initializer_list<RadOperandRef> opds) {
    return rad_issue(c, op, opds.begin(), (int)opds.size(), rows);
}
#define RAD_ISSUE_N(c, op, rows, ...) rad_issue_list((c), (op), (rows), {__VA_ARGS__})

/* Emits every export of an architecture plugin. NS must provide
 *   int  NS::declare(RadBuilder*, const RadModelMeta*, const RadBuildCtx*);
 *   void NS::step(RadCtx*, const RadBatch*);                                                   */
#define RAD_ARCH_PLUGIN(NS, NAME, ID, QUANT, VERSION, DESC)                                                  \
    RAD_PLUGIN_ABI_VERSION_EXPORT                                                                            \
    RAD_PLUGIN_ABI_LAYOUT_EXPORT                                                                             \
    extern "C" RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {                                       \
        static const RadPluginInfo info = {RAD_PLUGIN_ARCH, NAME, VERSION, DESC, ""};                        \
        return &info;                                                                                        \
    }                                                                                                        \
    extern "C" RAD_EXPORT const char* rad_arch_id(void) { return ID; }                                       \
    extern "C" RAD_EXPORT const char* rad_arch_quant(void) { return QUANT; }                                 \
    extern "C" RAD_EXPORT int rad_arch_declare(RadBuilder* b, const RadModelMeta* m, const RadBuildCtx* x) { \
        return NS::declare(b, m, x);                                                                         \
    }                                                                                                        \
    extern "C" RAD_EXPORT void rad_arch_step(RadCtx* c, const RadBatch* batch) { NS::step(c, batch); }
#endif

#endif
