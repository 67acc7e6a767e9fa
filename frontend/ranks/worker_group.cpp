// worker_group.cpp: control server, supervision and the step fan-out.
#include "worker_group.h"

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

#include "radiance/control.grpc.pb.h"
#include "radiance/ipc/host_comm.h"
#include "radiance/ipc/shm_ring.h"
#include "radiance/util/error.h"
#include "radiance/util/child_process.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

namespace pb = radiance::v1;
using Clock = std::chrono::steady_clock;
using Stream = grpc::ServerReaderWriter<pb::FrontMessage, pb::WorkerMessage>;

const char* rank_state_name(RankState s) {
    switch (s) {
    case RankState::Absent: return "absent";
    case RankState::Joined: return "joined";
    case RankState::Loading: return "loading";
    case RankState::Ready: return "ready";
    case RankState::Failed: return "failed";
    case RankState::Down: return "down";
    }
    return "?";
}

namespace {

std::string this_host() {
    char b[256] = {};
    gethostname(b, sizeof b - 1);
    return b;
}

std::string exit_cause(int status) {
    if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int s = WTERMSIG(status);
        const char* n = sigabbrev_np(s);
        return "killed by signal " + std::to_string(s) + (n ? std::string(" (SIG") + n + ")" : "");
    }
    return "ended with status " + std::to_string(status);
}

// A worker that ended itself badly (a fault signal, abort, a non-zero exit), as opposed to being
// stopped from outside (SIGKILL, SIGTERM: an operator, a test, the OOM killer).
bool crashed(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status) != 0;
    if (!WIFSIGNALED(status)) return false;
    const int sig = WTERMSIG(status);
    return sig != SIGKILL && sig != SIGTERM && sig != SIGINT;
}

// Slots of a rank's step ring in each direction: two outstanding steps and the answers owed for
// steps given up on.
constexpr uint32_t kRingSlots = 4;

}  // namespace

struct Rank {
    int index = 0;
    RankState state = RankState::Absent;
    int pid = 0;
    std::string host;
    uint64_t session = 0;
    std::shared_ptr<ipc::ShmRing> ring;  // shared: a step in flight keeps it mapped after the rank goes down
    Stream* stream = nullptr;
    std::shared_ptr<std::mutex> write_mu = std::make_shared<std::mutex>();
    std::deque<std::string> grpc_results;
    // Answers this rank's ring owes: steps pushed to it whose results were not read yet. Steps
    // given up on (lost with another rank) are answered all the same; send() reads those before
    // they could fill the ring.
    uint64_t answers_owed = 0;
    Clock::time_point last_heartbeat;
    PlanInfo plan;
    std::string failure;
    pid_t child = 0;
    int restarts = 0;
};

struct WorkerGroup::Impl final : pb::Control::Service {
    GroupOptions opts;
    mutable std::mutex mu;
    std::condition_variable cv;
    std::vector<Rank> ranks;
    std::unique_ptr<grpc::Server> server;
    std::string addr, socket_dir, host = this_host();
    std::mutex threads_mu;  // spawn() runs from reaper threads too
    std::vector<std::thread> threads;
    std::atomic<bool> stopping{false};
    int64_t crashes = 0;  // workers that crashed or hung (guarded by mu)
    uint64_t joins = 0;   // workers accepted so far (guarded by mu)
    // The KV blocks the front end schedules, fixed by the first plan() (guarded by mu): ranks
    // joining later are told to hold exactly these (with kv_blocks 0 each would size its own
    // from the memory it finds).
    int64_t pinned_kv_blocks = 0;
    uint64_t generation = 0;
    std::unique_ptr<ipc::HostComm> comm;  // the current generation's communicator (world > 1)
    bool comm_aborted = false;
    uint64_t step_seq = 0;  // the last step id sent
    std::function<void(const RankEvent&)> cb;
    // Steps sent and not answered yet, oldest first (the scheduler's thread alone sends and
    // receives): each with the ranks it went to, as they were then.
    struct Target {
        int rank;
        std::shared_ptr<ipc::ShmRing> ring;
        Stream* stream;
        std::shared_ptr<std::mutex> wmu;
        uint64_t session;
    };
    struct Sent {
        uint64_t id = 0;
        std::vector<Target> targets;
        Clock::time_point deadline;
    };
    std::deque<Sent> sent;

