// Writes valid step descriptors and results into a folder: the seed corpus of step_fuzz (a
// prefill, a decode of two sequences, a mixed step with sampling specs, a constrained row's mask, a result). Block tables
// fit the fuzzer's engine (8 blocks of KV cache).
#include <fstream>
#include <string>

#include "radiance/ipc/step_codec.h"

using namespace radiance::ipc;

namespace {

void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const std::string dir = argv[1];
    StepMessage prefill;
    prefill.step_id = 1;
    prefill.batch.tokens = {1, 20, 30, 40, 50, 60};
    prefill.batch.positions = {0, 1, 2, 3, 4, 5};
    prefill.batch.cu_seqlens = {0, 6};
    prefill.batch.seq_ids = {0};
    prefill.batch.out_ids = {5};
    prefill.batch.block_tables = {0, 1};
    prefill.batch.block_table_stride = 2;
    write(dir + "/prefill.step", encode(prefill));

    StepMessage decode;
    decode.step_id = 2;
    decode.batch.tokens = {70, 80};
    decode.batch.positions = {6, 3};
    decode.batch.cu_seqlens = {0, 1, 2};
    decode.batch.seq_ids = {0, 1};
    decode.batch.out_ids = {0, 1};
    decode.batch.block_tables = {0, 1, 2, 3};
    decode.batch.block_table_stride = 2;
    decode.batch.n_seq_decode = 2;
    write(dir + "/decode.step", encode(decode));

    StepMessage mixed = decode;
    mixed.step_id = 3;
    mixed.batch.tokens = {90, 5, 6, 7};
    mixed.batch.positions = {7, 0, 1, 2};
    mixed.batch.cu_seqlens = {0, 1, 4};
    mixed.batch.seq_ids = {0, 2};
    mixed.batch.out_ids = {0, 3};
    mixed.batch.block_tables = {0, 1, 4, 5};
    mixed.batch.n_seq_decode = 1;
    SampleSpec s;
    s.params.temperature = 0.8f;
    s.params.top_k = 5;
    s.params.seed = 9;
    s.params.logit_bias = {{3, 1.0f}};
    s.seen_tokens = {90};
    s.gen_counts = {{90, 1}};
    mixed.samples = {s, SampleSpec{}};
    write(dir + "/mixed.step", encode(mixed));

    // A constrained row: structured output's mask (a bit per id of the fixture's vocabulary).
    StepMessage masked = decode;
    masked.step_id = 4;
    SampleSpec m;
    m.params.temperature = 1.0f;
    m.params.seed = 3;
    m.allowed.assign(8, 0u);
    m.allowed[0] = 0x0000ff00u;
    masked.samples = {m, SampleSpec{}};
    write(dir + "/masked.step", encode(masked));

    ResultMessage r;
    r.step_id = 3;
    r.tokens = {{4, -0.5f, {{4, -0.5f}}}, {8, -1.0f, {}}};
    r.logits = {0.5f, 1.5f};
    write(dir + "/result.step", encode(r));
    return 0;
}
