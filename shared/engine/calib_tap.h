// calib_tap.h: the GPTQ calibration tap (private to rad_engine). While a host plan runs, each
// projection's input rows x (operand 0 of a gemm-like op, M rows of K) are summed into X^T X in
// f64 for the weight it reads; once enough tokens have gone by, the sums are written to a folder
// the `gptq` quantiser reads (calib=DIR). The tap sees ops and operands only, never a model: what
// a weight's input is comes from the op that reads it.
//
// The folder's format: radiance/engine/gram_files.h.
// Weights read by consecutive ops from the same view of the same buffer (q, k and v; gate and up)
// share one file: the same rows, summed once.
#pragma once
#include <radiance/rad_types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "radiance/engine/gram_files.h"

namespace radiance::engine {

class CalibTap {
public:
    // dir is created if absent; `limit` tokens (summed over steps) before the tap writes and stops.
    CalibTap(std::string dir, int64_t limit);
    // Operand 0 of an op that reads weight `weight` (its stored name) as a projection's input.
    void record(const std::string& weight, const RadTensor& x);
    // Any other op: the next projection's input may have been rewritten.
    void other_op() { last_valid_ = false; }
    // A step of `tokens` tokens ran; writes once the limit is reached.
    void end_step(int64_t tokens);
    // Writes now (what has been summed so far), once; a no-op after.
    void finish();
    bool done() const { return done_; }
    bool any() const { return !accs_.empty(); }

private:
    struct Acc {
        int64_t K = 0, rows = 0;
        std::vector<double> g;  // the upper triangle summed, packed by rows (calib_tap.cpp); mirrored at write
    };
    struct View {
        const void* data = nullptr;
        int64_t rows = 0, K = 0, pitch = 0;
        bool operator==(const View&) const = default;
    };
    static void accumulate(Acc& a, const RadTensor& x);

    std::string dir_;
    int64_t limit_ = 0, tokens_ = 0;
    bool done_ = false;
    std::vector<Acc> accs_;
    std::map<std::string, size_t> acc_of_;  // weight -> its accumulator
    View last_{};
    size_t last_acc_ = 0;
    bool last_valid_ = false;
};

}  // namespace radiance::engine