    // Caller holds mu.
    void emit(Rank& r, const std::string& detail) {
        if (cb) cb(RankEvent{r.index, r.state, r.pid, detail});
    }
    void mark_down(Rank& r, const std::string& cause) {
        if (r.state == RankState::Down || r.state == RankState::Absent) return;
        r.state = RankState::Down;
        if (comm) {
            comm->abort();  // peers blocked in a collective give up at once
            comm_aborted = true;
        }
        if (stopping)
            log::info("rank ", r.index, " (pid ", r.pid, ") ", cause);  // an orderly shutdown
        else
            log::error("rank ", r.index, " (pid ", r.pid, ") ", cause);
        r.ring.reset();
        emit(r, cause);
        cv.notify_all();
    }

    // A step slot holds any step the scheduler may build, which keeps each step within it: the
    // step's tokens; block tables for every sequence at the full context (blocks of 8 tokens or
    // more: every kernel library's so far; smaller ones only fit fewer rows a step); every out
    // row's sampling spec; and the penalty token lists (4 + 8 bytes a token) of four rows at the
    // full context. More penalty rows than that wait for the next step. Sized from the context
    // and not per row, so a 128k-token context keeps the ring near what 4k needed per row. Every
    // out row may carry a structured-output mask (a bit per vocabulary id).
    uint64_t request_slot_bytes() const {
        const uint64_t ctx = static_cast<uint64_t>(opts.max_ctx) + 1;
        const uint64_t mask = opts.vocab > 0 ? (static_cast<uint64_t>(opts.vocab) + 31) / 32 * 4 : 0;
        return (1u << 20) + static_cast<uint64_t>(opts.max_tok) * 16 + static_cast<uint64_t>(opts.max_seqs) * (ctx / 8 + 2) * 4 +
               static_cast<uint64_t>(opts.max_out_rows) * (512 + mask) + 4 * ctx * 12;
    }
    uint64_t result_slot_bytes() const {
        uint64_t b = 65536 + static_cast<uint64_t>(opts.max_out_rows) * (64 + 8 * 32);
        if (opts.return_logits) b += static_cast<uint64_t>(opts.max_out_rows) * static_cast<uint64_t>(opts.vocab) * 4;
        b += static_cast<uint64_t>(opts.max_tok) * static_cast<uint64_t>(std::max<int64_t>(opts.hidden_width, 0)) * 4;
        return b;
    }

    // Reads and drops the answers a rank's ring holds for steps given up on (those before the
    // outstanding ones: answers come in order), waiting for them only when the ring could not
    // take one more answer otherwise. Caller holds no lock; the step loop's thread.
    void drop_stale_answers(const Target& t, Clock::time_point deadline) {
        for (;;) {
            uint64_t owed;
            {
                std::lock_guard<std::mutex> lk(mu);
                const Rank& r = ranks[t.rank];
                if (r.session != t.session || r.state != RankState::Ready)
                    throw RankLost(t.rank, "rank " + std::to_string(t.rank) + " went " + rank_state_name(r.state));
                owed = r.answers_owed;
            }
            if (owed <= sent.size()) return;
            const bool must = owed + 1 > kRingSlots;
            std::string stale;
            if (t.ring->pop_result(&stale, must ? 50000 : 0)) {
                std::lock_guard<std::mutex> lk(mu);
                Rank& r = ranks[t.rank];
                if (r.session == t.session && r.answers_owed) r.answers_owed--;
                continue;
            }
            if (!must) return;
            if (Clock::now() > deadline)
                throw RankLost(t.rank, "rank " + std::to_string(t.rank) + " did not answer the steps given up on in time");
        }
    }

