// step_runner.cpp: steps queued on the card or run at once, answered in order (step_runner.h).
#include "step_runner.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <span>

#include "radiance/util/error.h"
#include "sampler.h"

namespace radiance::worker {

namespace {

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

}  // namespace

void CommState::follow(const ipc::StepMessage& m) {
    if (m.comm_name.empty() || m.comm_generation == generation) return;
    host = ipc::HostComm::attach(m.comm_name, rank);
    host->fill(&comm);
    generation = m.comm_generation;
}

bool feeds_greedy(const engine::Engine& eng, int world) { return eng.placement() == "host" ? world == 1 : eng.greedy_on_card(); }

bool feeds_sampled(const engine::Engine& eng, int world) { return eng.placement() == "host" ? world == 1 : samples_on_card(eng); }

StepRunner::StepRunner(engine::Engine& eng, CommState& comm, bool sample_here, RowPool& rows)
    : eng_(eng), comm_(comm), sample_here_(sample_here), rows_(rows), on_card_(eng.placement() != "host") {}

std::string StepRunner::refuse(uint64_t step_id, const std::string& why) {
    ipc::ResultMessage res;
    res.step_id = step_id;
    res.status = 1;
    res.error = why;
    return ipc::encode(res);
}

void StepRunner::take(const std::string& bytes, std::vector<std::string>& out) {
    ipc::StepMessage m;
    try {
        m = ipc::decode_step(bytes);
    } catch (const std::exception& e) {
        collect_all(out);
        last_ok_ = false;
        out.push_back(refuse(0, e.what()));
        return;
    }
    if (crash_token() >= 0 && std::find(m.batch.tokens.begin(), m.batch.tokens.end(), crash_token()) != m.batch.tokens.end()) {
        std::cerr << "radiance-worker: RADIANCE_TEST_CRASH_ON_TOKEN " << crash_token() << " in step " << m.step_id << ": aborting\n";
        std::abort();
    }
    const bool follows = last_ok_ && last_id_ + 1 == m.step_id;
    last_id_ = m.step_id;
    last_ok_ = false;
    if (!m.fed_from.empty() && !follows) {
        collect_all(out);
        out.push_back(refuse(m.step_id, "bad step: rows fed from step " + std::to_string(m.step_id - 1) +
                                            ", which this rank did not run just before (or which failed)"));
        return;
    }
    try {
        // A new generation of the group: what is queued ran with the old communicator.
        if (!m.comm_name.empty() && m.comm_generation != comm_.generation) collect_all(out);
        comm_.follow(m);
        // Rows that need nothing but greedy or plain sampling are picked where the logits are (on
        // a card: no copy back). A rank that does not sample stages the same draws for them, so
        // a token fed to the next step is the one rank 0 answers, and a cheap greedy stand-in for
        // the others (it needs no logits at all).
        const size_t n_out = m.batch.out_ids.size();
        const bool card_samples = samples_on_card(eng_);
        const size_t mask_words = static_cast<size_t>((eng_.vocab() + 31) / 32);
        for (const auto& s : m.samples)
            if (!s.allowed.empty() && s.allowed.size() != mask_words)
                throw Error("bad step: a structured-output mask of " + std::to_string(s.allowed.size()) + " words for a vocabulary of " +
                            std::to_string(eng_.vocab()) + " (" + std::to_string(mask_words) + " words)");
        std::vector<engine::CardDraw> draws(n_out);
        // (a step with embedding rows runs at once: its hidden rows come back with its answer)
        bool every_row_on_card = on_card_ && eng_.greedy_on_card() && m.batch.hidden_ids.empty();
        for (size_t i = 0; i < n_out; ++i) {
            // (a constrained row's mask is staged when the step is queued: `draws` may point into m)
            if (!m.want_logits && i < m.samples.size()) draws[i] = card_draw(m.samples[i], card_samples, eng_.mask_on_card());
            if (!draws[i].on_card && !sample_here_) {
                draws[i] = engine::CardDraw{};
                draws[i].on_card = true;
            }
            every_row_on_card = every_row_on_card && draws[i].on_card;
        }
        if (every_row_on_card) {
            if (queued_.size() >= 2) collect_oldest(out);  // the engine queues two at most
            eng_.enqueue(m.batch, draws, m.fed_from);
            queued_.push_back({m.step_id, sample_here_ ? m.samples.size() : 0});
            last_ok_ = true;
            return;  // answered once collected: the caller looks for the next step first
        }
        collect_all(out);  // a step run at once comes after every queued one
        out.push_back(run_now(m, draws));
    } catch (const std::exception& e) {
        collect_all(out);
        last_ok_ = false;
        out.push_back(refuse(m.step_id, e.what()));
    }
}

std::string StepRunner::run_now(ipc::StepMessage& m, const std::vector<engine::CardDraw>& draws) {
    ipc::ResultMessage res;
    res.step_id = m.step_id;
    try {
        std::span<const int32_t> fed = m.fed_from;
        if (!fed.empty() && !on_card_) {  // a host plan: the tokens this worker sampled last step
            if (!sample_here_) throw Error("bad step: rows fed from the step before on a host plan of more than one rank");
            for (size_t i = 0; i < fed.size(); ++i) {
                const auto src = static_cast<size_t>(fed[i]);
                if (fed[i] < 0 || src >= last_tokens_.size() || last_tokens_[src] < 0)
                    throw Error("bad step: a row fed from out row " + std::to_string(fed[i]) + " of a step that sampled " +
                                std::to_string(last_tokens_.size()));
                m.batch.tokens[i] = last_tokens_[src];
            }
            fed = {};
        }
        std::vector<int32_t> tokens;
        eng_.step(m.batch, logits_, draws, tokens, fed);
        if (sample_here_) {
            const int64_t V = eng_.vocab();
            res.tokens.resize(m.samples.size());
            std::vector<size_t> on_host;  // rows whose logits came back, drawn in parallel
            for (size_t i = 0; i < m.samples.size(); ++i) {
                if (!tokens.empty() && tokens[i] >= 0)
                    res.tokens[i].token = tokens[i];
                else
                    on_host.push_back(i);
            }
            rows_.run(on_host.size(), [&](size_t k) {
                const size_t i = on_host[k];
                res.tokens[i] = sample_row(&logits_[i * V], V, m.samples[i]);
            });
            if (m.want_logits) res.logits = logits_;
            if (!m.batch.hidden_ids.empty()) {  // embeddings: rank 0's rows answer for every rank
                res.hidden_width = static_cast<int32_t>(eng_.hidden_width());
                res.hidden = eng_.hidden_rows();
            }
        }
        last_tokens_.assign(m.batch.out_ids.size(), -1);
        for (size_t i = 0; i < res.tokens.size(); ++i) last_tokens_[i] = res.tokens[i].token;
        last_ok_ = true;
    } catch (const std::exception& e) {
        res.status = 1;
        res.error = e.what();
        res.tokens.clear();
        last_ok_ = false;
        last_tokens_.clear();
    }
    return ipc::encode(res);
}

void StepRunner::collect_oldest(std::vector<std::string>& out) {
    const Queued q = queued_.front();
    queued_.pop_front();
    ipc::ResultMessage res;
    res.step_id = q.step_id;
    try {
        std::vector<int32_t> tokens;
        eng_.collect(tokens);
        res.tokens.resize(q.samples);
        for (size_t i = 0; i < q.samples; ++i) res.tokens[i].token = tokens[i];
    } catch (const std::exception& e) {
        out.push_back(refuse(q.step_id, e.what()));
        // The engine dropped what was queued after it: that cannot have run either.
        for (const Queued& later : queued_)
            out.push_back(refuse(later.step_id, std::string("a step queued before it failed: ") + e.what()));
        queued_.clear();
        last_ok_ = false;
        return;
    }
    out.push_back(ipc::encode(res));
}

void StepRunner::collect_all(std::vector<std::string>& out) {
    while (!queued_.empty()) collect_oldest(out);
}

}  // namespace radiance::worker
