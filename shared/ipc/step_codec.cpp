#include "radiance/ipc/step_codec.h"

#include <cstring>
#include <type_traits>

#include "radiance/util/error.h"

namespace radiance::ipc {
namespace {

class Writer {
public:
    template <typename T>
    void put(T v) {
        static_assert(std::is_trivially_copyable_v<T>);
        s_.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    template <typename T>
    void vec(const std::vector<T>& v) {
        put<uint32_t>(static_cast<uint32_t>(v.size()));
        if (!v.empty()) s_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    }
    void str(const std::string& v) {
        put<uint32_t>(static_cast<uint32_t>(v.size()));
        s_ += v;
    }
    std::string take() { return std::move(s_); }

private:
    std::string s_;
};

class Reader {
public:
    Reader(const std::string& s, const char* what) : p_(s.data()), end_(s.data() + s.size()), what_(what) {}
    template <typename T>
    T get(const char* field) {
        T v;
        need(sizeof v, field);
        std::memcpy(&v, p_, sizeof v);
        p_ += sizeof v;
        return v;
    }
    template <typename T>
    std::vector<T> vec(const char* field) {
        uint32_t n = get<uint32_t>(field);
        need(static_cast<uint64_t>(n) * sizeof(T), field);
        std::vector<T> v(n);
        if (n) std::memcpy(static_cast<void*>(v.data()), p_, n * sizeof(T));  // T is trivially copyable pairs of scalars
        p_ += n * sizeof(T);
        return v;
    }
    std::string str(const char* field) {
        uint32_t n = get<uint32_t>(field);
        need(n, field);
        std::string v(p_, n);
        p_ += n;
        return v;
    }
    void done() {
        if (p_ != end_) throw Error(std::string(what_) + ": " + std::to_string(end_ - p_) + " trailing bytes");
    }

private:
    void need(uint64_t n, const char* field) {
        if (n > static_cast<uint64_t>(end_ - p_)) throw Error(std::string(what_) + ": field '" + field + "' runs past the message");
    }
    const char* p_;
    const char* end_;
    const char* what_;
};

using Pair = std::pair<int32_t, float>;
using Count = std::pair<int32_t, int32_t>;
static_assert(sizeof(Pair) == 8 && sizeof(Count) == 8 && sizeof(step::TokenLogprob) == 8, "pairs travel as 8 bytes");

}  // namespace

size_t encoded_size(const SampleSpec& s) {
    return 3 * 4 + 4 + 8 + 8 + 3 * 4 + 4 + 4 * 4 + s.params.logit_bias.size() * sizeof(Pair) + s.seen_tokens.size() * 4 +
           s.gen_counts.size() * sizeof(Count) + s.allowed.size() * 4;
}

size_t encoded_size(const StepMessage& m) {
    const auto& b = m.batch;
    size_t n = 4 + 8 + 1 + 4 + m.comm_name.size() + 8 + 6 * 4 + 4 + 4 + 4 + 4 + 4 * m.fed_from.size();
    n += 4 * (b.tokens.size() + b.positions.size() + b.cu_seqlens.size() + b.seq_ids.size() + b.out_ids.size() + b.block_tables.size() +
              b.hidden_ids.size());
    n += 4;  // hidden_ids' count
    for (const auto& s : m.samples) n += encoded_size(s);
    return n;
}

std::string encode(const StepMessage& m) {
    Writer w;
    w.put(kStepMagic);
    w.put(m.step_id);
    w.put<uint8_t>(m.want_logits ? 1 : 0);
    w.str(m.comm_name);
    w.put(m.comm_generation);
    const auto& b = m.batch;
    w.vec(b.tokens);
    w.vec(b.positions);
    w.vec(b.cu_seqlens);
    w.vec(b.seq_ids);
    w.vec(b.out_ids);
    w.vec(b.block_tables);
    w.put(b.block_table_stride);
    w.put(b.n_seq_decode);
    w.vec(m.fed_from);
    w.vec(b.hidden_ids);
    w.put<uint32_t>(static_cast<uint32_t>(m.samples.size()));
    for (auto& s : m.samples) {
        const step::SamplingParams& p = s.params;
        w.put(p.temperature);
        w.put(p.top_p);
        w.put(p.min_p);
        w.put(p.top_k);
        w.put(p.seed.value_or(0));
        w.put(s.draw);
        w.put(p.presence_penalty);
        w.put(p.frequency_penalty);
        w.put(p.repetition_penalty);
        w.put(p.top_logprobs);
        w.vec(p.logit_bias);
        w.vec(s.seen_tokens);
        w.vec(s.gen_counts);
        w.vec(s.allowed);
    }
    return w.take();
}

StepMessage decode_step(const std::string& bytes) {
    Reader r(bytes, "step descriptor");
    if (r.get<uint32_t>("magic") != kStepMagic) throw Error("step descriptor: bad magic");
    StepMessage m;
    m.step_id = r.get<uint64_t>("step_id");
    m.want_logits = r.get<uint8_t>("want_logits") != 0;
    m.comm_name = r.str("comm_name");
    m.comm_generation = r.get<uint64_t>("comm_generation");
    auto& b = m.batch;
    b.tokens = r.vec<int32_t>("tokens");
    b.positions = r.vec<int32_t>("positions");
    b.cu_seqlens = r.vec<int32_t>("cu_seqlens");
    b.seq_ids = r.vec<int32_t>("seq_ids");
    b.out_ids = r.vec<int32_t>("out_ids");
    b.block_tables = r.vec<int32_t>("block_tables");
    b.block_table_stride = r.get<int32_t>("block_table_stride");
    b.n_seq_decode = r.get<int32_t>("n_seq_decode");
    m.fed_from = r.vec<int32_t>("fed_from");
    if (m.fed_from.size() > b.tokens.size()) throw Error("step descriptor: more fed rows than tokens");
    b.hidden_ids = r.vec<int32_t>("hidden_ids");
    uint32_t ns = r.get<uint32_t>("samples");
    if (ns > b.out_ids.size()) throw Error("step descriptor: more sample specs than out rows");
    m.samples.resize(ns);
    for (auto& s : m.samples) {
        step::SamplingParams& p = s.params;
        p.temperature = r.get<float>("temperature");
        p.top_p = r.get<float>("top_p");
        p.min_p = r.get<float>("min_p");
        p.top_k = r.get<int32_t>("top_k");
        p.seed = r.get<uint64_t>("seed");
        s.draw = r.get<int64_t>("draw");
        p.presence_penalty = r.get<float>("presence_penalty");
        p.frequency_penalty = r.get<float>("frequency_penalty");
        p.repetition_penalty = r.get<float>("repetition_penalty");
        p.top_logprobs = r.get<int32_t>("top_logprobs");
        p.logit_bias = r.vec<Pair>("logit_bias");
        s.seen_tokens = r.vec<int32_t>("seen_tokens");
        s.gen_counts = r.vec<Count>("gen_counts");
        s.allowed = r.vec<uint32_t>("allowed");
    }
    r.done();
    return m;
}

std::string encode(const ResultMessage& m) {
    Writer w;
    w.put(kResultMagic);
    w.put(m.step_id);
    w.put(m.status);
    w.str(m.error);
    w.put<uint32_t>(static_cast<uint32_t>(m.tokens.size()));
    for (auto& t : m.tokens) {
        w.put(t.token);
        w.put(t.logprob);
        w.vec(t.top);
    }
    w.vec(m.logits);
    w.put(m.hidden_width);
    w.vec(m.hidden);
    return w.take();
}

ResultMessage decode_result(const std::string& bytes) {
    Reader r(bytes, "step result");
    if (r.get<uint32_t>("magic") != kResultMagic) throw Error("step result: bad magic");
    ResultMessage m;
    m.step_id = r.get<uint64_t>("step_id");
    m.status = r.get<int32_t>("status");
    m.error = r.str("error");
    uint32_t n = r.get<uint32_t>("tokens");
    if (n > bytes.size()) throw Error("step result: implausible token count");
    m.tokens.resize(n);
    for (auto& t : m.tokens) {
        t.token = r.get<int32_t>("token");
        t.logprob = r.get<float>("logprob");
        t.top = r.vec<step::TokenLogprob>("top");
    }
    m.logits = r.vec<float>("logits");
    m.hidden_width = r.get<int32_t>("hidden_width");
    m.hidden = r.vec<float>("hidden");
    if (m.hidden_width < 0 || (m.hidden_width == 0 ? !m.hidden.empty() : m.hidden.size() % static_cast<size_t>(m.hidden_width) != 0))
        throw Error("step result: hidden rows do not match their width");
    r.done();
    return m;
}

}  // namespace radiance::ipc