    grpc::Status Session(grpc::ServerContext*, Stream* stream) override {
        pb::WorkerMessage msg;
        if (!stream->Read(&msg) || !msg.has_hello()) return {grpc::StatusCode::INVALID_ARGUMENT, "expected Hello first"};
        const pb::Hello h = msg.hello();
        auto refuse = [&](const std::string& why) {
            log::warn("refused a worker (rank ", h.rank(), ", pid ", h.pid(), "): ", why);
            pb::FrontMessage f;
            f.mutable_welcome()->set_accepted(false);
            f.mutable_welcome()->set_reason(why);
            stream->Write(f);
            return grpc::Status::OK;
        };
        if (h.protocol() != pb::PROTOCOL_V1) return refuse("protocol version " + std::to_string(h.protocol()) + ", front end speaks 1");
        if (h.world_size() != opts.world_size)
            return refuse("world size " + std::to_string(h.world_size()) + ", the group has " + std::to_string(opts.world_size));
        if (h.rank() < 0 || h.rank() >= opts.world_size) return refuse("rank " + std::to_string(h.rank()) + " is outside the group");
        uint64_t my_session;
        pb::FrontMessage welcome;
        {
            std::lock_guard<std::mutex> lk(mu);
            if (stopping) return refuse("the front end is shutting down");
            Rank& r = ranks[h.rank()];
            if (r.state == RankState::Joined || r.state == RankState::Loading || r.state == RankState::Ready)
                return refuse("rank " + std::to_string(h.rank()) + " is already served by pid " + std::to_string(r.pid));
            r.state = RankState::Loading;
            ++joins;
            r.pid = h.pid();
            r.host = h.facts().hostname();
            r.failure.clear();
            r.grpc_results.clear();
            r.stream = stream;
            r.last_heartbeat = Clock::now();
            my_session = ++r.session;
            auto* w = welcome.mutable_welcome();
            w->set_accepted(true);
            w->set_model_path(opts.model_path);
            w->set_generation(generation);
            auto* c = w->mutable_config();
            c->set_max_tok(opts.max_tok);
            c->set_max_seqs(opts.max_seqs);
            c->set_max_ctx(opts.max_ctx);
            c->set_max_out_rows(opts.max_out_rows);
            c->set_kv_blocks(pinned_kv_blocks > 0 ? pinned_kv_blocks : opts.kv_blocks);
            c->set_memory_utilization(opts.memory_utilization);
            c->set_kv_cache_dtype(opts.kv_cache_dtype);
            c->set_deterministic(opts.deterministic);
            c->set_kernels(opts.kernels);
            c->set_radiance_home(opts.radiance_home);
            c->set_accept_reference(opts.accept_reference);
            c->set_return_logits(opts.return_logits);
            c->set_placement(opts.placement);
            c->set_graphs(opts.graphs);
            const bool shm = !h.want_grpc_steps() && !opts.force_grpc && r.host == host;
            if (shm) {
                std::string name =
                    "/radiance-" + std::to_string(getpid()) + "-r" + std::to_string(r.index) + "-s" + std::to_string(my_session);
                try {
                    r.ring = ipc::ShmRing::create(name, kRingSlots, request_slot_bytes(), result_slot_bytes());
                    r.answers_owed = 0;
                    w->set_shm_name(name);
                    w->set_shm_bytes(r.ring->bytes());
                } catch (const std::exception& e) {
                    log::warn("rank ", r.index, ": no shared-memory ring (", e.what(), "); steps go over gRPC");
                }
            }
            log::info("rank ", r.index, " (pid ", r.pid, ", ", r.host, ") joined; steps over ", r.ring ? "shared memory" : "gRPC");
            emit(r, "joined");
        }
        if (!stream->Write(welcome)) {
            std::lock_guard<std::mutex> lk(mu);
            mark_down(ranks[h.rank()], "lost its connection while joining");
            return grpc::Status::OK;
        }
        while (stream->Read(&msg)) {
            std::lock_guard<std::mutex> lk(mu);
            Rank& r = ranks[h.rank()];
            if (r.session != my_session) break;
            r.last_heartbeat = Clock::now();
            if (msg.has_loaded()) {
                const auto& l = msg.loaded();
                r.plan = PlanInfo{l.kv_block_size(), l.kv_blocks(),     l.vocab(),       l.max_out_rows(),
                                  l.feeds_greedy(),  l.feeds_sampled(), l.hidden_width()};
                r.state = RankState::Ready;
                log::info("rank ", r.index, " (pid ", r.pid, ") ready: ", l.summary());
                emit(r, "ready");
                cv.notify_all();
            } else if (msg.has_failure()) {
                r.state = RankState::Failed;
                r.failure = msg.failure().message();
                log::error("rank ", r.index, " (pid ", r.pid, ") cannot serve: ", r.failure);
                emit(r, r.failure);
                cv.notify_all();
            } else if (msg.has_result()) {
                r.grpc_results.push_back(msg.result().body());
                cv.notify_all();
            }
        }
        std::lock_guard<std::mutex> lk(mu);
        Rank& r = ranks[h.rank()];
        if (r.session == my_session) {
            r.stream = nullptr;
            if (r.state != RankState::Failed) mark_down(r, "lost its connection to the front end");
        }
        return grpc::Status::OK;
    }

