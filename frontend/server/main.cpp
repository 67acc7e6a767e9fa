// radiance serve: the front end. It answers HTTP (OpenAI, Anthropic, llama-server), tokenises,
// renders chat templates and schedules; the model runs in radiance-worker processes, one per rank,
// which it spawns and supervises (--tp N) or which join it by themselves (--external-workers N).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "api_routes.h"
#include "http_server.h"
#include "metrics.h"
#include "model_source.h"
#include "radiance/container/container.h"
#include "radiance/core/search_path.h"
#include "radiance/rad_abi.h"
#include "radiance/rad_abi_layout.h"
#include "radiance/text/tokenizer.h"
#include "radiance/util/child_process.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"
#include "scheduler.h"
#include "worker_group.h"

using namespace radiance;
using namespace radiance::frontend;

namespace {

struct ServeOptions {
    HttpOptions http;
    std::string model, model_name, homes, kernels, workers_listen, api_key, transport = "shm", cache_dir;
    int tp = 1;
    int external_workers = 0;
    bool accept_reference = false;
    bool debug_selection = false;
    std::string placement = "auto";
    bool graphs = true;
    int max_ctx = 0;           // 0: the model's training context
    int max_batch_tokens = 0;  // 0: default_batch_tokens(max_seqs)
    int max_seqs = 16;
    int64_t kv_blocks = 0;
    double memory_utilization = 0.9;
    int max_queue = 256;
    int shutdown_timeout_s = 30;
    std::string admin_key;
    bool api_key_given = false, admin_key_given = false, no_auth = false;
};

// Waits until the scheduler holds no request, or `timeout` passes; true when it is empty.
bool wait_idle(const Scheduler& sched, std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const SchedulerStats st = sched.stats();
        if (st.running == 0 && st.waiting == 0) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

// SIGTERM/SIGINT arrive here (blocked everywhere else): stop taking requests, let the running
// ones finish up to --shutdown-timeout, then end the rest as aborted (each answer and stream
// gets its final event: finish_reason "abort", [DONE]), give those writes a moment, and stop
// the server; the process exits 0.
void drain_on_signal(sigset_t set, Scheduler& sched, HttpServer& server, int timeout_s) {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig == SIGUSR2) return;  // the normal end of serve(): nothing to drain
    log::info("signal ", sig, ": draining (up to ", timeout_s, " s)");
    sched.drain();
    if (!wait_idle(sched, std::chrono::seconds(timeout_s))) {
        const size_t n = sched.abort_all();
        log::warn("--shutdown-timeout (", timeout_s, " s) passed: ended ", n, " unfinished request(s) as aborted");
        // Aborts land at the next step boundary; a step hung on a worker is not waited for long.
        if (!wait_idle(sched, std::chrono::seconds(5))) log::warn("requests still unfinished after the abort: cut");
    }
    server.stop(std::chrono::seconds(5));
}

// Every flag serve() takes, with its default and a line of meaning (tests/integration/cli_help.sh
// checks that each flag parse() accepts is listed here).
const char* kUsage =
    "usage: radiance serve [OPTIONS]       serve a model over HTTP (OpenAI, Anthropic, llama-server APIs)\n"
    "       radiance --version             the release, the plugin ABI and the kernel libraries found\n"
    "\n"
    "Model\n"
    "  --model, -m PATH          a .rad container or a Hugging Face folder (converted once into the cache)\n"
    "                            [default: the default model installed under RADIANCE_HOME]\n"
    "  --model-name NAME         the name the APIs report and accept [default: the container's name, else its file name]\n"
    "  --cache-dir DIR           where converted folders are kept [default: $RADIANCE_CACHE, else ~/.cache/radiance]\n"
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
    "\n"
    "Scheduling\n"
    "  --max-seqs N              sequences in one step [default: 16]\n"
    "  --max-batch-tokens N      tokens in one step [default: 2 x --max-seqs, at least 256]\n"
    "  --kv-blocks N             KV cache blocks per layer [default: room for --max-seqs sequences of --max-ctx,\n"
    "                            or what memory holds: see --gpu-memory-utilization; on the host, half the free memory]\n"
    "  --gpu-memory-utilization F  share of the card's memory weights, buffers and KV cache may take [default: 0.9]\n"
    "  --max-queue N             waiting requests before 429 [default: 256]\n"
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

ServeOptions parse(int argc, char** argv) {
    ServeOptions o;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw Error(a + " needs a value");
            return argv[++i];
        };
        auto number = [&](long lo, long hi) {
            std::string v = value();
            char* end = nullptr;
            long n = std::strtol(v.c_str(), &end, 10);
            if (!end || *end || v.empty() || n < lo || n > hi)
                throw Error(a + " must be a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not '" + v + "'");
            return n;
        };
        if (a == "--model" || a == "-m") o.model = value();
        else if (a == "--model-name") o.model_name = value();
        else if (a == "--host") o.http.host = value();
        else if (a == "--port") o.http.port = static_cast<unsigned short>(number(0, 65535));
        else if (a == "--threads") o.http.threads = static_cast<int>(number(1, 256));
        else if (a == "--api-key") {
            o.api_key = value();
            o.api_key_given = true;
        } else if (a == "--no-auth") o.no_auth = true;
        else if (a == "--max-connections") o.http.max_connections = static_cast<int>(number(1, 1 << 20));
        else if (a == "--tp") o.tp = static_cast<int>(number(1, 64));
        else if (a == "--external-workers") o.external_workers = static_cast<int>(number(1, 64));
        else if (a == "--workers-listen") o.workers_listen = value();
        else if (a == "--transport") o.transport = value();
        else if (a == "--max-ctx") o.max_ctx = static_cast<int>(number(16, 1 << 20));
        else if (a == "--max-batch-tokens") o.max_batch_tokens = static_cast<int>(number(1, 1 << 20));
        else if (a == "--max-seqs") o.max_seqs = static_cast<int>(number(1, 4096));
        else if (a == "--kv-blocks") o.kv_blocks = number(1, 1L << 30);
        else if (a == "--gpu-memory-utilization") {
            const std::string v = value();
            char* end = nullptr;
            o.memory_utilization = std::strtod(v.c_str(), &end);
            if (v.empty() || *end || !(o.memory_utilization > 0 && o.memory_utilization <= 1))
                throw Error(a + " must be a number in (0, 1], not '" + v + "'");
        }
        else if (a == "--max-queue") o.max_queue = static_cast<int>(number(1, 1 << 20));
        else if (a == "--shutdown-timeout") o.shutdown_timeout_s = static_cast<int>(number(0, 86400));
        else if (a == "--admin-key") {
            o.admin_key = value();
            o.admin_key_given = true;
        }
        else if (a == "--kernels") o.kernels = value();
        else if (a == "--radiance-home") o.homes = value();
        else if (a == "--cache-dir") o.cache_dir = value();
        else if (a == "--debug-accept-reference-kernels") o.accept_reference = true;
        else if (a == "--debug-selection") o.debug_selection = true;
        else if (a == "--placement") o.placement = value();
        else if (a == "--no-graphs") o.graphs = false;
        else if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            std::exit(0);
        } else throw Error("unknown option " + a);
    }
    if (o.transport != "shm" && o.transport != "grpc") throw Error("--transport must be shm or grpc");
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
    if (o.max_batch_tokens == 0) o.max_batch_tokens = default_batch_tokens(o.max_seqs);
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

