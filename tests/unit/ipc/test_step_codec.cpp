// The step descriptor and result encodings: every field survives encode -> decode unchanged, and
// every malformed message (cut short, padded, wrong magic, impossible counts) is refused with an
// error naming what is wrong. The worker and the front end meet only through these bytes.
// Mutations run (2026-12-04): decode_step reading `positions` before `tokens`, or decode_result
// dropping `logprob`, fails "step_codec: every field survives"; Reader::done() accepting trailing
// bytes fails "step_codec: trailing bytes"; need() skipped for vectors (reading past the message)
// fails "step_codec: every cut is refused" (and trips ASan in the sanitizer pass). Skipping the
// mask's words in encoded_size fails "encoded_size is the encoding's size" (2026-12-07).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "radiance/ipc/step_codec.h"
#include "radiance/util/error.h"

using namespace radiance;
using namespace radiance::ipc;

namespace {

// A step whose every field holds a value distinct from its default and from its neighbours, so a
// swapped or skipped field shows.
StepMessage full_step() {
    StepMessage m;
    m.step_id = 0x0123456789abcdefULL;
    m.want_logits = true;
    m.comm_name = "/rad-comm-7";
    m.comm_generation = 42;
    auto& b = m.batch;
    b.tokens = {11, 12, 13, 14, 15};
    b.positions = {0, 1, 2, 7, 3};
    b.cu_seqlens = {0, 3, 4, 5};
    b.seq_ids = {5, 6, 9};
    b.out_ids = {2, 3, 4};
    b.block_tables = {1, 2, 3, 4, 5, 6};
    b.block_table_stride = 2;
    b.n_seq_decode = 2;
    SampleSpec a;
    a.params.temperature = 0.7f;
    a.params.top_p = 0.9f;
    a.params.min_p = 0.05f;
    a.params.top_k = 40;
    a.params.seed = 0xfeedfacecafebeefULL;
    a.draw = -3;
    a.params.presence_penalty = 0.25f;
    a.params.frequency_penalty = -0.5f;
    a.params.repetition_penalty = 1.1f;
    a.params.top_logprobs = 5;
    a.params.logit_bias = {{7, -100.0f}, {8, 2.5f}};
    a.seen_tokens = {11, 12, 13};
    a.gen_counts = {{13, 2}, {9, 1}};
    a.allowed = {0x80000001u, 0u, 0xdeadbeefu};  // structured output's mask: 96 ids
    SampleSpec g;                                // defaults, empty vectors
    g.params.temperature = 0.0f;                 // greedy
    g.params.seed = 0;                           // a sent row always carries its seed
    m.samples = {a, g};
    return m;
}

ResultMessage full_result() {
    ResultMessage r;
    r.step_id = 77;
    r.status = 3;
    r.error = "rank 1: out of memory";
    r.tokens = {{101, -0.25f, {{101, -0.25f}, {4, -1.5f}}}, {-1, 0.0f, {}}};
    r.logits = {1.0f, -2.0f, 3.5f, 0.0f};
    return r;
}

void require_same(const StepMessage& x, const StepMessage& y) {
    CHECK(x.step_id == y.step_id);
    CHECK(x.want_logits == y.want_logits);
    CHECK(x.comm_name == y.comm_name);
    CHECK(x.comm_generation == y.comm_generation);
    CHECK(x.batch.tokens == y.batch.tokens);
    CHECK(x.batch.positions == y.batch.positions);
    CHECK(x.batch.cu_seqlens == y.batch.cu_seqlens);
    CHECK(x.batch.seq_ids == y.batch.seq_ids);
    CHECK(x.batch.out_ids == y.batch.out_ids);
    CHECK(x.batch.block_tables == y.batch.block_tables);
    CHECK(x.batch.block_table_stride == y.batch.block_table_stride);
    CHECK(x.batch.n_seq_decode == y.batch.n_seq_decode);
    REQUIRE(x.samples.size() == y.samples.size());
    for (size_t i = 0; i < x.samples.size(); ++i) {
        const SampleSpec &a = x.samples[i], &b = y.samples[i];
        CHECK(a.params.temperature == b.params.temperature);
        CHECK(a.params.top_p == b.params.top_p);
        CHECK(a.params.min_p == b.params.min_p);
        CHECK(a.params.top_k == b.params.top_k);
        CHECK(a.params.seed == b.params.seed);
        CHECK(a.draw == b.draw);
        CHECK(a.params.presence_penalty == b.params.presence_penalty);
        CHECK(a.params.frequency_penalty == b.params.frequency_penalty);
        CHECK(a.params.repetition_penalty == b.params.repetition_penalty);
        CHECK(a.params.top_logprobs == b.params.top_logprobs);
        CHECK(a.params.logit_bias == b.params.logit_bias);
        CHECK(a.seen_tokens == b.seen_tokens);
        CHECK(a.gen_counts == b.gen_counts);
        CHECK(a.allowed == b.allowed);
    }
}

void require_same(const ResultMessage& x, const ResultMessage& y) {
    CHECK(x.step_id == y.step_id);
    CHECK(x.status == y.status);
    CHECK(x.error == y.error);
    REQUIRE(x.tokens.size() == y.tokens.size());
    for (size_t i = 0; i < x.tokens.size(); ++i) {
        CHECK(x.tokens[i].token == y.tokens[i].token);
        CHECK(x.tokens[i].logprob == y.tokens[i].logprob);
        CHECK(x.tokens[i].top == y.tokens[i].top);
    }
    CHECK(x.logits == y.logits);
}

// The error a decoder throws for these bytes ("" when it decodes).
template <typename F>
std::string error_of(F&& decode, const std::string& bytes) {
    try {
        decode(bytes);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("step_codec: every field survives encode then decode", "[step_codec]") {
    const StepMessage s = full_step();
    require_same(decode_step(encode(s)), s);
    const ResultMessage r = full_result();
    require_same(decode_result(encode(r)), r);

    StepMessage empty;  // defaults: no samples, no comm, empty batch
    require_same(decode_step(encode(empty)), empty);
    ResultMessage none;
    require_same(decode_result(encode(none)), none);
}

TEST_CASE("step_codec: encoded_size is the encoding's size", "[step_codec]") {
    StepMessage m = full_step();
    CHECK(encoded_size(m) == encode(m).size());
    m.samples[0].params.logit_bias.resize(1024, {1, 0.5f});
    m.samples[1].seen_tokens.resize(300, 4);
    m.samples[1].allowed.resize(4748, 0xffu);  // a 152k vocabulary's mask
    m.comm_name.clear();
    CHECK(encoded_size(m) == encode(m).size());
    CHECK(encoded_size(StepMessage{}) == encode(StepMessage{}).size());
    // One more row: what the scheduler adds for it.
    StepMessage r = full_step();
    const size_t before = encoded_size(r);
    r.batch.tokens.push_back(1);
    r.batch.positions.push_back(0);
    r.batch.cu_seqlens.push_back(6);
    r.batch.seq_ids.push_back(3);
    r.batch.out_ids.push_back(5);
    r.samples.push_back(SampleSpec{});
    CHECK(encode(r).size() == before + kStepTokenBytes + kStepRowBytes + encoded_size(SampleSpec{}));
}

TEST_CASE("step_codec: encoding is stable and starts with the magic", "[step_codec]") {
    const std::string a = encode(full_step()), b = encode(full_step());
    CHECK(a == b);
    uint32_t magic = 0;
    std::memcpy(&magic, a.data(), 4);
    CHECK(magic == kStepMagic);
    const std::string r = encode(full_result());
    std::memcpy(&magic, r.data(), 4);
    CHECK(magic == kResultMagic);
    // A step and a result are not mistaken for each other.
    CHECK(error_of(decode_result, a) == "step result: bad magic");
    CHECK(error_of(decode_step, r) == "step descriptor: bad magic");
}

TEST_CASE("step_codec: every cut is refused, naming the field it ran out in", "[step_codec]") {
    const std::string s = encode(full_step()), r = encode(full_result());
    for (size_t n = 0; n < s.size(); ++n) {
        const std::string e = error_of(decode_step, s.substr(0, n));
        INFO("step cut to " << n << " of " << s.size() << " bytes: " << e);
        REQUIRE(e.rfind("step descriptor: field '", 0) == 0);
        REQUIRE(e.find("' runs past the message") != std::string::npos);
    }
    for (size_t n = 0; n < r.size(); ++n) {
        const std::string e = error_of(decode_result, r.substr(0, n));
        INFO("result cut to " << n << " of " << r.size() << " bytes: " << e);
        REQUIRE(e.rfind("step result: field '", 0) == 0);
    }
    CHECK(error_of(decode_step, s.substr(0, 2)) == "step descriptor: field 'magic' runs past the message");
}

TEST_CASE("step_codec: trailing bytes are refused", "[step_codec]") {
    CHECK(error_of(decode_step, encode(full_step()) + "x") == "step descriptor: 1 trailing bytes");
    CHECK(error_of(decode_result, encode(full_result()) + "xyz") == "step result: 3 trailing bytes");
}

TEST_CASE("step_codec: impossible counts are refused before anything is allocated", "[step_codec]") {
    // A length prefix claiming 2^32-1 int32s in a short message: refused, not a 16 GB allocation.
    StepMessage m;
    std::string s = encode(m);
    const size_t tokens_at = 4 + 8 + 1 + 4 + 8;  // magic, step_id, want_logits, comm_name (empty), generation
    const uint32_t huge = 0xffffffffu;
    std::memcpy(&s[tokens_at], &huge, 4);
    CHECK(error_of(decode_step, s) == "step descriptor: field 'tokens' runs past the message");

    // More sample specs than out rows.
    StepMessage k = full_step();
    k.samples.push_back(SampleSpec{});
    k.samples.push_back(SampleSpec{});
    CHECK(error_of(decode_step, encode(k)) == "step descriptor: more sample specs than out rows");

    // A result claiming more token rows than it has bytes.
    ResultMessage r;
    std::string rb = encode(r);
    const size_t count_at = 4 + 8 + 4 + 4;  // magic, step_id, status, error (empty)
    std::memcpy(&rb[count_at], &huge, 4);
    CHECK(error_of(decode_result, rb) == "step result: implausible token count");
}
