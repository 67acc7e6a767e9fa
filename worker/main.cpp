// radiance-worker --rank R --world N --connect ADDR [--transport shm|grpc] [--connect-timeout S]
//
// One process per rank: joins the front end, loads the container by mmap and the plugins from
// RADIANCE_HOME, plans, owns its KV cache, runs steps, samples on rank 0 and returns the results.
// Exits non-zero with a clear message when it cannot serve; exits 0 when told to shut down.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include "radiance/engine/engine.h"
#include "radiance/ipc/host_comm.h"
#include "radiance/ipc/shm_ring.h"
#include "radiance/ipc/step_codec.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"
#include "list_kernels.h"
#include "row_pool.h"
#include "sampler.h"
#include "session.h"

using namespace radiance;
namespace pb = radiance::v1;

namespace {

struct Options {
    int rank = -1, world = 1;
    std::string connect, transport = "auto";
    int connect_timeout_s = 30;
    bool debug_selection = false;
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw Error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--rank")
            o.rank = std::stoi(value());
        else if (a == "--world")
            o.world = std::stoi(value());
        else if (a == "--connect")
            o.connect = value();
        else if (a == "--transport")
            o.transport = value();
        else if (a == "--connect-timeout")
            o.connect_timeout_s = std::stoi(value());
        else if (a == "--debug-selection")
            o.debug_selection = true;
        else
            throw Error("unknown option " + a);
    }
    if (o.rank < 0 || o.rank >= o.world) throw Error("--rank must be in [0, --world)");
    if (o.connect.empty()) throw Error("--connect ADDR is required (unix:/path or host:port)");
    if (o.transport != "auto" && o.transport != "shm" && o.transport != "grpc") throw Error("--transport must be shm, grpc or auto");
    return o;
}

pb::DeviceFacts facts() {
    pb::DeviceFacts f;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    f.set_hostname(host);
    f.set_host_cores(static_cast<int>(std::thread::hardware_concurrency()));
    return f;
}

// The group's communicator as steps name it: a step naming a new generation makes this rank
// attach to it first (after a peer restarted, the whole group meets in a fresh one).
struct CommState {
    RadComm comm{};
    std::unique_ptr<ipc::HostComm> host;
    uint64_t generation = 0;
    int rank = 0;
    void follow(const ipc::StepMessage& m) {
        if (m.comm_name.empty() || m.comm_generation == generation) return;
        host = ipc::HostComm::attach(m.comm_name, rank);
        host->fill(&comm);
        generation = m.comm_generation;
    }
};

// A failpoint for the front end's tests: RADIANCE_TEST_CRASH_ON_TOKEN=N makes this worker abort on
// any step holding token N, as a request that crashes its rank every time would (the scheduler
// must give up on that request, not re-run it forever). Unset in production: -1, never matches.
int32_t crash_token() {
    static const int32_t t = [] {
        const char* v = std::getenv("RADIANCE_TEST_CRASH_ON_TOKEN");
        return v && *v ? static_cast<int32_t>(std::strtol(v, nullptr, 10)) : -1;
    }();
    return t;
}