    void spawn(int rank) {
        if (stopping) return;
        std::string bin = opts.worker_binary.empty() ? util::self_dir() + "/radiance-worker" : opts.worker_binary;
        std::vector<std::string> args = {bin,         "--rank", std::to_string(rank), "--world", std::to_string(opts.world_size),
                                         "--connect", addr};
        if (opts.force_grpc) args.insert(args.end(), {"--transport", "grpc"});
        args.insert(args.end(), opts.worker_args.begin(), opts.worker_args.end());
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid = fork();
        if (pid < 0) throw Error(std::string("fork for rank ") + std::to_string(rank) + ": " + std::strerror(errno));
        if (pid == 0) {
            execv(argv[0], argv.data());
            std::fprintf(stderr, "radiance: cannot run %s: %s\n", argv[0], std::strerror(errno));
            _exit(127);
        }
        {
            std::lock_guard<std::mutex> lk(mu);
            ranks[rank].child = pid;
        }
        std::lock_guard<std::mutex> tl(threads_mu);
        threads.emplace_back([this, rank, pid] { reap(rank, pid); });
    }

    void reap(int rank, pid_t pid) {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        std::unique_lock<std::mutex> lk(mu);
        Rank& r = ranks[rank];
        if (r.child != pid) return;
        r.child = 0;
        const std::string cause = exit_cause(status);
        if (!stopping && crashed(status)) ++crashes;
        if (stopping)
            log::info("rank ", rank, " (pid ", pid, ") ", cause);
        else if (r.state == RankState::Down || r.state == RankState::Failed || r.state == RankState::Absent)
            log::error("rank ", rank, " (pid ", pid, ") ", cause);
        else
            mark_down(r, cause);
        if (stopping || !opts.respawn || r.state == RankState::Failed) return;  // a rank that cannot load is not retried
        const int n = ++r.restarts;
        lk.unlock();
        // Back off a little on repeated crashes so a crash loop does not spin the machine.
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(100 * (n - 1), 2000)));
        if (stopping) return;
        log::warn("restarting rank ", rank, " (restart ", n, ")");
        try {
            spawn(rank);
        } catch (const std::exception& e) {
            log::error("cannot restart rank ", rank, ": ", e.what());
        }
    }

    void watchdog() {
        while (!stopping) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            std::lock_guard<std::mutex> lk(mu);
            for (Rank& r : ranks) {
                if (r.state != RankState::Ready && r.state != RankState::Loading) continue;
                auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - r.last_heartbeat);
                if (silent > opts.heartbeat_timeout) {
                    const pid_t child = r.child;
                    mark_down(r, "hung: no heartbeat for " + std::to_string(silent.count()) + " ms");
                    ++crashes;                            // a hang is the worker's own failure, like a crash
                    if (child > 0) kill(child, SIGKILL);  // a hung spawned worker is ended; its reaper logs it
                }
            }
        }
    }
};

WorkerGroup::WorkerGroup(GroupOptions opts) : impl_(std::make_unique<Impl>()) {
    impl_->opts = std::move(opts);
    impl_->ranks.resize(static_cast<size_t>(impl_->opts.world_size));
    for (int i = 0; i < impl_->opts.world_size; ++i) impl_->ranks[i].index = i;
}

WorkerGroup::~WorkerGroup() { shutdown(); }

