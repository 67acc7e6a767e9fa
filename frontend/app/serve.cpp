// serve.cpp: the front end's wiring. It answers HTTP (OpenAI, Anthropic, llama-server),
// tokenises, renders chat templates and schedules; the model runs in radiance-worker processes,
// one per rank, which it spawns and supervises (--tp N) or which join it by themselves
// (--external-workers N). It opens no plugin: rad-convert converts folders, workers load.
#include "serve.h"

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "api_routes.h"
#include "http_server.h"
#include "metrics.h"
#include "model_source.h"
#include "radiance/container/container.h"
#include "radiance/core/search_path.h"
#include "radiance/text/tokenizer.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "scheduler.h"
#include "worker_group.h"

namespace radiance::frontend {

namespace {

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

// A comma-separated list of token ids from the container's metadata (rad-convert writes them).
std::vector<int32_t> parse_token_ids(const std::string& text, const std::string& key) {
    std::vector<int32_t> ids;
    size_t at = 0;
    while (at < text.size()) {
        size_t used = 0;
        const size_t end = std::min(text.find(',', at), text.size());
        int64_t v = -1;
        try {
            v = std::stoll(text.substr(at, end - at), &used);
        } catch (const std::exception&) {
        }
        if (v < 0 || v > INT32_MAX || used != end - at) throw Error("container metadata " + key + " = '" + text + "' is not a list of token ids");
        ids.push_back(static_cast<int32_t>(v));
        at = end + 1;
    }
    return ids;
}

}  // namespace

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
                             : meta("model.name")  ? meta("model.name")->s
                                                   : std::filesystem::path(path).stem().string();

    // Embeddings (docs/API.md): --embeddings beside generation; --task embed alone; by default
    // alone for a checkpoint that names an embedding model (a sentence-transformers folder's
    // pooling, or a config whose architecture is a bare `...Model` rather than `...ForCausalLM`;
    // GPT-2's `GPT2LMHeadModel` is a causal LM: served as an embedder it answered every
    // completion with a 400, http_golden_gpt2_tiny).
    const std::string arch0 = meta("hf.architectures.0") ? meta("hf.architectures.0")->s : "";
    auto ends_with = [&](const std::string& tail) {
        return arch0.size() >= tail.size() && arch0.compare(arch0.size() - tail.size(), tail.size(), tail) == 0;
    };
    const bool embedding_model = meta("embedding.pooling") != nullptr || (ends_with("Model") && !ends_with("LMHeadModel"));
    const bool embed_only = o.task == "embed" || (o.task == "auto" && embedding_model && !o.embeddings);
    const bool embeddings = o.embeddings || embed_only;
    const int64_t hidden = embeddings && meta("model.n_embd") ? meta("model.n_embd")->i : 0;
    if (embeddings && hidden <= 0) throw Error(path + " states no hidden size (model.n_embd): it cannot serve embeddings");
    if (embed_only && o.task == "auto")
        log::info("serving embeddings only: the checkpoint names an embedding model (--task generate to generate)");

    GroupOptions go;
    go.hidden_width = hidden;
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
    go.kv_cache_dtype = o.kv_cache_dtype;
    go.deterministic = o.deterministic;
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
    so.prefix_caching = o.prefix_caching;
    so.overlap = o.overlap;
    so.hidden_size = hidden;
    Scheduler scheduler(group, so, &metrics);

    ApiContext ctx;
    ctx.tokenizer = &tokenizer;
    ctx.chat_template = c->blob(container::Section::ChatTemplate).value_or("");
    ctx.bos_token = tokenizer.bos_token().value_or("");
    ctx.eos_token = tokenizer.eos_token().value_or("");
    if (const auto* ids = meta("gen.eos_token_ids")) ctx.stop_token_ids = parse_token_ids(ids->s, "gen.eos_token_ids");
    ctx.model_name = name;
    ctx.tool_call_parser = o.tool_call_parser;
    ctx.options.responses_store = o.responses_store;
    ctx.service = &scheduler;
    ctx.max_context = 0;  // the scheduler's: --max-ctx, or what the KV cache holds when that is less
    ctx.embeddings = embeddings;
    ctx.embed_only = embed_only;
    ctx.embedding_pooling = meta("embedding.pooling") && meta("embedding.pooling")->s == "mean" ? Pooling::Mean : Pooling::Last;
    ctx.embedding_normalize = !meta("embedding.normalize") || meta("embedding.normalize")->s != "false";

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

}  // namespace radiance::frontend
