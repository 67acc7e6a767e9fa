/* device_core.h: the device a kernel library brings with it.
 *
 * The core knows no hardware. A kernel library whose rows run on a card (RAD_DOMAIN_DEVICE)
 * also exports the card's memory, queue and graph services, and the engine places the whole
 * plan there through them: weights, the activation arena, the KV cache, every row's scratch and
 * the step's inputs. One process drives one card (the worker for one rank).
 *
 *   const RadDeviceApi* rad_kernel_device(void);   optional export of a kernel library
 *
 * The library binds its card in rad_plugin_open (declining when the machine has none), so the
 * engine starts on a machine without a GPU: such a library is declined and the plan stays on the
 * host. Every call below returns RAD_OK or an error; `last_error` names what failed. Copies and
 * memsets are queued on the stream and never synchronise; `sync` does. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_DETAIL_DEVICE_CORE_H
#define RADIANCE_DETAIL_DEVICE_CORE_H

#include "abi_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum RadCopyKind { RAD_COPY_H2D = 1, RAD_COPY_D2H = 2, RAD_COPY_D2D = 3 } RadCopyKind;

typedef struct RadDeviceApi {
    uint32_t struct_size;
    int32_t ordinal;     /* the card this process bound */
    const char* runtime; /* "cuda" or "hip" */
    const char* name;    /* the card's marketing name */
    int32_t cc;          /* compute capability major*10+minor, or the gfx number */
    int32_t multiprocessors;
    uint64_t memory_bytes; /* total memory of the card */
    /* memory */
    int (*mem_free)(uint64_t* free_bytes);
    void* (*alloc)(uint64_t bytes); /* device memory, 256-byte aligned; NULL when out */
    void (*release)(void* p);
    void* (*alloc_host)(uint64_t bytes); /* page-locked host memory for fast copies */
    void (*release_host)(void* p);
    /* queues */
    RadStream (*stream_create)(void);
    void (*stream_destroy)(RadStream s);
    int (*copy)(void* dst, const void* src, uint64_t bytes, int kind /* RadCopyKind */, RadStream s);
    int (*fill)(void* dst, int byte, uint64_t bytes, RadStream s);
    int (*sync)(RadStream s);
    /* graphs: record what the rows and copy queue between begin and end, replay it as one launch
     * (a recorded copy reads its source when the graph replays) */
    int (*graph_begin)(RadStream s);
    int (*graph_end)(RadStream s, void** graph);
    int (*graph_launch)(void* graph, RadStream s);
    void (*graph_destroy)(void* graph);
    const char* (*last_error)(void);
    /* cards 0..peer_cards-1 of this process's view reach each other's memory (peer access); the
     * engine reports device.p2p = 1 when its rank group fits in them (rank r binds card r) */
    int32_t peer_cards;
    int32_t cards; /* cards this process sees (rank r binds card r mod cards) */
    /* marks in a queue, optional (null: the engine waits with `sync`): the host waits for the work
     * queued before a mark without waiting for what was queued after it, so a step can be queued
     * behind the one running (pipelined decode) */
    void* (*mark_create)(void);
    void (*mark_destroy)(void* mark);
    int (*mark_record)(void* mark, RadStream s);
    int (*mark_wait)(void* mark); /* until the work before its last record is done */
    void* reserved[3];
} RadDeviceApi;

typedef const RadDeviceApi* (*RadDeviceApiFn)(void);

#ifdef __cplusplus
}
#endif
#endif
