// cases.h: rad-kbench's op cases: real model shapes, their parameters and operands, filled from a
// seed. A case knows nothing of any library; main.cpp runs it through libref and the others.
#pragma once
#include <radiance/rad_plugin.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace radiance::kbench {

struct Param {
    std::string name;
    int type = RAD_P_INT;
    int64_t i = 0;
    double f = 0;
    std::string s;
};

struct Operand {
    int dtype = RAD_F32;
    std::vector<int64_t> shape;  // empty: absent (an optional operand)
    bool output = false;         // compared after the launch (out or inout)
    std::vector<uint8_t> init;   // the bytes before the launch
};

struct Case {
    std::string op, label;  // label: the shape, for the report
    std::vector<Param> params;
    std::vector<Operand> operands;
    int64_t flops = 0, bytes = 0;  // for the speed column: work and the fewest bytes moved
};

// The cases of a shape family ("llama3.1-8b": Llama-3.1-8B's dimensions; "small": quick ones)
// for the ops `wanted` accepts (a few more may come; operands of others are never drawn: the 8B
// family's all took over 100 s). A seed gives the same bytes for the same `wanted`.
std::vector<Case> make_cases(const std::string& family, uint64_t seed, const std::function<bool(const std::string&)>& wanted);

}  // namespace radiance::kbench
