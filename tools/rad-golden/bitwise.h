// bitwise.h: rad-golden --bitwise, the batch-invariance probe (issue [21]). The same positions'
// logits computed every way a server computes them: a prompt alone, beside the fixture's other
// prompts, prefilled in chunks of 5 beside decode rows (mixed), and each decoded position
// recomputed by prefilling the prompt and the fed tokens in one step (a resumed request after a
// rank restart or a preemption). A deterministic library gives the same bits every way; the
// probe names the first position that differs and by how much.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "golden_file.h"
#include "runs.h"

namespace radiance::golden {

// One comparison's verdict: `ok` where every row is bitwise equal, and a line saying so or naming
// the differing rows (count, the first, the largest difference).
struct BitwiseVerdict {
    bool ok = true;
    std::string line;
};

// Runs the fixture's prompts every way and compares each with the prompt alone (teacher-forced:
// the fixture's decode tokens where it has them, else its greedy ones). `report` gets one verdict
// per prompt and way.
void bitwise_probe(const Stepper& st, const std::vector<Prompt>& prompts, const std::function<void(const BitwiseVerdict&)>& report);

}  // namespace radiance::golden
