// serve_options.cpp: parses and checks `radiance serve`'s flags (keys from flags or the
// environment, never an empty one; a keyless non-loopback host refused).
#include "serve_options.h"

#include <cstdlib>
#include <iostream>

#include "radiance/util/args.h"
#include "radiance/util/error.h"
#include "radiance/util/kv_cache_dtype.h"
#include "radiance/util/log.h"
#include "scheduler.h"
#include "tool_call_parser.h"

namespace radiance::frontend {

// Every flag serve() takes, with its default and a line of meaning (tests/integration/cli_help.sh
// checks that each flag parse() accepts is listed here).
const char* const kUsage =
    "usage: radiance serve [OPTIONS]       serve a model over HTTP (OpenAI, Anthropic, llama-server APIs)\n"
    "       radiance --version             the release, the plugin ABI and the kernel libraries found\n"
    "\n"
    "Model\n"
    "  --model, -m PATH          a .rad container or a Hugging Face folder (converted once into the cache)\n"
    "                            [default: the default model installed under RADIANCE_HOME]\n"
    "  --model-name NAME         the name the APIs report and accept [default: the container's name, else its file name]\n"
    "  --cache-dir DIR           where converted folders are kept [default: $RADIANCE_CACHE, else ~/.cache/radiance]\n"
    "  --tool-call-parser NAME   how tool calls are read out of the model's text: hermes (Qwen2.5, Qwen3), llama3_json,\n"
    "                            mistral, or json (a JSON array of calls) [default: the one the chat template's markup\n"
    "                            calls for; json when it has none]\n"
    "  --max-ctx N               context length (prompt + generated) [default: the model's training context;\n"
    "                            less when the KV cache holds less, which the log says and /v1/models reports]\n"
    "\n"
    "HTTP\n"
    "  --host ADDR               address to bind [default: 127.0.0.1]\n"
    "  --port N                  port to bind, 0 for any [default: 8080]\n"
    "  --threads N               HTTP io threads [default: 2]\n"
    "  --max-connections N       open connections; past it a 503 and close [default: 1024]\n"
    "  --api-key KEY             required as 'Authorization: Bearer KEY' or 'x-api-key: KEY' [default: $RADIANCE_API_KEY;\n"
    "                            empty is an error; without a key only a loopback --host is allowed, and Host is checked]\n"
    "  --no-auth                 serve without a key on a non-loopback --host\n"
    "  --admin-key KEY           opens /admin/ (rank restarts) [default: $RADIANCE_ADMIN_KEY; none: no admin endpoints]\n"
    "  --shutdown-timeout S      on SIGTERM, seconds running requests get to finish [default: 30]\n"
    "  --responses-store N       responses kept in memory for GET /v1/responses/{id} and previous_response_id;\n"
    "                            past N the oldest are forgotten, 0 keeps none [default: 1024]\n"
    "\n"
    "Scheduling\n"
    "  --max-seqs N              sequences in one step [default: 16]\n"
    "  --max-batch-tokens N      tokens in one step [default: 2 x --max-seqs, at least 256]\n"
    "  --kv-blocks N             KV cache blocks per layer [default: room for --max-seqs sequences of --max-ctx,\n"
    "                            or what memory holds: see --gpu-memory-utilization; on the host, half the free memory]\n"
    "  --gpu-memory-utilization F  share of the card's memory weights, buffers and KV cache may take [default: 0.9]\n"
    "  --kv-cache-dtype D        auto, fp8 (= fp8_e4m3: e4m3 codes and a scale a token and kv head, ~1.94x the\n"
    "                            blocks of bf16 in the same memory), bf16 or f32 [default: auto: f32 on the host,\n"
    "                            bf16 on a card; a card library that cannot read fp8 refuses it at startup]\n"
    "  --deterministic           a row's logits bitwise the same whatever else rides in its step, however its\n"
    "                            prompt was chunked, and after a restart or preemption (host placements only:\n"
    "                            a card refuses it at startup; docs/OPS.md general rules) [default: off]\n"
    "  --max-queue N             waiting requests before 429 [default: 256]\n"
    "  --no-enable-prefix-caching  compute every prompt in full instead of reusing the KV blocks of earlier\n"
    "                            requests that began with the same tokens [default: prefix caching on;\n"
    "                            --enable-prefix-caching says so]\n"
    "  --disable-overlap-schedule  build each step only once the step before is answered (lockstep) instead of\n"
    "                            while it runs [default: overlapped where every rank picks the tokens it feeds]\n"
    "\n"
    "Embeddings\n"
    "  --embeddings              serve POST /v1/embeddings beside generation (as llama-server's flag)\n"
    "  --task auto|generate|embed  embed: embeddings only (the generation routes answer 400); generate: no\n"
    "                            embeddings unless --embeddings [default: auto: embed for a checkpoint that names an\n"
    "                            embedding model (architectures ending in Model, a sentence-transformers folder),\n"
    "                            else generate]\n"
    "\n"
    "Workers\n"
    "  --tp N                    tensor-parallel ranks, one worker process each [default: 1]\n"
    "  --external-workers N      wait for N workers started elsewhere (systemd, Kubernetes) instead of spawning\n"
    "  --workers-listen ADDR     where workers connect: unix:/path or host:port [default: a private unix socket]\n"
    "  --transport shm|grpc      how steps travel to workers on this host [default: shm]\n"
    "  --kernels LIST            kernel libraries to use, in order, e.g. libgpu,libref [default: every one that loads]\n"
    "  --radiance-home HOMES     plugin search path, ':'-separated [default: $RADIANCE_HOME, else the install's]\n"
    "  --placement auto|host|device  where the plan runs [default: auto: the card if a library brings one]\n"
    "  --no-graphs               do not replay decode steps as recorded graphs on a card\n"
    "  --debug-accept-reference-kernels  let reference kernels serve (slow; for checking)\n"
    "  --debug-selection         log each rank's kernel selection\n"
    "  --help, -h                this text\n";

ServeOptions parse_serve_options(int argc, char** argv) {
    ServeOptions o;
    util::Args args(argc, argv, 2);
    while (args.next()) {
        if (args.is("--model", "-m"))
            o.model = args.value();
        else if (args.is("--model-name"))
            o.model_name = args.value();
        else if (args.is("--tool-call-parser")) {
            o.tool_call_parser = args.value();
            if (!tools::find_tool_parser(o.tool_call_parser)) {
                std::string names;
                for (const auto& n : tools::tool_parser_names()) names += (names.empty() ? "" : ", ") + n;
                throw Error("--tool-call-parser '" + o.tool_call_parser + "' is not a tool-call parser (there are " + names + ")");
            }
        } else if (args.is("--host"))
            o.http.host = args.value();
        else if (args.is("--port"))
            o.http.port = static_cast<unsigned short>(args.integer(0, 65535));
        else if (args.is("--threads"))
            o.http.threads = static_cast<int>(args.integer(1, 256));
        else if (args.is("--api-key")) {
            o.api_key = args.value();
            o.api_key_given = true;
        } else if (args.is("--no-auth"))
            o.no_auth = true;
        else if (args.is("--max-connections"))
            o.http.max_connections = static_cast<int>(args.integer(1, 1 << 20));
        else if (args.is("--tp"))
            o.tp = static_cast<int>(args.integer(1, 64));
        else if (args.is("--external-workers"))
            o.external_workers = static_cast<int>(args.integer(1, 64));
        else if (args.is("--workers-listen"))
            o.workers_listen = args.value();
        else if (args.is("--transport"))
            o.transport = args.value();
        else if (args.is("--max-ctx"))
            o.max_ctx = static_cast<int>(args.integer(16, 1 << 20));
        else if (args.is("--max-batch-tokens"))
            o.max_batch_tokens = static_cast<int>(args.integer(1, 1 << 20));
        else if (args.is("--max-seqs"))
            o.max_seqs = static_cast<int>(args.integer(1, 4096));
        else if (args.is("--kv-blocks"))
            o.kv_blocks = args.integer(1, 1L << 30);
        else if (args.is("--gpu-memory-utilization")) {
            o.memory_utilization = args.real(0, 1);
            if (!(o.memory_utilization > 0)) throw Error("--gpu-memory-utilization must be above 0");
        } else if (args.is("--kv-cache-dtype"))
            o.kv_cache_dtype = parse_kv_cache_dtype(args.value());
        else if (args.is("--deterministic"))
            o.deterministic = true;
        else if (args.is("--max-queue"))
            o.max_queue = static_cast<int>(args.integer(1, 1 << 20));
        else if (args.is("--shutdown-timeout"))
            o.shutdown_timeout_s = static_cast<int>(args.integer(0, 86400));
        else if (args.is("--responses-store"))
            o.responses_store = static_cast<int>(args.integer(0, 1 << 24));
        else if (args.is("--admin-key")) {
            o.admin_key = args.value();
            o.admin_key_given = true;
        } else if (args.is("--kernels"))
            o.kernels = args.value();
        else if (args.is("--radiance-home"))
            o.homes = args.value();
        else if (args.is("--cache-dir"))
            o.cache_dir = args.value();
        else if (args.is("--debug-accept-reference-kernels"))
            o.accept_reference = true;
        else if (args.is("--debug-selection"))
            o.debug_selection = true;
        else if (args.is("--placement"))
            o.placement = args.value();
        else if (args.is("--no-graphs"))
            o.graphs = false;
        else if (args.is("--enable-prefix-caching"))
            o.prefix_caching = true;
        else if (args.is("--no-enable-prefix-caching"))
            o.prefix_caching = false;
        else if (args.is("--disable-overlap-schedule"))
            o.overlap = false;
        else if (args.is("--embeddings"))
            o.embeddings = true;
        else if (args.is("--task"))
            o.task = args.value();
        else if (args.is("-h", "--help")) {
            std::cout << kUsage;
            std::exit(0);
        } else
            args.unknown();
    }
    if (o.transport != "shm" && o.transport != "grpc") throw Error("--transport must be shm or grpc");
    if (o.task != "auto" && o.task != "generate" && o.task != "embed") throw Error("--task must be auto, generate or embed");
    // Keys: a flag, else the environment (a secret or an EnvironmentFile, off the command line);
    // an empty one is an error, never a silent "no authentication".
    auto key_from = [](std::string& key, bool given, const char* flag, const char* env, const char* instead) {
        if (given) {
            if (key.empty()) throw Error(std::string(flag) + " is empty; pass a key, or " + instead);
            return;
        }
        if (const char* v = std::getenv(env)) {
            if (!*v) throw Error(std::string("$") + env + " is set but empty; set a key, or unset it");
            key = v;
        }
    };
    key_from(o.api_key, o.api_key_given, "--api-key", "RADIANCE_API_KEY", "--no-auth to serve without one");
    key_from(o.admin_key, o.admin_key_given, "--admin-key", "RADIANCE_ADMIN_KEY", "leave it out (no admin endpoints)");
    if (o.no_auth && !o.api_key.empty())
        throw Error(o.api_key_given ? "--no-auth and --api-key together" : "--no-auth, yet $RADIANCE_API_KEY is set");
    if (o.api_key.empty() && !o.no_auth && !is_loopback_address(o.http.host))
        throw Error("no API key for --host " + o.http.host +
                    ": anyone who reaches it could use it; set --api-key (or $RADIANCE_API_KEY), or pass --no-auth");
    if (o.max_batch_tokens == 0)
        o.max_batch_tokens = default_batch_tokens(o.max_seqs);
    else if (o.max_batch_tokens <= o.max_seqs)
        log::warn("--max-batch-tokens ", o.max_batch_tokens, " is not above --max-seqs ", o.max_seqs,
                  ": a full decode batch leaves no room for new prompts, which then wait for sequences to finish");
    if (o.cache_dir.empty()) {
        const char* c = std::getenv("RADIANCE_CACHE");
        const char* h = std::getenv("HOME");
        o.cache_dir = c ? c : (std::string(h ? h : "/tmp") + "/.cache/radiance");
    }
    return o;
}

}  // namespace radiance::frontend