int serve(const ServeOptions& o) {
    // Signals are taken by one thread (drain_on_signal); every thread started below inherits the mask.
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
    // The front end opens no plugin (docs/ARCHITECTURE.md): workers load them, rad-convert converts.
    std::string spec = o.model.empty() ? default_model(core::resolve_homes(o.homes)) : o.model;
    if (spec.empty()) throw Error("no --model given and no default model installed");
    const std::string path = resolve_model(spec, o.homes, o.cache_dir);

    // What the front end itself needs from the container: names, sizes, tokenizer, template.
    auto c = container::Reader::open(path);
    auto meta = [&](const char* k) -> const container::MetaValue* {
        auto it = c->meta().find(k);
        return it == c->meta().end() ? nullptr : &it->second;
    };
    auto tok_json = c->blob(container::Section::Tokenizer);
    if (!tok_json) throw Error(path + " carries no tokenizer (convert a folder with tokenizer.json)");
    auto tok_cfg = c->blob(container::Section::TokenizerConfig);
    text::Tokenizer tokenizer = text::Tokenizer::from_json(*tok_json, tok_cfg ? *tok_cfg : std::string());
    const int64_t train_ctx = meta("model.n_ctx_train") ? meta("model.n_ctx_train")->i : 2048;
    const int max_ctx = o.max_ctx > 0 ? o.max_ctx : static_cast<int>(std::min<int64_t>(train_ctx > 0 ? train_ctx : 2048, 1 << 20));
    if (o.max_ctx > 0 && o.max_ctx > train_ctx && train_ctx > 0)
        log::warn("--max-ctx ", o.max_ctx, " is past the ", train_ctx, " positions the model was trained on");
    const std::string name = !o.model_name.empty() ? o.model_name
                             : meta("model.name")   ? meta("model.name")->s
                                                    : std::filesystem::path(path).stem().string();

    GroupOptions go;
    go.world_size = o.external_workers > 0 ? o.external_workers : o.tp;
    go.spawn = o.external_workers == 0;
    go.listen = o.workers_listen;
    go.model_path = std::filesystem::absolute(path).string();
    go.force_grpc = o.transport == "grpc";
    go.max_tok = o.max_batch_tokens;
    go.max_seqs = o.max_seqs;
    go.max_ctx = max_ctx;
    go.max_out_rows = o.max_seqs;
    go.kv_blocks = o.kv_blocks;
    go.memory_utilization = o.memory_utilization;
    go.kernels = o.kernels;
    go.radiance_home = o.homes;
    go.accept_reference = o.accept_reference;
    go.placement = o.placement;
    go.graphs = o.graphs;
    if (o.debug_selection) go.worker_args.push_back("--debug-selection");
    go.vocab = meta("model.n_vocab") ? meta("model.n_vocab")->i : 0;
    WorkerGroup group(go);
    Metrics metrics(name, go.world_size);
    group.on_rank_event([&metrics](const RankEvent& e) { metrics.on_rank(e); });
    SchedulerOptions so;
    so.max_batch_tokens = o.max_batch_tokens;
    so.max_seqs = o.max_seqs;
    so.max_ctx = max_ctx;
    so.max_queue = static_cast<size_t>(o.max_queue);
    so.model_name = name;
    Scheduler scheduler(group, so, &metrics);

    ApiContext ctx;
    ctx.tokenizer = &tokenizer;
    ctx.chat_template = c->blob(container::Section::ChatTemplate).value_or("");
    ctx.bos_token = tokenizer.bos_token().value_or("");
    ctx.eos_token = tokenizer.eos_token().value_or("");
    ctx.model_name = name;
    ctx.service = &scheduler;
    ctx.max_context = 0;  // the scheduler's: --max-ctx, or what the KV cache holds when that is less

    HttpOptions http = o.http;
    http.on_answer = [&metrics](const std::string& endpoint, int status) { metrics.on_http(endpoint, status); };
    if (!o.api_key.empty()) http.api_keys.push_back(o.api_key);
    if (!o.admin_key.empty()) http.admin_keys.push_back(o.admin_key);
    if (o.no_auth) log::warn("--no-auth: serving without an API key on ", o.http.host);
    HttpServer server(http);
    std::atomic<bool> started{false};
    std::string startup_error;
    server.route(http::verb::get, "/health", [](const Request& r) { return json_response(r, http::status::ok, R"({"status":"ok"})"); });
    server.route(http::verb::get, "/startup", [&](const Request& r) {
        return started ? json_response(r, http::status::ok, R"({"status":"started"})")
                       : json_response(r, http::status::service_unavailable, R"({"status":"starting"})");
    });
    server.route(http::verb::get, "/ready", [&](const Request& r) {
        nlohmann::json ranks = nlohmann::json::array();
        for (auto s : group.states()) ranks.push_back(rank_state_name(s));
        bool ok = scheduler.ready();
        nlohmann::json j = {{"status", ok ? "ready" : "not ready"}, {"ranks", ranks}};
        if (!startup_error.empty()) j["error"] = startup_error;
        auto res = json_response(r, ok ? http::status::ok : http::status::service_unavailable, j.dump());
        if (!ok) res.set(http::field::retry_after, "1");
        return res;
    });
    server.route(http::verb::get, "/metrics", [&](const Request& r) {
        Response res{http::status::ok, r.version()};
        res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
        res.keep_alive(r.keep_alive());
        res.body() = metrics.render(&scheduler, &group);
        res.prepare_payload();
        return res;
    });
    // Operators restart a rank on purpose; its requests resume like after a crash. The server lets
    // only the admin key through to /admin/ (HttpOptions::admin_keys; none: every call is a 401).
    for (int rank = 0; rank < go.world_size; ++rank)
        server.route(http::verb::post, "/admin/ranks/" + std::to_string(rank) + "/restart", [&, rank](const Request& r) {
            group.restart_rank(rank);
            return json_response(r, http::status::accepted, nlohmann::json({{"rank", rank}, {"status", "restarting"}}).dump());
        });
    register_api_routes(server, ctx);

    // Bind before any worker or thread starts: a port in use is a clean startup error (exit 1), not
    // a throw past running threads (std::terminate).
    server.listen();
    group.start();
    // Loading happens in the workers; the HTTP side answers (503 until ready) meanwhile.
    std::thread loader([&] {
        if (!group.wait_ready(std::chrono::minutes(30))) {
            startup_error = group.failure().empty() ? "the workers did not become ready" : group.failure();
            log::error("cannot serve: ", startup_error);
            server.stop();
            return;
        }
        scheduler.start();
        started = true;
        log::info("serving ", name, " (context ", scheduler.model_info().context_length, ", ", go.world_size, " rank(s))");
    });
    std::thread signals([&] { drain_on_signal(sigs, scheduler, server, o.shutdown_timeout_s); });
    server.run();
    loader.join();
    pthread_kill(signals.native_handle(), SIGUSR2);  // ends the signal thread if no signal came
    signals.join();
    scheduler.stop();
    group.shutdown();
    log::info("stopped");
    return startup_error.empty() ? 0 : 1;
}

}  // namespace