void WorkerGroup::start() {
    Impl& m = *impl_;
    if (m.opts.world_size < 1) throw Error("the group needs at least one rank");
    m.addr = m.opts.listen;
    if (m.addr.empty()) {
        m.socket_dir = (std::filesystem::temp_directory_path() / ("radiance-" + std::to_string(getpid()))).string();
        std::filesystem::create_directories(m.socket_dir);
        m.addr = "unix:" + m.socket_dir + "/control.sock";
    }
    grpc::ServerBuilder b;
    int port = 0;
    b.AddListeningPort(m.addr, grpc::InsecureServerCredentials(), &port);
    b.RegisterService(&m);
    b.SetMaxReceiveMessageSize(512 << 20);
    b.SetMaxSendMessageSize(512 << 20);
    m.server = b.BuildAndStart();
    if (!m.server) throw Error("cannot serve the control plane on " + m.addr);
    if (m.addr.rfind("unix:", 0) != 0 && port > 0) {  // an ephemeral TCP port: report the real one
        auto colon = m.addr.rfind(':');
        m.addr = m.addr.substr(0, colon) + ":" + std::to_string(port);
    }
    log::info("control plane on ", m.addr, "; waiting for ", m.opts.world_size, " rank(s)", m.opts.spawn ? " (spawning them)" : "");
    {
        std::lock_guard<std::mutex> tl(m.threads_mu);
        m.threads.emplace_back([&m] { m.watchdog(); });
    }
    if (m.opts.spawn)
        for (int r = 0; r < m.opts.world_size; ++r) m.spawn(r);
}

bool WorkerGroup::wait_ready(std::chrono::milliseconds timeout) {
    Impl& m = *impl_;
    std::unique_lock<std::mutex> lk(m.mu);
    return m.cv.wait_for(lk, timeout,
                         [&] {
                             bool all = true;
                             for (auto& r : m.ranks) {
                                 if (r.state == RankState::Failed) return true;
                                 all = all && r.state == RankState::Ready;
                             }
                             return all;
                         }) &&
           failure().empty() && ready();
}

bool WorkerGroup::ready() const {
    for (auto& r : impl_->ranks)
        if (r.state != RankState::Ready) return false;
    return true;
}

std::string WorkerGroup::failure() const {
    for (auto& r : impl_->ranks)
        if (r.state == RankState::Failed) return "rank " + std::to_string(r.index) + ": " + r.failure;
    return "";
}

PlanInfo WorkerGroup::plan() const {
    std::lock_guard<std::mutex> lk(impl_->mu);
    PlanInfo p = impl_->ranks[0].plan;
    // Each rank sized its cache from its own memory: the group holds what the smallest holds.
    for (const auto& r : impl_->ranks) {
        p.kv_blocks = std::min(p.kv_blocks, r.plan.kv_blocks);
        p.feeds_greedy = p.feeds_greedy && r.plan.feeds_greedy;  // a fed row needs its token on every rank
        p.feeds_sampled = p.feeds_sampled && r.plan.feeds_sampled;
        p.hidden_width = std::min(p.hidden_width, r.plan.hidden_width);
    }
    if (impl_->pinned_kv_blocks == 0) impl_->pinned_kv_blocks = p.kv_blocks;
    p.kv_blocks = std::min(p.kv_blocks, impl_->pinned_kv_blocks);
    return p;
}

std::string WorkerGroup::address() const { return impl_->addr; }

void WorkerGroup::on_rank_event(std::function<void(const RankEvent&)> cb) {
    std::lock_guard<std::mutex> lk(impl_->mu);
    impl_->cb = std::move(cb);
}

int64_t WorkerGroup::crashes() const {
    std::lock_guard<std::mutex> lk(impl_->mu);
    return impl_->crashes;
}

uint64_t WorkerGroup::joins() const {
    std::lock_guard<std::mutex> lk(impl_->mu);
    return impl_->joins;
}

std::vector<int> WorkerGroup::restarts() const {
    std::lock_guard<std::mutex> lk(impl_->mu);
    std::vector<int> v;
    for (auto& r : impl_->ranks) v.push_back(r.restarts);
    return v;
}

uint64_t WorkerGroup::step_capacity() const {
    const uint64_t slot = impl_->request_slot_bytes() - 8;
    return impl_->opts.max_step_bytes ? std::min(slot, impl_->opts.max_step_bytes) : slot;
}

std::vector<RankState> WorkerGroup::states() const {
    std::lock_guard<std::mutex> lk(impl_->mu);
    std::vector<RankState> s;
    for (auto& r : impl_->ranks) s.push_back(r.state);
    return s;
}

