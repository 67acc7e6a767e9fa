/* rad_abi.h: the identity every plugin exports, and the ABI law.
 *
 * Three kinds of shared object extend the engine; each links nothing of radiance and compiles
 * against these headers only. The engine refuses a plugin whose RAD_ABI_VERSION differs from its
 * own (bumped on any shape change in a header a plugin compiles against) or whose layout
 * fingerprint (rad_abi_layout.h: sizes and offsets of every ABI struct, computed by the compiler
 * that built the plugin) differs, naming the plugin and both values. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_DETAIL_ABI_CORE_H
#define RADIANCE_DETAIL_ABI_CORE_H

#include "../rad_types.h"
#include "../rad_encoding.h"

#ifdef __cplusplus
#define RAD_EXTERN_C extern "C"
extern "C" {
#else
#define RAD_EXTERN_C
#endif

/* 2: RadDeviceApi (device_core.h); 3: RadComm.aborted, RadDeviceApi.peer_cards/cards;
 * 4: RadBuilderApi.declare_pooled, RadBatch.n_hidden/hidden_ids (embeddings).
 * (One line: cmake/RadianceInstall.cmake reads the number from it.) */
#define RAD_ABI_VERSION 4u

#if defined(_WIN32)
#define RAD_EXPORT __declspec(dllexport)
#else
#define RAD_EXPORT __attribute__((visibility("default")))
#endif

typedef enum RadPluginKind {
    RAD_PLUGIN_KERNEL = 1, /* ops for some hardware: a card family, the CPU, an oracle */
    RAD_PLUGIN_ARCH = 2,   /* one model family at one weight format */
    RAD_PLUGIN_QUANT = 3   /* weights -> encoding planes, for rad-convert */
} RadPluginKind;

typedef struct RadPluginInfo {
    int32_t kind;     /* RadPluginKind */
    const char* name; /* unique among loaded plugins */
    const char* version;
    const char* description;
    const char* build_target; /* printed, not trusted: "host", "sm_90a", "gfx1100", "" */
} RadPluginInfo;

/* What the engine measured about the machine, handed to rad_plugin_open. */
typedef struct RadMachine {
    uint32_t struct_size;
    int32_t n_devices;   /* GPUs visible to this process (0 on a host-only machine) */
    int32_t device_kind; /* 0 none, 1 CUDA, 2 HIP */
    int32_t device_cc;   /* compute capability as major*10+minor (90 for sm_90), or gfx number */
    int32_t host_cores;
    int32_t device_ordinal; /* the card this process should bind (a rank's); a library takes it mod its count */
    int32_t reserved[7];
} RadMachine;

/* Required exports of every plugin. */
typedef uint32_t (*RadAbiVersionFn)(void);
typedef uint64_t (*RadAbiLayoutFn)(void);
typedef const RadPluginInfo* (*RadPluginInfoFn)(void);
/* Optional: return RAD_E_UNSUPPORTED to decline this machine (the engine then unloads it). */
typedef int (*RadPluginOpenFn)(const RadMachine* machine);
typedef void (*RadPluginCloseFn)(void);
/* Optional: nonzero marks a whole kernel library as a reference (oracle) library. */
typedef int (*RadPluginReferenceFn)(void);

#define RAD_PLUGIN_ABI_VERSION_EXPORT \
    RAD_EXTERN_C RAD_EXPORT uint32_t rad_plugin_abi_version(void) { return RAD_ABI_VERSION; }

#ifdef __cplusplus
}
#endif
#endif