// Runs one encoded step; returns the encoded result.
std::string run_step(engine::Engine& eng, CommState& comm, const std::string& bytes, bool sample_here, std::vector<float>& logits,
                     worker::RowPool& rows) {
    ipc::ResultMessage res;
    try {
        ipc::StepMessage m = ipc::decode_step(bytes);
        if (crash_token() >= 0 && std::find(m.batch.tokens.begin(), m.batch.tokens.end(), crash_token()) != m.batch.tokens.end()) {
            std::cerr << "radiance-worker: RADIANCE_TEST_CRASH_ON_TOKEN " << crash_token() << " in step " << m.step_id << ": aborting\n";
            std::abort();
        }
        res.step_id = m.step_id;
        comm.follow(m);
        // Rows that need nothing but greedy or plain sampling are picked where the logits are (on a
        // card: no copy back); a rank that does not sample needs no logits at all.
        const size_t n_out = m.batch.out_ids.size();
        const bool card_samples = worker::samples_on_card(eng);
        const size_t mask_words = static_cast<size_t>((eng.vocab() + 31) / 32);
        for (const auto& s : m.samples)
            if (!s.allowed.empty() && s.allowed.size() != mask_words)
                throw Error("bad step: a structured-output mask of " + std::to_string(s.allowed.size()) + " words for a vocabulary of " +
                            std::to_string(eng.vocab()) + " (" + std::to_string(mask_words) + " words)");
        std::vector<engine::CardDraw> draws(n_out);
        for (auto& d : draws) d.on_card = true;
        if (sample_here)
            for (size_t i = 0; i < n_out; ++i)
                draws[i] = !m.want_logits && i < m.samples.size() ? worker::card_draw(m.samples[i], card_samples, eng.mask_on_card())
                                                                  : engine::CardDraw{};
        std::vector<int32_t> tokens;
        eng.step(m.batch, logits, draws, tokens);
        if (sample_here) {
            const int64_t V = eng.vocab();
            res.tokens.resize(m.samples.size());
            std::vector<size_t> on_host;  // rows whose logits came back, drawn in parallel
            for (size_t i = 0; i < m.samples.size(); ++i) {
                if (!tokens.empty() && tokens[i] >= 0)
                    res.tokens[i].token = tokens[i];
                else
                    on_host.push_back(i);
            }
            rows.run(on_host.size(), [&](size_t k) {
                const size_t i = on_host[k];
                res.tokens[i] = worker::sample_row(&logits[i * V], V, m.samples[i]);
            });
            if (m.want_logits) res.logits = logits;
        }
    } catch (const std::exception& e) {
        res.status = 1;
        res.error = e.what();
    }
    return ipc::encode(res);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::string(argv[1]) == "--list-kernels")
        return worker::list_kernels(argc >= 4 && std::string(argv[2]) == "--radiance-home" ? argv[3] : "");
    Options o;
    try {
        o = parse(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "radiance-worker: " << e.what() << "\n"
                  << "usage: radiance-worker --rank R --world N --connect ADDR [--transport shm|grpc]\n"
                  << "       radiance-worker --list-kernels [--radiance-home HOMES]\n";
        return 2;
    }
    std::unique_ptr<worker::Session> session;
    pb::Welcome welcome;
    try {
        session = std::make_unique<worker::Session>(o.connect, o.connect_timeout_s);
        pb::Hello h;
        h.set_protocol(pb::PROTOCOL_V1);
        h.set_rank(o.rank);
        h.set_world_size(o.world);
        h.set_pid(getpid());
        *h.mutable_facts() = facts();
        h.set_want_grpc_steps(o.transport == "grpc");
        welcome = session->join(h);
    } catch (const std::exception& e) {
        std::cerr << "radiance-worker rank " << o.rank << ": " << e.what() << "\n";
        return 3;
    }
    session->start_background();

    // Load and plan; anything that stops this rank from serving is reported to the front end too.
    std::unique_ptr<engine::Engine> eng;
    std::unique_ptr<ipc::ShmRing> ring;
    CommState comm;
    comm.rank = o.rank;
    comm.comm.rank = o.rank;
    comm.comm.world = o.world;
    try {
        const auto& c = welcome.config();
        core::LoadOptions lo;
        lo.homes = core::resolve_homes(c.radiance_home());
        if (!c.kernels().empty()) lo.kernels = str::split(c.kernels(), ",");
        lo.machine.device_ordinal = o.rank;  // one card per rank
        auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
        auto model = std::shared_ptr<const container::Reader>(container::Reader::open(welcome.model_path()));
        engine::EngineOptions eo;
        eo.rank = o.rank;
        eo.world_size = o.world;
        eo.max_tok = c.max_tok();
        eo.max_seqs = c.max_seqs();
        eo.max_ctx = c.max_ctx();
        eo.max_out_rows = c.max_out_rows();
        eo.kv_blocks = c.kv_blocks();
        if (c.memory_utilization() > 0) eo.memory_utilization = c.memory_utilization();
        eo.select.accept_reference = c.accept_reference();
        eo.placement = c.placement().empty() ? "auto" : c.placement();
        eo.graphs = c.graphs();
        eo.comm = &comm.comm;
        eng = engine::Engine::create(reg, model, eo);
        if (o.debug_selection) std::cerr << "rank " << o.rank << " kernel selection:\n" << eng->selection_report();
        if (!welcome.shm_name().empty()) ring = ipc::ShmRing::open(welcome.shm_name());
        pb::WorkerMessage m;
        auto* l = m.mutable_loaded();
        l->set_kv_block_size(eng->kv_block_size());
        l->set_kv_blocks(eng->kv_blocks());
        l->set_vocab(eng->vocab());
        l->set_max_out_rows(eng->max_out_rows());
        l->set_summary(std::to_string(eng->declaration().ops.size()) + " ops, arena " + std::to_string(eng->arena_bytes()) + " B, KV " +
                       std::to_string(eng->kv_bytes()) + " B" + (worker::samples_on_card(*eng) ? ", sampling on the card" : ""));
        session->send(m);
    } catch (const std::exception& e) {
        std::cerr << "radiance-worker rank " << o.rank << ": cannot serve: " << e.what() << "\n";
        pb::WorkerMessage m;
        m.mutable_failure()->set_message(e.what());
        session->send(m);
        return 1;
    }

    std::vector<float> logits;
    std::string req;
    const bool sample_here = o.rank == 0;
    worker::RowPool rows(sample_here ? worker::RowPool::default_threads() : 0);
    while (!session->stop_requested()) {
        if (session->connection_lost()) {
            std::cerr << "radiance-worker rank " << o.rank << ": lost the front end; exiting\n";
            return 4;
        }
        bool got = ring ? ring->pop_request(&req, 100000) : session->next_step(&req, 100);
        if (!got) continue;
        std::string res = run_step(*eng, comm, req, sample_here, logits, rows);
        session->steps_done++;
        bool sent;
        if (ring) {
            sent = ring->push_result(res);
        } else {
            pb::WorkerMessage m;
            m.mutable_result()->set_body(res);
            sent = session->send(m);
        }
        if (!sent) {
            std::cerr << "radiance-worker rank " << o.rank << ": cannot return a step result\n";
            return 5;
        }
    }
    log::info("rank ", o.rank, " shutting down: ", session->stop_reason());
    return 0;
}
