// rad-avx-check --ref libref.so --avx libcpu.so [--filter TEXT] [--seed N]
//
// Checks libcpu against libref, op by op: random operands for every op of docs/OPS.md at model
// and odd shapes (cases_*.cpp); libref runs each case once, then every libcpu row that accepts
// the case runs it at every ISA level this machine supports (avx_isa_force) with the pool forced
// to 1 and to 4 threads (avx_par_force). Each gemm / gemm_q case of several rows also runs under
// the library's deterministic mode, whole and row by row, and the rows must agree bit for bit
// (batch_invariance.h). One line per run, then "N passed, M failed"; exit 0 only if all pass.
// Tolerances are explained in cases.h.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "batch_invariance.h"
#include "cases.h"
#include "radiance/core/registry.h"
#include "radiance/util/args.h"

using namespace avxcheck;

namespace {

const char* const kLevelNames[] = {"scalar", "avx2", "avx512", "avx512bf16"};
const int kThreads[] = {1, 4};

struct Tally {
    int passed = 0, failed = 0;
};

void report(Tally& t, bool ok, const std::string& what) {
    (ok ? t.passed : t.failed)++;
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    std::fflush(stdout);
}

// Both libraries must declare every op they share identically (the engine refuses otherwise).
void check_schemas(Tally& t, const KernelLib& ref, const KernelLib& cpu, const std::vector<Case>& cases) {
    std::vector<std::string> ops;
    for (auto& c : cases)
        if (std::find(ops.begin(), ops.end(), c.op) == ops.end()) ops.push_back(c.op);
    for (auto& op : ops) {
        const RadOpSchema *a = ref.schema(op), *b = cpu.schema(op);
        std::string diff = !a || !b ? "missing" : "";
        if (a && b) radiance::core::same_schema(*a, *b, &diff);
        report(t, diff.empty(), "schema " + op + (diff.empty() ? " identical" : ": " + diff));
    }
}

void run_case(Tally& t, const Case& c, const KernelLib& ref, const KernelLib& cpu, const std::vector<int>& levels) {
    const RadKernelInfo* ref_row = nullptr;
    Params ref_derived;
    for (auto* r : ref.rows(c.op))
        if (!ref_row && ref.accepts(r, c.params, &ref_derived)) ref_row = r;
    if (!ref_row) return report(t, false, c.label + " | libref has no row for it");
    const Outcome want = launch(c, ref, ref_row, ref_derived);
    if (want.rc != c.expect)
        return report(t, false,
                      c.label + " | libref returned " + std::to_string(want.rc) + ", the case expects " + std::to_string(c.expect));
    bool any_row = false;
    for (auto* row : cpu.rows(c.op)) {
        Params derived;
        if (!cpu.accepts(row, c.params, &derived)) continue;
        any_row = true;
        if (derived != ref_derived) {
            report(t, false, c.label + " | " + row->name + " derives other parameters than libref (block sizes differ?)");
            continue;
        }
        for (int level : levels)
            for (int threads : kThreads) {
                cpu.isa_force(level);
                cpu.par_force(threads);
                const Outcome got = launch(c, cpu, row, derived);
                char where[96];
                std::snprintf(where, sizeof where, " | %s %s t%d", row->name, kLevelNames[level], threads);
                if (got.rc != c.expect) {
                    report(t, false, c.label + where + " | status " + std::to_string(got.rc) + ", libref " + std::to_string(want.rc));
                    continue;
                }
                if (c.expect != RAD_OK) {
                    report(t, true, c.label + where + " | status " + std::to_string(got.rc) + " as libref");
                    continue;
                }
                const double e = max_rel_err(c, got, want);
                char err[64];
                std::snprintf(err, sizeof err, " | rel_err %.2e (tol %.0e)", e, c.tol);
                report(t, e <= c.tol, c.label + where + err);
                if (cpu.set_deterministic && batch_invariance_applies(c)) {
                    cpu.set_deterministic(1);
                    const std::string diff = check_batch_invariance(c, cpu, row, derived);
                    cpu.set_deterministic(0);
                    report(t, diff.empty(), c.label + where + " | deterministic: " + (diff.empty() ? "rows alone as in the batch" : diff));
                }
            }
    }
    if (!any_row) report(t, false, c.label + " | libcpu has no row for it");
}

}  // namespace

int main(int argc, char** argv) {
    std::string ref_path, cpu_path, filter;
    uint64_t seed = 20240601;
    try {
        radiance::util::Args args(argc, argv);
        while (args.next()) {
            if (args.is("--ref"))
                ref_path = args.value();
            else if (args.is("--avx"))
                cpu_path = args.value();
            else if (args.is("--filter"))
                filter = args.value();
            else if (args.is("--seed"))
                seed = static_cast<uint64_t>(args.integer(0, INT64_MAX));
            else {
                std::fprintf(stderr, "usage: rad-avx-check --ref libref.so --avx libcpu.so [--filter TEXT] [--seed N]\n");
                return 2;
            }
        }
    } catch (const radiance::util::ArgsError& e) {
        std::fprintf(stderr, "rad-avx-check: %s\n", e.what());
        return 2;
    }
    if (ref_path.empty() || cpu_path.empty()) {
        std::fprintf(stderr, "usage: rad-avx-check --ref libref.so --avx libcpu.so [--filter TEXT] [--seed N]\n");
        return 2;
    }
    try {
        KernelLib ref(ref_path), cpu(cpu_path);
        if (!cpu.isa_force || !cpu.par_force) {
            std::fprintf(stderr, "%s does not export avx_isa_force / avx_par_force\n", cpu_path.c_str());
            return 2;
        }
        std::vector<int> levels;
        for (int l = 0; l < 4; ++l)
            if (cpu.isa_force(l) == l) levels.push_back(l);
        cpu.isa_force(-1);
        std::string names;
        for (int l : levels) names += std::string(names.empty() ? "" : ", ") + kLevelNames[l];
        std::printf("libcpu %s; checking levels: %s; threads 1 and 4\n", cpu.isa_describe ? cpu.isa_describe() : "?", names.c_str());

        Gen g(seed);
        std::vector<Case> cases;
        rowwise_cases(g, cases);
        rope_cases(g, cases);
        attention_cases(g, cases);
        gemm_cases(g, cases);
        Tally t;
        check_schemas(t, ref, cpu, cases);
        const auto t0 = std::chrono::steady_clock::now();
        for (auto& c : cases)
            if (filter.empty() || c.label.find(filter) != std::string::npos) run_case(t, c, ref, cpu, levels);
        cpu.isa_force(-1);
        cpu.par_force(0);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("checked in %.1f s\n%d passed, %d failed\n", secs, t.passed, t.failed);
        return t.failed == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rad-avx-check: %s\n", e.what());
        return 2;
    }
}