void WorkerGroup::send(ipc::StepMessage copy) {
    Impl& m = *impl_;
    if (m.sent.size() >= 2) throw Error("two steps are outstanding already (receive one first)");
    Impl::Sent sent;
    {
        std::lock_guard<std::mutex> lk(m.mu);
        copy.step_id = m.step_seq + 1;  // taken once the step is sent, so a worker sees consecutive ids
        for (Rank& r : m.ranks) {
            if (r.state != RankState::Ready) {
                m.sent.clear();  // a step outstanding is lost with the rank
                throw RankLost(r.index, "rank " + std::to_string(r.index) + " is " + rank_state_name(r.state));
            }
            sent.targets.push_back({r.index, r.ring, r.stream, r.write_mu, r.session});
        }
        // A whole group without a live communicator gets a new generation: after a rank re-joins,
        // the survivors and the newcomer meet in a fresh one.
        if (m.opts.world_size > 1) {
            if (!m.comm || m.comm_aborted) {
                ++m.generation;
                m.comm = ipc::HostComm::create("/radiance-" + std::to_string(getpid()) + "-comm-g" + std::to_string(m.generation),
                                               m.opts.world_size, m.opts.comm_slot_bytes);
                m.comm_aborted = false;
            }
            copy.comm_name = m.comm->name();
            copy.comm_generation = m.generation;
        }
    }
    const std::string bytes = ipc::encode(copy);
    if (bytes.size() > step_capacity())
        throw StepTooLarge("a step of " + std::to_string(bytes.size()) + " bytes exceeds the " + std::to_string(step_capacity()) +
                           " a step may take");
    {
        std::lock_guard<std::mutex> lk(m.mu);
        m.step_seq = copy.step_id;
    }
    sent.id = copy.step_id;
    sent.deadline = Clock::now() + m.opts.step_timeout;
    for (auto& t : sent.targets) {
        bool ok;
        if (t.ring) {
            try {
                m.drop_stale_answers(t, sent.deadline);
            } catch (const RankLost&) {
                m.sent.clear();  // a step outstanding is lost with the rank
                throw;
            }
            ok = t.ring->push_request(bytes);
            if (ok) {
                std::lock_guard<std::mutex> lk(m.mu);
                if (Rank& r = m.ranks[t.rank]; r.session == t.session) r.answers_owed++;
            }
        } else {
            pb::FrontMessage f;
            f.mutable_step()->set_step(copy.step_id);
            f.mutable_step()->set_body(bytes);
            std::lock_guard<std::mutex> wl(*t.wmu);
            ok = t.stream && t.stream->Write(f);
        }
        if (!ok) {
            m.sent.clear();
            throw RankLost(t.rank, "rank " + std::to_string(t.rank) + " did not take the step (ring full or stream closed)");
        }
    }
    m.sent.push_back(std::move(sent));
}