// radiance --version: the release, the plugin ABI this build speaks, and the kernel libraries its
// RADIANCE_HOME holds with what each said about this machine (asked of radiance-worker, which
// opens them: the front end never does).
int print_version() {
    std::printf("radiance %s\n", RADIANCE_VERSION);
    std::printf("plugin ABI %u (layout fingerprint %016llx)\n", static_cast<unsigned>(RAD_ABI_VERSION),
                static_cast<unsigned long long>(RAD_ABI_LAYOUT_FINGERPRINT));
    std::fflush(stdout);
    try {
        std::printf("RADIANCE_HOME: %s\n", str::join(core::resolve_homes(""), ":").c_str());
        const util::ChildResult r = util::run_child({util::self_dir() + "/radiance-worker", "--list-kernels"});
        std::fputs(r.output.c_str(), stdout);
        if (r.exit_code != 0) std::printf("kernel libraries: radiance-worker --list-kernels exited %d\n", r.exit_code);
    } catch (const std::exception& e) {
        std::printf("kernel libraries: cannot list them: %s\n", e.what());
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc >= 2 && (std::string(argv[1]) == "--version" || std::string(argv[1]) == "version")) return print_version();
    if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
        std::cout << kUsage;
        return 0;
    }
    if (argc < 2 || std::string(argv[1]) != "serve") {
        std::cerr << kUsage;
        return 2;
    }
    try {
        return serve(parse(argc, argv));
    } catch (const std::exception& e) {
        std::cerr << "radiance: " << e.what() << "\n";
        return 1;
    }
}
