// serve_options.h: `radiance serve`'s command line: every flag, its default and its meaning
// (kUsage, which --help prints), and the checks that refuse a bad combination before anything
// starts.
#pragma once
#include <cstdint>
#include <string>

#include "http_server.h"

namespace radiance::frontend {

struct ServeOptions {
    HttpOptions http;
    std::string model, model_name, homes, kernels, workers_listen, api_key, transport = "shm", cache_dir;
    int tp = 1;
    int external_workers = 0;
    bool accept_reference = false;
    bool debug_selection = false;
    std::string placement = "auto";
    std::string tool_call_parser;  // empty: the chat template's
    bool graphs = true;
    bool prefix_caching = true;
    bool overlap = true;  // the overlapped scheduler (SchedulerOptions::overlap)
    // Embeddings: --embeddings serves POST /v1/embeddings beside generation (llama-server's flag);
    // --task embed serves only embeddings, --task generate only generation, --task auto (default)
    // embeddings only for a model whose checkpoint names an embedding model (serve.cpp)
    bool embeddings = false;
    std::string task = "auto";
    int max_ctx = 0;           // 0: the model's training context
    int max_batch_tokens = 0;  // 0: default_batch_tokens(max_seqs)
    int max_seqs = 16;
    int64_t kv_blocks = 0;
    double memory_utilization = 0.9;
    std::string kv_cache_dtype;  // --kv-cache-dtype, as parse_kv_cache_dtype names it ("": auto)
    bool deterministic = false;  // --deterministic (EngineOptions::deterministic on every rank)
    int max_queue = 256;
    int shutdown_timeout_s = 30;
    int responses_store = 1024;  // ApiOptions::responses_store
    std::string admin_key;
    bool api_key_given = false, admin_key_given = false, no_auth = false;
};

extern const char* const kUsage;

// argv as `radiance serve ...` (argv[1] == "serve"). Throws radiance::Error naming the flag;
// exits 0 after printing kUsage for --help.
ServeOptions parse_serve_options(int argc, char** argv);

}  // namespace radiance::frontend
