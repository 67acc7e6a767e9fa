// radiance-worker --rank R --world N --connect ADDR [--transport shm|grpc] [--connect-timeout S]
//
// One process per rank: joins the front end, loads the container by mmap and the plugins from
// RADIANCE_HOME, plans, owns its KV cache, runs steps (step_runner.h: queued on a card while the
// next one arrives), samples on rank 0 and returns the results.
// Exits non-zero with a clear message when it cannot serve; exits 0 when told to shut down.
#include <unistd.h>

#include <iostream>
#include <string>
#include <thread>

#include "radiance/engine/engine.h"
#include "radiance/ipc/shm_ring.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"
#include "list_kernels.h"
#include "row_pool.h"
#include "sampler.h"
#include "session.h"
#include "step_runner.h"

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
    worker::CommState comm;
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
        eo.kv_dtype = engine::kv_dtype_of(c.kv_cache_dtype());
        eo.deterministic = c.deterministic();
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
        l->set_feeds_greedy(worker::feeds_greedy(*eng, o.world));
        l->set_hidden_width(eng->hidden_width());
        l->set_feeds_sampled(worker::feeds_sampled(*eng, o.world));
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

    std::string req;
    const bool sample_here = o.rank == 0;
    worker::RowPool rows(sample_here ? worker::RowPool::default_threads() : 0);
    worker::StepRunner runner(*eng, comm, sample_here, rows);
    std::vector<std::string> answers;
    while (!session->stop_requested()) {
        if (session->connection_lost()) {
            std::cerr << "radiance-worker rank " << o.rank << ": lost the front end; exiting\n";
            return 4;
        }
        // With steps queued on the card, the next step is looked for without waiting (the front
        // end sends it while the card runs the last), else the oldest is collected and answered.
        const bool busy = runner.busy();
        const bool got = ring ? ring->pop_request(&req, busy ? 0 : 100000) : session->next_step(&req, busy ? 0 : 100);
        if (got)
            runner.take(req, answers);
        else if (busy)
            runner.collect_oldest(answers);
        for (const std::string& res : answers) {
            session->steps_done++;
            bool sent;
            if (ring && res.size() > ring->result_capacity()) {
                // Refused rather than lost: a result the slot cannot hold (embedding rows of a
                // group whose ring was not sized for them) fails its step, not this rank.
                ipc::ResultMessage big = ipc::decode_result(res), no;
                no.step_id = big.step_id;
                no.status = 1;
                no.error = "the step's result (" + std::to_string(res.size()) + " bytes) exceeds the shared-memory result slot (" +
                           std::to_string(ring->result_capacity()) + " bytes; hidden rows need the group sized for embeddings)";
                sent = ring->push_result(ipc::encode(no));
            } else if (ring) {
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
        answers.clear();
    }
    log::info("rank ", o.rank, " shutting down: ", session->stop_reason());
    return 0;
}