ipc::ResultMessage WorkerGroup::receive() {
    Impl& m = *impl_;
    if (m.sent.empty()) throw Error("no step is outstanding");
    const Impl::Sent s = std::move(m.sent.front());
    m.sent.pop_front();
    // Every later step is lost with a rank (the caller re-queues their requests).
    struct ClearOnLoss {
        Impl& m;
        bool armed = true;
        ~ClearOnLoss() {
            if (armed) m.sent.clear();
        }
    } clear_on_loss{m};
    ipc::ResultMessage first;
    // One rank's next encoded result; throws RankLost when the rank goes away or times out.
    auto receive_one = [&](const Impl::Target& t) -> std::string {
        std::string out;
        for (;;) {
            if (t.ring) {
                if (t.ring->pop_result(&out, 50000)) {
                    std::lock_guard<std::mutex> lk(m.mu);
                    Rank& r = m.ranks[t.rank];
                    if (r.session == t.session && r.answers_owed) r.answers_owed--;
                    return out;
                }
            } else {
                std::unique_lock<std::mutex> lk(m.mu);
                Rank& r = m.ranks[t.rank];
                m.cv.wait_for(lk, std::chrono::milliseconds(50),
                              [&] { return !r.grpc_results.empty() || r.session != t.session || r.state != RankState::Ready; });
                if (r.session == t.session && !r.grpc_results.empty()) {
                    out = std::move(r.grpc_results.front());
                    r.grpc_results.pop_front();
                    return out;
                }
            }
            std::lock_guard<std::mutex> lk(m.mu);
            Rank& r = m.ranks[t.rank];
            if (r.session != t.session || r.state != RankState::Ready)
                throw RankLost(t.rank, "rank " + std::to_string(t.rank) + " (pid " + std::to_string(r.pid) + ") went " +
                                           rank_state_name(r.state) + " during step " + std::to_string(s.id));
            if (Clock::now() > s.deadline)
                throw RankLost(t.rank, "rank " + std::to_string(t.rank) + " did not finish step " + std::to_string(s.id) + " in time");
        }
    };
    for (auto& t : s.targets) {
        ipc::ResultMessage res = ipc::decode_result(receive_one(t));
        while (res.step_id < s.id) res = ipc::decode_result(receive_one(t));  // a late answer to an abandoned step
        if (res.step_id != s.id)
            throw RankLost(t.rank, "rank " + std::to_string(t.rank) + " answered step " + std::to_string(res.step_id) + " to step " +
                                       std::to_string(s.id));
        if (res.status != 0) {
            // A collective aborted because a peer went down is that peer's loss, not a bad step.
            std::lock_guard<std::mutex> lk(m.mu);
            for (Rank& r : m.ranks)
                if (r.state != RankState::Ready || r.session != s.targets[static_cast<size_t>(r.index)].session)
                    throw RankLost(r.index, "rank " + std::to_string(r.index) + " went " + rank_state_name(r.state) + " during step " +
                                                std::to_string(s.id));
            clear_on_loss.armed = false;  // the rank refused this step; the later ones are still its to answer
            throw Error("rank " + std::to_string(t.rank) + ": " + res.error);
        }
        if (t.rank == 0) first = std::move(res);
    }
    clear_on_loss.armed = false;
    return first;
}

size_t WorkerGroup::outstanding() const { return impl_->sent.size(); }

void WorkerGroup::restart_rank(int rank) {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> lk(m.mu);
    if (rank < 0 || rank >= m.opts.world_size) throw Error("no rank " + std::to_string(rank));
    Rank& r = m.ranks[rank];
    if (r.child > 0) kill(r.child, SIGKILL);
    m.mark_down(r, "restarted on request");
}

void WorkerGroup::shutdown() {
    Impl& m = *impl_;
    if (m.stopping.exchange(true)) return;
    {
        std::lock_guard<std::mutex> lk(m.mu);
        for (Rank& r : m.ranks) {
            if (!r.stream) continue;
            pb::FrontMessage f;
            f.mutable_shutdown()->set_reason("front end stopping");
            std::lock_guard<std::mutex> wl(*r.write_mu);
            r.stream->Write(f);
        }
    }
    // Give spawned workers a moment to leave by themselves, then end them.
    for (int i = 0; i < 40; ++i) {
        bool any = false;
        {
            std::lock_guard<std::mutex> lk(m.mu);
            for (Rank& r : m.ranks) any = any || r.child > 0;
        }
        if (!any) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // SIGKILL to every spawned worker still there (their reapers log and clear them).
    auto end_workers = [&m] {
        std::lock_guard<std::mutex> lk(m.mu);
        for (Rank& r : m.ranks)
            if (r.child > 0) kill(r.child, SIGKILL);
    };
    end_workers();
    if (m.server) m.server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    // Join until no thread is left: a reaper that was restarting its rank as the group stopped
    // (past its check of `stopping`) may still spawn one more worker and add that worker's reaper,
    // which a single swap would leave unjoined (std::terminate when the group is destroyed) and the
    // worker running. So each round ends the workers there are, then joins what it took.
    for (;;) {
        std::vector<std::thread> threads;
        {
            std::lock_guard<std::mutex> tl(m.threads_mu);
            threads.swap(m.threads);
        }
        if (threads.empty()) break;
        end_workers();
        for (auto& t : threads)
            if (t.joinable()) t.join();
    }
    m.comm.reset();
    for (Rank& r : m.ranks) r.ring.reset();
    if (!m.socket_dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(m.socket_dir, ec);
    }
}

}  // namespace radiance::frontend
